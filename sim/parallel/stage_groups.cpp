// The collective groups of stage 0's first ranks (stage_groups.h).
#include "sim/parallel/stage_groups.h"

#include <utility>

#include "sim/parallel/expert_dispatch.h"
#include "sim/parallel/expert_network_traffic.h"
#include "sim/parallel/expert_parallel.h"

namespace clustersim {

namespace s = schema;

double deduplicated_copies(const s::Transformer& t, bool consecutive_experts, int groups) {
  const int e = t.moe().num_experts(), k = t.moe().experts_per_token();
  return consecutive_experts ? consecutive_groups_per_token(e, k, groups)
                             : random_groups_per_token(e, k, groups);
}

StageGroups::StageGroups(const Topology& topology, const s::Parallelism& p,
                         const PipelinePlan& plan, const s::Transformer& model,
                         bool consecutive_experts) {
  const int tp = p.tensor_parallel(), cp = p.context_parallel();
  if (tp > 1) {
    const std::vector<int> tensor = topology.first_gpus(tp);
    for (int gpu : tensor) {
      if (topology.domain_of(gpu) != topology.domain_of(tensor.front())) {
        tensor_crossing_link_ = ring_binding_link(topology, tensor);
        break;
      }
    }
    tensor_ = std::make_unique<GroupCollectives>(topology, tensor);
  }
  if (cp > 1) {
    std::vector<int> ring;
    for (int c = 0; c < cp; ++c) ring.push_back(c * tp);
    context_ = std::make_unique<GroupCollectives>(topology, ring);
  }
  // Stage-local ranks (tp + TP (cp + CP dp)) on the GPUs of stage 0.
  auto gpus = [&](const std::vector<int>& locals) {
    std::vector<int> out;
    for (int local : locals) out.push_back(plan.gpu(local / (tp * cp), 0, local % (tp * cp)));
    return out;
  };
  const ExpertLayout& experts = plan.experts;
  if (experts.expert_parallel > 1) {
    // All the stage's expert-parallel groups dispatch at once (ranks etp + ETP x EP x edp
    // lead them).
    std::vector<std::vector<int>> all;  // the first timed, beside the others
    const int etp = experts.expert_tensor_parallel, ep = experts.expert_parallel;
    for (int edp = 0; edp < experts.expert_data_parallel(); ++edp) {
      for (int e = 0; e < etp; ++e) {
        all.push_back(gpus(expert_parallel_group(experts, e + etp * ep * edp)));
      }
    }
    const bool flex = p.expert_dispatcher() == s::EXPERT_NODE_DEDUPLICATED;
    if (flex) deduplicate(topology, all, model, consecutive_experts);
    expert_in_one_domain_ = true;
    for (int gpu : all.front()) {
      expert_in_one_domain_ &= topology.domain_of(gpu) == topology.domain_of(all.front()[0]);
    }
    expert_ = first_beside_others(topology, std::move(all), flex);
  }
  if (experts.expert_tensor_parallel > 1) {
    std::vector<int> first(experts.expert_tensor_parallel);
    for (int e = 0; e < experts.expert_tensor_parallel; ++e) first[e] = e;
    expert_tensor_ = std::make_unique<GroupCollectives>(topology, gpus(first));
  }
  groups_ = {tensor_.get(),        context_.get(),     p.context_parallel_comm(), expert_.get(),
             expert_tensor_.get(), expert_rail_.get(), expert_domain_.get(),      rail_share_};
}

void StageGroups::deduplicate(const Topology& topology, const std::vector<std::vector<int>>& all,
                              const s::Transformer& t, bool consecutive_experts) {
  const int experts = t.moe().num_experts(), ranks = static_cast<int>(all.front().size());
  std::vector<std::vector<int>> rails, domains;  // of every group, the first group's first
  for (const std::vector<int>& group : all) {
    const std::vector<std::vector<int>> parts = domain_parts(topology, group);
    const std::vector<std::vector<int>> group_rails = domain_rails(parts);
    if (group_rails.empty() || experts % parts.size() != 0) return;
    rails.insert(rails.end(), group_rails.begin(), group_rails.end());
    domains.insert(domains.end(), parts.begin(), parts.end());
  }
  rail_shares_.assign(ranks + 1, 0);
  for (int d = 2; d <= ranks; ++d) {
    if (experts % d != 0) continue;
    rail_shares_[d] = deduplicated_copies(t, consecutive_experts, d) /
                      deduplicated_copies(t, consecutive_experts, ranks);
  }
  rail_share_ = rail_shares_[rails.front().size()];
  expert_rail_ = first_beside_others(topology, std::move(rails), true);
  expert_domain_ = first_beside_others(topology, std::move(domains), true);
}

std::unique_ptr<GroupCollectives> StageGroups::first_beside_others(
    const Topology& topology, std::vector<std::vector<int>> groups, bool flex) {
  std::vector<int> first = std::move(groups.front());
  groups.erase(groups.begin());
  return std::make_unique<GroupCollectives>(topology, std::move(first), std::move(groups), flex);
}

}  // namespace clustersim
