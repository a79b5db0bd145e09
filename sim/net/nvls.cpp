// NVLink SHARP (NVLS) all-reduce inside one NVLink domain: the NVSwitches reduce. Each GPU sends
// its whole buffer S into the switch and its reduced shard S/n back for multicast, and receives
// S/n + S, so every GPU link carries S(1 + 1/n) each way at the in-switch-reduction efficiency;
// and every GPU beyond the first adds one operand to each reduced element, a cost of S / R per
// extra GPU (R: the link class's in_switch_reduction_operand_gb_per_s). On an idle domain
//   time = S (1 + 1/n) / (line rate x efficiency) + (n - 1) S / R.
// NVLS runs NCCL's Simple protocol only; its latency is taken equal to a ring's with Simple steps
// (no separate measurement).
#include "sim/net/collective_algorithms.h"

namespace clustersim {

std::vector<std::pair<int, int>> nvls_edges(const std::vector<int>& gpus) {
  std::vector<std::pair<int, int>> edges;
  edges.reserve(gpus.size());
  for (size_t i = 0; i < gpus.size(); ++i) edges.emplace_back(gpus[i], gpus[(i + 1) % gpus.size()]);
  return edges;
}

void start_nvls(Network* network, const Collective& c, std::function<void()> done) {
  const Topology& t = network->topology();
  const auto n = static_cast<double>(c.gpus.size());
  std::vector<MaxMinFair::Use> uses;
  const std::vector<std::pair<int, int>> ring_edges = nvls_edges(c.gpus);
  double link_capacity = 0;
  for (const auto& [gpu, next] : ring_edges) {
    // route(gpu, next) is gpu -> NVSwitch -> next: its first link is gpu's uplink and the
    // downlink of `next`, which is covered when `next` takes its turn.
    const std::vector<int32_t>& route = t.route(gpu, next);
    uses.push_back({route[0], 1});
    uses.push_back({route[1], 1});
    link_capacity = t.links()[route[0]].capacity_bytes_per_s;
    network->count_bytes(gpu, c.bytes * (1 + 1 / n), c.bytes * (1 + 1 / n));
  }
  // The links carry ring-efficiency capacity; scale the bytes so that the time is the formula's.
  double seconds_per_byte = (1 + 1 / n) / t.nvls_capacity();
  if (t.nvls_operand_bytes_per_s() > 0) seconds_per_byte += (n - 1) / t.nvls_operand_bytes_per_s();
  const double bytes = c.bytes * seconds_per_byte * link_capacity;
  const Picoseconds latency(2 * (static_cast<int64_t>(n) - 1) *
                            slowest_step_latencies(ring_edges, t).simple.count());
  network->start_on_links(uses, bytes, latency, std::move(done));
}

}  // namespace clustersim
