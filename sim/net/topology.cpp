// Graph storage and shortest-path routing with deterministic ECMP.
#include "sim/net/topology.h"

#include <algorithm>
#include <numeric>
#include <queue>

#include "sim/net/idle_collective_times.h"
#include "sim/net/rank_symmetry.h"
#include "sim/net/replicated_routes.h"
#include "sim/net/ring_channels.h"
#include "sim/util/check.h"
#include "sim/util/splitmix64.h"

namespace clustersim {
namespace {

// A fixed mix of the two endpoints (SplitMix64's finalizer): the same pair always takes the same
// of several equal-cost routes, and different pairs spread over them.
uint64_t pair_hash(uint64_t a, uint64_t b) {
  return splitmix64_finalize(a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull));
}

}  // namespace

Topology::Topology(int nodes, int gpus_per_node, int nodes_per_domain)
    : nodes_(nodes), gpus_per_node_(gpus_per_node), nodes_per_domain_(nodes_per_domain) {
  CLUSTERSIM_CHECK(nodes_per_domain >= 1, "an NVLink domain needs at least one node");
}
Topology::~Topology() = default;

const RankSymmetry& Topology::rank_symmetry() const {
  std::call_once(rank_symmetry_found_,
                 [this] { rank_symmetry_ = std::make_unique<RankSymmetry>(*this); });
  return *rank_symmetry_;
}

IdleCollectiveTimes& Topology::idle_collective_times() const {
  if (!idle_collective_times_) idle_collective_times_ = std::make_unique<IdleCollectiveTimes>();
  return *idle_collective_times_;
}

RingChannelCache& Topology::ring_channels() const {
  if (!ring_channels_) ring_channels_ = std::make_unique<RingChannelCache>();
  return *ring_channels_;
}

ReplicatedRoutes& Topology::replicated_routes() const {
  if (!replicated_routes_) replicated_routes_ = std::make_unique<ReplicatedRoutes>();
  return *replicated_routes_;
}

void Topology::forget_kept_lookups() {
  idle_collective_times_.reset();
  ring_channels_.reset();
  replicated_routes_.reset();
}

int Topology::domain_gpu_count(int domain) const {
  const int first_node = domain * nodes_per_domain_;
  return (std::min(nodes_, first_node + nodes_per_domain_) - first_node) * gpus_per_node_;
}

int32_t Topology::domain_of_vertex(int32_t vertex) const {
  const int32_t node = graph_[vertex].node;
  return node < 0 ? -1 : domain_of_node(node);
}

int32_t Topology::add_vertex(VertexInfo info) {
  forget_kept_lookups();
  const auto v = static_cast<int32_t>(boost::add_vertex(info, graph_));
  local_index_.push_back(-1);
  if (info.node >= 0) {
    const auto domain = static_cast<size_t>(domain_of_node(info.node));
    if (vertices_of_domain_.size() <= domain) vertices_of_domain_.resize(domain + 1);
    local_index_[v] = static_cast<int32_t>(vertices_of_domain_[domain].size());
    vertices_of_domain_[domain].push_back(v);
  }
  if (info.kind == VertexKind::kNic) {
    if (nics_of_node_.size() <= static_cast<size_t>(info.node)) nics_of_node_.resize(info.node + 1);
    nics_of_node_[info.node].push_back(v);
  }
  return v;
}

int32_t Topology::add_link(int32_t a, int32_t b, double capacity_bytes_per_s,
                           Picoseconds a_to_b_latency, Picoseconds b_to_a_latency, LinkKind kind,
                           double nccl_gb_per_s) {
  CLUSTERSIM_CHECK(capacity_bytes_per_s > 0, "a link needs a positive capacity");
  forget_kept_lookups();
  const auto first = static_cast<int32_t>(links_.size());
  for (auto [from, to, latency] :
       {std::tuple{a, b, a_to_b_latency}, std::tuple{b, a, b_to_a_latency}}) {
    const auto id = static_cast<int32_t>(links_.size());
    links_.push_back({from, to, capacity_bytes_per_s, latency, kind, nccl_gb_per_s});
    link_capacities_.push_back(capacity_bytes_per_s);
    boost::add_edge(from, to, id, graph_);
  }
  return first;
}

void Topology::set_nic_uplink(int32_t nic, int32_t nic_to_leaf) {
  nic_uplink_[nic] = nic_to_leaf;
  forget_kept_lookups();
}
void Topology::set_leaf_uplink(int32_t leaf, int32_t leaf_to_spine) {
  leaf_uplink_[leaf] = leaf_to_spine;
  forget_kept_lookups();
}

int32_t Topology::link_cost(int32_t link) const {
  // A PCIe hop costs two: between GPUs, NCCL prefers NVLink to a PCIe switch of the same length.
  return links_[link].kind == LinkKind::kPcie ? 2 : 1;
}

const Topology::LocalTree& Topology::local_tree(int32_t source) const {
  auto it = local_trees_.find(source);
  if (it != local_trees_.end()) return it->second;
  // Dijkstra over the vertices of the source's NVLink domain only.
  const int32_t domain = domain_of_vertex(source);
  const size_t n = vertices_of_domain_[domain].size();
  LocalTree tree{std::vector<int32_t>(n, -1), std::vector<int32_t>(n, -1)};
  using Item = std::pair<int32_t, int32_t>;  // (cost, vertex): ties settle by vertex number
  std::priority_queue<Item, std::vector<Item>, std::greater<>> frontier;
  tree.cost[local_index_[source]] = 0;
  frontier.push({0, source});
  while (!frontier.empty()) {
    const auto [c, v] = frontier.top();
    frontier.pop();
    if (c != tree.cost[local_index_[v]]) continue;
    for (auto [e, end] = boost::out_edges(v, graph_); e != end; ++e) {
      const auto w = static_cast<int32_t>(boost::target(*e, graph_));
      if (domain_of_vertex(w) != domain) continue;
      const int32_t through = c + link_cost(graph_[*e]);
      int32_t& cost = tree.cost[local_index_[w]];
      if (cost < 0 || through < cost) {
        cost = through;
        tree.parent_link[local_index_[w]] = graph_[*e];
        frontier.push({through, w});
      }
    }
  }
  return local_trees_.emplace(source, std::move(tree)).first->second;
}

std::vector<int32_t> Topology::local_path(const LocalTree& tree, int32_t target) const {
  std::vector<int32_t> path;
  for (int32_t v = target; tree.parent_link[local_index_[v]] >= 0;
       v = links_[tree.parent_link[local_index_[v]]].from) {
    path.push_back(tree.parent_link[local_index_[v]]);
  }
  std::reverse(path.begin(), path.end());
  return path;
}

std::vector<int32_t> Topology::fabric_path(int32_t nic_a, int32_t nic_b) const {
  const int32_t up_a = nic_uplink_.at(nic_a), up_b = nic_uplink_.at(nic_b);
  const int32_t leaf_a = links_[up_a].to, leaf_b = links_[up_b].to;
  if (leaf_a == leaf_b) return {up_a, up_b + 1};
  const int32_t spine_up = leaf_uplink_.at(leaf_a), spine_down = leaf_uplink_.at(leaf_b) + 1;
  return {up_a, spine_up, spine_down, up_b + 1};
}

std::vector<int32_t> Topology::route_between_domains(int from, int to) const {
  const LocalTree& source = local_tree(gpu_vertex(from));
  // Among equally cheap routes, those that reach the destination through its own closest NIC
  // and stay on that NIC's rail (one leaf): NCCL's PXN (2.12+) moves data over NVLink to the GPU
  // on the destination's rail and sends from there, so every rail carries its own share.
  struct Choice {
    int32_t cost, arrival, fabric, nic_a, nic_b;
  };
  std::vector<Choice> cheapest;
  auto better = [](const Choice& x, const Choice& y) {
    if (x.cost != y.cost) return x.cost < y.cost;
    return x.arrival != y.arrival ? x.arrival < y.arrival : x.fabric < y.fabric;
  };
  for (int32_t a : nics_of_node_[node_of(from)]) {
    for (int32_t b : nics_of_node_[node_of(to)]) {
      const int32_t fabric = links_[nic_uplink_.at(a)].to == links_[nic_uplink_.at(b)].to ? 2 : 4;
      const int32_t arrival = local_tree(b).cost[local_index_[gpu_vertex(to)]];
      const Choice c{source.cost[local_index_[a]] + fabric + arrival, arrival, fabric, a, b};
      if (!cheapest.empty() && better(cheapest[0], c)) continue;
      if (!cheapest.empty() && better(c, cheapest[0])) cheapest.clear();
      cheapest.push_back(c);
    }
  }
  CLUSTERSIM_CHECK(!cheapest.empty(), "nodes without NICs cannot reach each other");
  const Choice& pick = cheapest[pair_hash(from, to) % cheapest.size()];
  std::vector<int32_t> path = local_path(source, pick.nic_a);
  for (int32_t link : fabric_path(pick.nic_a, pick.nic_b)) path.push_back(link);
  for (int32_t link : local_path(local_tree(pick.nic_b), gpu_vertex(to))) path.push_back(link);
  return path;
}

const Topology::RouteInfo& Topology::route_info(int from, int to) const {
  const uint64_t key = (static_cast<uint64_t>(from) << 32) | static_cast<uint32_t>(to);
  auto it = routes_.find(key);
  if (it == routes_.end()) {
    RouteInfo info;
    info.links = domain_of(from) == domain_of(to)
                     ? local_path(local_tree(gpu_vertex(from)), gpu_vertex(to))
                     : route_between_domains(from, to);
    // The kind of link class that dominates: the network if any, else NVLink if any, else PCIe.
    info.kind = LinkKind::kPcie;
    for (int32_t link : info.links) {
      info.latency += links_[link].latency;
      if (links_[link].kind == LinkKind::kNetwork) info.kind = LinkKind::kNetwork;
      if (links_[link].kind == LinkKind::kNvlink && info.kind == LinkKind::kPcie) {
        info.kind = LinkKind::kNvlink;
      }
    }
    it = routes_.emplace(key, std::move(info)).first;
  }
  return it->second;
}

std::vector<int> Topology::first_gpus(int count) const {
  std::vector<int> gpus(count < 0 ? gpu_count() : count);
  std::iota(gpus.begin(), gpus.end(), 0);
  return gpus;
}

}  // namespace clustersim
