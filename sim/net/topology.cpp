// Graph storage and shortest-path routing with deterministic ECMP.
#include "sim/net/topology.h"

#include <algorithm>
#include <limits>
#include <queue>

#include "sim/util/check.h"

namespace clustersim {
namespace {

// A fixed mix of the two endpoints (splitmix64 finalizer): the same pair always takes the same
// of several equal-cost routes, and different pairs spread over them.
uint64_t pair_hash(uint64_t a, uint64_t b) {
  uint64_t x = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull);
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

int32_t Topology::add_vertex(VertexInfo info) {
  return static_cast<int32_t>(boost::add_vertex(info, graph_));
}

void Topology::add_link(int32_t a, int32_t b, double capacity_bytes_per_s,
                        Picoseconds a_to_b_latency, Picoseconds b_to_a_latency, LinkKind kind) {
  CLUSTERSIM_CHECK(capacity_bytes_per_s > 0, "a link needs a positive capacity");
  for (auto [from, to, latency] : {std::tuple{a, b, a_to_b_latency}, std::tuple{b, a, b_to_a_latency}}) {
    const auto id = static_cast<int32_t>(links_.size());
    links_.push_back({from, to, capacity_bytes_per_s, latency, kind});
    boost::add_edge(from, to, id, graph_);
  }
}

int32_t Topology::link_cost(int32_t link) const {
  // A PCIe hop costs two: between GPUs, NCCL prefers NVLink to a PCIe switch of the same length.
  return links_[link].kind == LinkKind::kPcie ? 2 : 1;
}

std::vector<int32_t> Topology::shortest_path(int32_t from, int32_t to) const {
  // Dijkstra from `to` (links are symmetric, so cost to `to` equals cost from it), stopping once
  // `from` is settled: every vertex on a cheapest route from `from` is settled by then.
  const size_t n = boost::num_vertices(graph_);
  std::vector<int32_t> cost(n, std::numeric_limits<int32_t>::max());
  using Item = std::pair<int32_t, int32_t>;  // (cost, vertex): ties settle by vertex number
  std::priority_queue<Item, std::vector<Item>, std::greater<>> frontier;
  cost[to] = 0;
  frontier.push({0, to});
  while (!frontier.empty()) {
    const auto [c, v] = frontier.top();
    frontier.pop();
    if (c != cost[v]) continue;
    if (v == from) break;
    for (auto [e, end] = boost::out_edges(v, graph_); e != end; ++e) {
      const auto w = static_cast<int32_t>(boost::target(*e, graph_));
      const int32_t through = c + link_cost(graph_[*e]);
      if (through < cost[w]) {
        cost[w] = through;
        frontier.push({through, w});
      }
    }
  }
  CLUSTERSIM_CHECK(cost[from] != std::numeric_limits<int32_t>::max(), "the topology is not connected");
  std::vector<int32_t> path;
  const uint64_t hash = pair_hash(static_cast<uint64_t>(from), static_cast<uint64_t>(to));
  for (int32_t v = from; v != to;) {
    std::vector<int32_t> onward;  // links on a cheapest route, in edge order
    for (auto [e, end] = boost::out_edges(v, graph_); e != end; ++e) {
      const auto w = static_cast<int32_t>(boost::target(*e, graph_));
      if (cost[w] != std::numeric_limits<int32_t>::max() &&
          cost[w] + link_cost(graph_[*e]) == cost[v]) {
        onward.push_back(graph_[*e]);
      }
    }
    const int32_t link = onward[hash % onward.size()];
    path.push_back(link);
    v = links_[link].to;
  }
  return path;
}

const std::vector<int32_t>& Topology::route(int from, int to) const {
  const uint64_t key = (static_cast<uint64_t>(from) << 32) | static_cast<uint32_t>(to);
  auto it = routes_.find(key);
  if (it == routes_.end()) {
    it = routes_.emplace(key, shortest_path(gpu_vertex(from), gpu_vertex(to))).first;
  }
  return it->second;
}

Picoseconds Topology::route_latency(int from, int to) const {
  Picoseconds total;
  for (int32_t link : route(from, to)) total += links_[link].latency;
  return total;
}

LinkKind Topology::route_kind(int from, int to) const {
  LinkKind kind = LinkKind::kPcie;
  for (int32_t link : route(from, to)) {
    if (links_[link].kind == LinkKind::kNetwork) return LinkKind::kNetwork;
    if (links_[link].kind == LinkKind::kNvlink) kind = LinkKind::kNvlink;
  }
  return kind;
}

}  // namespace clustersim
