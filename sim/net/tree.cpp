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

std::vector<TreeHalf> double_binary_trees(const std::vector<int>& gpus, const Topology& t) {
  const auto domains = gpus_by_domain(gpus, t);
  const int count = static_cast<int>(domains.size());
  size_t per_domain = domains[0].size();
  for (const auto& domain : domains) per_domain = std::min(per_domain, domain.size());
  // Like the ring, one channel per GPU of a domain, so that the leaders (and their NICs) differ.
  const auto channels = static_cast<int>(per_domain);
  std::vector<TreeHalf> out;
  out.reserve(2 * channels);
  for (int channel = 0; channel < channels; ++channel) {
    for (int tree = 0; tree < 2; ++tree) {
      // Tree 0 is a heap over domain positions; tree 1 the same over the reversed order.
      auto domain_at = [&](int position) { return tree == 0 ? position : count - 1 - position; };
      std::vector<int> leader(count);
      TreeHalf& half = out.emplace_back();
      for (int k = 0; k < count; ++k) {
        const auto& domain = domains[k];
        const size_t first = (channel + tree * domain.size() / 2) % domain.size();
        leader[k] = domain[first];
        for (size_t i = 0; i + 1 < domain.size(); ++i) {
          const int a = domain[(first + i) % domain.size()];
          const int b = domain[(first + i + 1) % domain.size()];
          half.chain_edges.emplace_back(a, b);
          half.chain_edges.emplace_back(b, a);
        }
      }
      for (int position = 1; position < count; ++position) {
        const int child = leader[domain_at(position)];
        const int parent = leader[domain_at((position - 1) / 2)];
        half.tree_edges.emplace_back(child, parent);
        half.tree_edges.emplace_back(parent, child);
      }
      half.depth = static_cast<int64_t>(std::floor(std::log2(count)));
      half.chain_length = static_cast<int64_t>(domains[0].size()) - 1;
    }
  }
  return out;
}

std::vector<std::pair<int, int>> TreeHalf::edges() const {
  std::vector<std::pair<int, int>> all = chain_edges;
  all.insert(all.end(), tree_edges.begin(), tree_edges.end());
  return all;
}

void start_tree(Network* network, const Collective& c, std::function<void()> done) {
  const Topology& t = network->topology();
  const std::vector<TreeHalf> halves = double_binary_trees(c.gpus, t);
  auto tree_done = after_all(static_cast<int>(halves.size()), std::move(done));
  for (const TreeHalf& half : halves) {
    start_with_protocol(network, half.edges(), c.bytes / static_cast<double>(halves.size()),
                        tree_latencies(half.tree_edges, half.chain_edges, half.depth,
                                       half.chain_length, t),
                        tree_done, t.tree_bandwidth_fraction());
  }
}

}  // namespace clustersim
