// Double binary tree all-reduce (NCCL's tree): inside each NVLink domain (a node, or the trays of
// an NVL72 rack) a chain from a leader GPU; across domains two binary trees over them, each
// carrying half of the buffer, built so that a domain that is inner in one tree is a leaf in the
// other. As with the ring, the buffer is split over one channel per GPU of a domain, each with its
// own leaders and so its own NICs. Reduction flows up and
// the result down at the same time (pipelined), so each tree is one coupled transfer moving S/2
// over every edge in both directions; its latency is 2 x (tree depth x network step + chain length
// x NVLink step). NCCL's tree achieves less than this traffic allows: the whole tree runs at the
// network link class's tree_bandwidth_fraction (its tuner's correction, links.textproto).
#include <algorithm>
#include <cmath>

#include "sim/net/collective_algorithms.h"

namespace clustersim {
namespace {

// 2 x (depth x the slowest tree step + chain length x the slowest chain step).
ProtocolLatencies tree_latencies(const std::vector<std::pair<int, int>>& tree_edges,
                                 const std::vector<std::pair<int, int>>& chain_edges, int64_t depth,
                                 int64_t chain_length, const Topology& t) {
  const ProtocolLatencies tree = slowest_step_latencies(tree_edges, t);
  const ProtocolLatencies chain =
      chain_edges.empty() ? ProtocolLatencies{} : slowest_step_latencies(chain_edges, t);
  auto total = [&](Picoseconds up, Picoseconds along) {
    return Picoseconds(2 * depth * up.count() + 2 * chain_length * along.count());
  };
  return {total(tree.low, chain.low), total(tree.simple, chain.simple)};
}

}  // namespace

void start_tree(Network* network, const Collective& c, std::function<void()> done) {
  const Topology& t = network->topology();
  const auto domains = gpus_by_domain(c.gpus, t);
  const int count = static_cast<int>(domains.size());
  size_t per_domain = domains[0].size();
  for (const auto& domain : domains) per_domain = std::min(per_domain, domain.size());
  // Like the ring, one channel per GPU of a domain, so that the leaders (and their NICs) differ.
  const auto channels = static_cast<int>(per_domain);
  auto tree_done = after_all(2 * channels, std::move(done));
  for (int channel = 0; channel < channels; ++channel) {
    for (int tree = 0; tree < 2; ++tree) {
      // Tree 0 is a heap over domain positions; tree 1 the same over the reversed order.
      auto domain_at = [&](int position) { return tree == 0 ? position : count - 1 - position; };
      std::vector<int> leader(count);
      std::vector<std::pair<int, int>> chain_edges, tree_edges;
      for (int k = 0; k < count; ++k) {
        const auto& gpus = domains[k];
        const size_t first = (channel + tree * gpus.size() / 2) % gpus.size();
        leader[k] = gpus[first];
        for (size_t i = 0; i + 1 < gpus.size(); ++i) {
          const int a = gpus[(first + i) % gpus.size()], b = gpus[(first + i + 1) % gpus.size()];
          chain_edges.emplace_back(a, b);
          chain_edges.emplace_back(b, a);
        }
      }
      for (int position = 1; position < count; ++position) {
        const int child = leader[domain_at(position)];
        const int parent = leader[domain_at((position - 1) / 2)];
        tree_edges.emplace_back(child, parent);
        tree_edges.emplace_back(parent, child);
      }
      const auto depth = static_cast<int64_t>(std::floor(std::log2(count)));
      const auto chain_length = static_cast<int64_t>(domains[0].size()) - 1;
      std::vector<std::pair<int, int>> edges = chain_edges;
      edges.insert(edges.end(), tree_edges.begin(), tree_edges.end());
      start_with_protocol(network, edges, c.bytes / (2.0 * channels),
                          tree_latencies(tree_edges, chain_edges, depth, chain_length, t),
                          tree_done, t.tree_bandwidth_fraction());
    }
  }
}

}  // namespace clustersim
