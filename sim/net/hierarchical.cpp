// Hierarchical all-reduce: a reduce-scatter ring inside every NVLink domain (a node, or the trays
// of an NVL72 rack), then an all-reduce ring across domains among the GPUs of equal local rank,
// each on 1/g of the buffer (one NIC each on rail-optimized nodes), then an all-gather ring inside
// every domain. Phases run one after the other; within a phase, all domains or all rails run at
// once and share the network.
#include <memory>

#include "sim/net/collective_algorithms.h"

namespace clustersim {
namespace {

// Runs one ring per group concurrently, then `next`.
void run_rings(Network* network, CollectiveOp op, const std::vector<std::vector<int>>& groups,
               double bytes, std::function<void()> next) {
  auto all = after_all(static_cast<int>(groups.size()), std::move(next));
  for (const auto& group : groups) {
    start_ring(network, {op, group, bytes, CollectiveAlgorithm::kRing}, all);
  }
}

}  // namespace

void start_hierarchical(Network* network, const Collective& c, std::function<void()> done) {
  const auto domains = gpus_by_domain(c.gpus, network->topology());
  const size_t per_domain = domains[0].size();
  std::vector<std::vector<int>> rails(per_domain);
  for (const auto& domain : domains) {
    for (size_t i = 0; i < per_domain; ++i) rails[i].push_back(domain[i]);
  }
  // collective_problem guarantees two or more domains with as many GPUs each, two or more each.
  const double bytes = c.bytes;
  auto gather = [network, domains, bytes, done = std::move(done)] {
    run_rings(network, CollectiveOp::kAllGather, domains, bytes, done);
  };
  auto across = [network, rails, bytes, per_domain, gather = std::move(gather)] {
    run_rings(network, CollectiveOp::kAllReduce, rails, bytes / static_cast<double>(per_domain),
              gather);
  };
  run_rings(network, CollectiveOp::kReduceScatter, domains, bytes, std::move(across));
}

}  // namespace clustersim
