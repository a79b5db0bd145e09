// The largest part of a step, the links parts share and the scale-out crossings weighed against
// the others.
#include "sim/parallel/step_limit.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <utility>
#include <vector>

namespace clustersim {
namespace {

// The link of a crossing's route that binds its traffic (Network::prepared_binding_link), where
// an NVLink is named `nvlink`: the expert all-to-alls' way to the NIC's GPU, the tensor-parallel
// ring's hops inside each domain.
std::string binding_link_name(LinkKind kind, const char* nvlink) {
  switch (kind) {
    case LinkKind::kNetwork:
      return "scale-out network";
    case LinkKind::kPcie:
      return "PCIe between GPU and NIC";
    case LinkKind::kNvlink:
      return nvlink;
  }
  return "scale-out network";
}

constexpr char kDeepSpeedFetchRate[] = "DeepSpeed 2021's ZeRO-3 fetch rate";

// A link's name as a buyer upgrades it.
const char* link_name(LinkKind kind) {
  switch (kind) {
    case LinkKind::kNvlink:
      return "NVLink";
    case LinkKind::kPcie:
      return "PCIe";
    case LinkKind::kNetwork:
      return "scale-out network";
  }
  return "scale-out network";
}

// A communicating part: its time as weighed, the link it binds on, its words.
struct LinkedPart {
  double seconds;
  std::optional<LinkKind> link;
  const char* prefix;  // "tensor-": joined as "tensor- and data-parallel communication"
  const char* name;    // its name as the largest part
};

// The link that parts sharing it make the step's largest resource: two or more parts on one kind
// of link together longer than `largest_s`, the largest part, which is none of them (a part
// that is the largest alone keeps its name, which already leads to its link); none where no link
// does. Named "PCIe shared by tensor- and data-parallel communication".
std::optional<std::string> shared_link(const std::vector<LinkedPart>& parts, double largest_s,
                                       const std::string& largest) {
  std::optional<std::string> named;
  double most = largest_s;
  for (LinkKind kind : {LinkKind::kNvlink, LinkKind::kPcie, LinkKind::kNetwork}) {
    double seconds = 0;
    std::vector<const char*> prefixes;
    bool holds_largest = false;
    for (const LinkedPart& part : parts) {
      if (part.link != kind || part.seconds <= 0) continue;
      seconds += part.seconds;
      prefixes.push_back(part.prefix);
      holds_largest |= largest == part.name;
    }
    if (prefixes.size() < 2 || holds_largest || seconds <= most) continue;
    most = seconds;
    std::string words = prefixes.front();
    for (size_t i = 1; i < prefixes.size(); ++i) {
      words += (i + 1 == prefixes.size() ? " and " : ", ") + std::string(prefixes[i]);
    }
    named = std::string(link_name(kind)) + " shared by " + words + "parallel communication";
  }
  return named;
}

}  // namespace

std::string limiting_part(const StepResult& r) {
  // The kernels' slowdown beside the overlapped collectives goes with the collectives, and so
  // does the task work done beside collectives that outlast the last backward: its share of the
  // kernels and of the tensor- and context-parallel collectives inside the tasks.
  const double beside = r.work_beside_collectives_share;
  const double kernels = r.compute_s - r.collective_stretch_s;
  // The waits DeepSpeed 2021's fetch rate ended are that rate's, not a link's.
  const double data_comm = r.data_comm_s - r.fetch_paced_wait_s + r.collective_stretch_s +
                           beside * (kernels + r.tensor_comm_s + r.context_comm_s);
  const double tensor_comm = (1 - beside) * r.tensor_comm_s;
  const double context_comm = (1 - beside) * r.context_comm_s;
  const std::pair<double, const char*> parts[] = {
      {(1 - beside) * kernels, "compute"},
      {tensor_comm, "tensor-parallel communication"},
      {context_comm, "context-parallel communication"},
      {r.expert_comm_s, "expert-parallel all-to-all"},
      {r.bubble_s, "pipeline bubble"},
      {data_comm, "data-parallel communication"},
      {r.fetch_paced_wait_s, kDeepSpeedFetchRate},
      {r.optimizer_s, "optimizer"}};
  const auto largest_part = std::max_element(std::begin(parts), std::end(parts));
  const std::string largest = largest_part->second;
  // Parts that bind on one kind of link, weighed together: a faster link shortens them all.
  const std::optional<std::string> shared = shared_link(
      {{tensor_comm, r.part_links.tensor, "tensor-", "tensor-parallel communication"},
       {context_comm, r.part_links.context, "context-", "context-parallel communication"},
       {data_comm, r.part_links.data, "data-", "data-parallel communication"}},
      largest_part->first, largest);
  if (shared) return *shared;
  // The expert all-to-alls' scale-out time, and the other parts beside the compute with it taken
  // out of the one holding it.
  const double scale_out = r.expert_scale_out_most_s;
  const double waited = std::max(0.0, scale_out - r.expert_scale_out_s);
  const double expert_rest = r.expert_comm_s - r.expert_scale_out_s;
  const double bubble_rest = std::max(0.0, r.bubble_s - waited);
  const double others =
      std::max({context_comm, data_comm, r.fetch_paced_wait_s, r.optimizer_s});
  std::string crossing;
  if (scale_out > 0 &&
      scale_out >= std::max({others, tensor_comm, expert_rest, bubble_rest})) {
    crossing = "expert-parallel all-to-all across NVLink domains (" +
               binding_link_name(r.expert_scale_out_link, "NVLink to the NIC's GPU") + ")";
  }
  if (r.tensor_crossing_link && tensor_comm > 0 &&
      tensor_comm >= std::max({others, r.expert_comm_s, r.bubble_s, scale_out})) {
    crossing = "tensor-parallel communication across NVLink domains (" +
               binding_link_name(*r.tensor_crossing_link, "NVLink inside each domain") + ")";
  }
  if (crossing.empty()) return largest;
  return largest == "compute" ? "compute, then " + crossing : crossing;
}

}  // namespace clustersim
