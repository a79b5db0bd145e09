// Hierarchical all-reduce: a reduce-scatter ring inside every node (NVLink), then an all-reduce
// ring across nodes among the GPUs of equal local rank, each on 1/g of the buffer (one NIC each
// on rail-optimized nodes), then an all-gather ring inside every node. Phases run one after the
// other; within a phase, all nodes or all rails run at once and share the network.
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
  const auto nodes = gpus_by_node(c.gpus, network->topology());
  const size_t per_node = nodes[0].size();
  std::vector<std::vector<int>> rails(per_node);
  for (const auto& node : nodes) {
    for (size_t i = 0; i < per_node; ++i) rails[i].push_back(node[i]);
  }
  // collective_problem guarantees two or more nodes with as many GPUs each, two or more per node.
  const double bytes = c.bytes;
  auto gather = [network, nodes, bytes, done = std::move(done)] {
    run_rings(network, CollectiveOp::kAllGather, nodes, bytes, done);
  };
  auto across = [network, rails, bytes, per_node, gather = std::move(gather)] {
    run_rings(network, CollectiveOp::kAllReduce, rails, bytes / static_cast<double>(per_node),
              gather);
  };
  run_rings(network, CollectiveOp::kReduceScatter, nodes, bytes, std::move(across));
}

}  // namespace clustersim
