// A cluster as a graph (Boost Graph): GPUs, NVSwitches, PCIe switches, NICs and fabric switches
// as vertices; every physical link as two directed edges, each with its own capacity (line rate
// times the link class's efficiency) and hardware latency. Routes between GPUs are cheapest paths
// (a hop costs 1, a PCIe hop 2, so GPUs talk over NVLink when they can, as NCCL does); among equal
// ones, those entering the destination node through the destination GPU's own NIC without the
// spine (NCCL's PXN: traffic crosses on the destination's rail), then a deterministic choice (ECMP
// by a hash of the endpoints).
//
// An NVLink domain is the set of GPUs joined by NVLink: one node, or several consecutive nodes
// (the trays of an NVL72 rack) whose GPUs share one NVSwitch fabric. GPUs of different domains
// share no NVLink. Routing uses the hierarchy instead of searching the whole graph: a domain
// reaches the fabric only through its nodes' NICs, and no cheapest route between two GPUs passes
// through a third domain (NIC-PCIe-NIC costs more than any leaf or spine detour). So a route
// between domains is the cheapest of (inside the source domain to a NIC a of the source node) +
// (NIC a, its leaf, the spine if the leaves differ, the leaf of NIC b, NIC b) + (NIC b of the
// destination node to the GPU inside the destination domain), over the NIC pairs; and a route
// inside a domain never leaves it. Searches run on one domain's vertices and are cached, so a
// route costs O(NICs per node squared). The tests check every route against a search of the
// whole graph.
//
// Built by topology_builder.h. Not thread-safe (routes, collective times, rings' channels and
// replicated routes are cached on first use); each simulation owns its topology.
#pragma once

#include <array>
#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/util/units.h"

namespace clustersim {

class IdleCollectiveTimes;
class RankSymmetry;
class ReplicatedRoutes;
class RingChannelCache;

enum class VertexKind : uint8_t { kGpu, kNvSwitch, kPcieSwitch, kNic, kLeafSwitch, kSpineSwitch };
enum class LinkKind : uint8_t { kNvlink, kPcie, kNetwork };

struct VertexInfo {
  VertexKind kind;
  int32_t node;   // -1 for fabric switches; an NVLink domain's NVSwitch: the domain's first node
  int32_t index;  // GPU's local index, NIC's index in its node, switch number
};

struct LinkInfo {
  int32_t from;  // vertex
  int32_t to;
  double capacity_bytes_per_s;  // line rate x efficiency
  Picoseconds latency;          // hardware latency of this hop
  LinkKind kind;
  double nccl_gb_per_s = 0;  // NCCL's rating of the link (nccl_tuner.h); 0: not rated
};

// NCCL's protocols as the model tells them apart: low latency (LL: every 8 bytes of data travel
// with 8 bytes of flags, so a step is short but the wire carries twice the data) and Simple (full
// bandwidth, longer steps), which NCCL's tuner picks for large messages.
enum class Protocol : uint8_t { kLowLatency, kSimple };

// Software latency of one collective step over each kind of link (from the link classes).
struct StepLatencies {
  Picoseconds nvlink;
  Picoseconds pcie;
  Picoseconds network;
};

class Topology {
 public:
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, VertexInfo,
                                      int32_t /* link id */>;

  // Requires: nodes_per_domain >= 1 (consecutive nodes per NVLink domain; the last domain may
  // have fewer).
  Topology(int nodes, int gpus_per_node, int nodes_per_domain = 1);
  ~Topology();

  // Building (topology_builder.cpp). add_link adds both directions.
  int32_t add_vertex(VertexInfo info);
  // Adds both directions; returns the id of a -> b (b -> a is that id + 1). `nccl_gb_per_s`:
  // NCCL's rating of each direction, where NCCL's tuner rates it (PCIe hosts; 0: not rated).
  int32_t add_link(int32_t a, int32_t b, double capacity_bytes_per_s, Picoseconds a_to_b_latency,
                   Picoseconds b_to_a_latency, LinkKind kind, double nccl_gb_per_s = 0);
  // Declares the fabric: `nic_to_leaf` is the link id from a NIC to its leaf switch (made by
  // add_link, so the way back is id + 1), likewise `leaf_to_spine` for a leaf.
  void set_nic_uplink(int32_t nic, int32_t nic_to_leaf);
  void set_leaf_uplink(int32_t leaf, int32_t leaf_to_spine);
  void set_step_latencies(Protocol protocol, StepLatencies latencies) {
    step_latencies_[static_cast<size_t>(protocol)] = latencies;
    forget_kept_lookups();
  }
  // What NCCL's tuner reads of the host (nccl_tuner.h): the GPUs' compute capability (major x 10
  // + minor) and whether the PCIe roots are Intel CPUs.
  void set_nccl_host(int compute_capability, bool intel_roots) {
    nccl_compute_capability_ = compute_capability;
    nccl_intel_roots_ = intel_roots;
    forget_kept_lookups();
  }
  // Share of the ring's bandwidth a double binary tree achieves across the network (1: all).
  void set_tree_bandwidth_fraction(double fraction) {
    tree_bandwidth_fraction_ = fraction;
    forget_kept_lookups();
  }
  // Share of the ring's bandwidth an all-to-all achieves between NVLink domains (1: all).
  void set_all_to_all_bandwidth_fraction(double fraction) {
    all_to_all_bandwidth_fraction_ = fraction;
    forget_kept_lookups();
  }
  // Share of the NVLink ring's bandwidth NCCL's all-to-all achieves inside a domain (1: all).
  void set_domain_all_to_all_bandwidth_fraction(double fraction) {
    domain_all_to_all_bandwidth_fraction_ = fraction;
    forget_kept_lookups();
  }
  // NVLink SHARP (in-switch reduction): per-GPU capacity of its NVLink for it, and the rate of
  // the cost each extra GPU adds (an all-reduce of S bytes over n GPUs adds (n - 1) S / this).
  void set_nvls_capable(double nvls_capacity_bytes_per_s, double operand_bytes_per_s) {
    nvls_capacity_ = nvls_capacity_bytes_per_s;
    nvls_operand_bytes_per_s_ = operand_bytes_per_s;
    forget_kept_lookups();
  }

  int nodes() const { return nodes_; }
  int gpus_per_node() const { return gpus_per_node_; }
  int gpu_count() const { return nodes_ * gpus_per_node_; }
  int node_of(int gpu) const { return gpu / gpus_per_node_; }
  int nodes_per_domain() const { return nodes_per_domain_; }
  int domains() const { return (nodes_ + nodes_per_domain_ - 1) / nodes_per_domain_; }
  int domain_of_node(int node) const { return node / nodes_per_domain_; }
  int domain_of(int gpu) const { return domain_of_node(node_of(gpu)); }
  int domain_first_gpu(int domain) const { return domain * nodes_per_domain_ * gpus_per_node_; }
  // GPUs of NVLink domain `domain`: nodes_per_domain() nodes' worth, fewer in a last partial one.
  int domain_gpu_count(int domain) const;
  int32_t gpu_vertex(int gpu) const { return gpu; }  // GPUs are added first, in order
  // The first `count` GPUs' indices, 0..count-1 (every GPU when count is -1).
  std::vector<int> first_gpus(int count = -1) const;
  // Cost of a link for routing: 1, or 2 for PCIe.
  int32_t link_cost(int32_t link) const;

  const Graph& graph() const { return graph_; }
  const std::vector<LinkInfo>& links() const { return links_; }
  // links()[i].capacity_bytes_per_s at i, contiguous for the network model.
  const std::vector<double>& link_capacities() const { return link_capacities_; }
  const StepLatencies& step_latencies(Protocol protocol = Protocol::kLowLatency) const {
    return step_latencies_[static_cast<size_t>(protocol)];
  }
  // Per-GPU NVLink capacity usable by in-switch reduction (NVLS); 0 when the node cannot.
  double nvls_capacity() const { return nvls_capacity_; }
  double nvls_operand_bytes_per_s() const { return nvls_operand_bytes_per_s_; }
  double tree_bandwidth_fraction() const { return tree_bandwidth_fraction_; }
  int nccl_compute_capability() const { return nccl_compute_capability_; }
  bool nccl_intel_roots() const { return nccl_intel_roots_; }
  double all_to_all_bandwidth_fraction() const { return all_to_all_bandwidth_fraction_; }
  double domain_all_to_all_bandwidth_fraction() const {
    return domain_all_to_all_bandwidth_fraction_;
  }

  // Links from GPU `from` to GPU `to` along a cheapest path; empty when from == to.
  // Requires: valid GPU indices. Cost: O(NICs per node squared) the first time per pair.
  const std::vector<int32_t>& route(int from, int to) const { return route_info(from, to).links; }
  // Sum of the hardware latencies along route(from, to).
  Picoseconds route_latency(int from, int to) const { return route_info(from, to).latency; }
  // The kind of link class that dominates a route: kNetwork if it leaves the NVLink domain, else
  // kNvlink if it uses NVLink, else kPcie.
  LinkKind route_kind(int from, int to) const { return route_info(from, to).kind; }

  // The tensor-parallel rank symmetry of the finished graph (rank_symmetry.h), found on first use
  // (thread-safe). Requires: building is done.
  const RankSymmetry& rank_symmetry() const;
  // The times collective_time and concurrent_collectives_time simulated on this topology
  // (idle_collective_times.h), kept from the first on; every change to the topology forgets them.
  IdleCollectiveTimes& idle_collective_times() const;
  // The rings' channels start_ring built on this topology (ring_channels.h), kept from the first
  // on; every change to the topology forgets them.
  RingChannelCache& ring_channels() const;
  // The routes a replicated network folded onto the rank symmetry (replicated_routes.h), kept
  // from the first on; every change to the topology forgets them.
  ReplicatedRoutes& replicated_routes() const;

  // A route with its latency and kind, computed once per pair.
  struct RouteInfo {
    std::vector<int32_t> links;
    Picoseconds latency;
    LinkKind kind = LinkKind::kPcie;
  };
  // route(), route_latency() and route_kind() of one pair in one lookup.
  const RouteInfo& route_info(int from, int to) const;

 private:
  // Cheapest paths from `source` to every vertex of its NVLink domain, staying inside it.
  // Indexed by a vertex's position in its domain (local_index_).
  struct LocalTree {
    std::vector<int32_t> cost;         // -1 when unreachable inside the node
    std::vector<int32_t> parent_link;  // the link that reaches the vertex, -1 at the source
  };
  const LocalTree& local_tree(int32_t source) const;
  // Links of the cheapest in-domain path from the local tree's source to `target`.
  std::vector<int32_t> local_path(const LocalTree& tree, int32_t target) const;
  std::vector<int32_t> route_between_domains(int from, int to) const;
  // The NVLink domain of a vertex; -1 for fabric switches.
  int32_t domain_of_vertex(int32_t vertex) const;
  std::vector<int32_t> fabric_path(int32_t nic_a, int32_t nic_b) const;
  // Drops the collective times, rings' channels and replicated routes kept: they may differ on
  // the changed topology.
  void forget_kept_lookups();

  int nodes_;
  int gpus_per_node_;
  int nodes_per_domain_;
  Graph graph_;
  std::vector<LinkInfo> links_;
  std::vector<double> link_capacities_;
  std::array<StepLatencies, 2> step_latencies_;  // by Protocol
  double nvls_capacity_ = 0;
  double nvls_operand_bytes_per_s_ = 0;
  double tree_bandwidth_fraction_ = 1;
  int nccl_compute_capability_ = 0;
  bool nccl_intel_roots_ = false;
  double all_to_all_bandwidth_fraction_ = 1;
  double domain_all_to_all_bandwidth_fraction_ = 1;
  std::vector<std::vector<int32_t>> vertices_of_domain_;
  std::vector<int32_t> local_index_;  // vertex -> position in its domain's list, -1 for fabric
  std::vector<std::vector<int32_t>> nics_of_node_;
  std::unordered_map<int32_t, int32_t> nic_uplink_;   // NIC vertex -> link to its leaf
  std::unordered_map<int32_t, int32_t> leaf_uplink_;  // leaf vertex -> link to the spine
  mutable std::unordered_map<uint64_t, RouteInfo> routes_;
  mutable std::unordered_map<int32_t, LocalTree> local_trees_;
  mutable std::once_flag rank_symmetry_found_;
  mutable std::unique_ptr<RankSymmetry> rank_symmetry_;
  mutable std::unique_ptr<IdleCollectiveTimes> idle_collective_times_;  // made on first use
  mutable std::unique_ptr<RingChannelCache> ring_channels_;             // made on first use
  mutable std::unique_ptr<ReplicatedRoutes> replicated_routes_;         // made on first use
};

}  // namespace clustersim
