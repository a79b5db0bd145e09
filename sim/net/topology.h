// A cluster as a graph (Boost Graph): GPUs, NVSwitches, PCIe switches, NICs and fabric switches
// as vertices; every physical link as two directed edges, each with its own capacity (line rate
// times the link class's efficiency) and hardware latency. Routes between GPUs are cheapest paths
// (a hop costs 1, a PCIe hop 2, so GPUs talk over NVLink when they can, as NCCL does), with a
// deterministic choice among equal ones (ECMP by a hash of the endpoints).
//
// Built by topology_builder.h. Not thread-safe (routes are cached on first use); each simulation
// owns its topology.
#pragma once

#include <boost/graph/adjacency_list.hpp>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/util/units.h"

namespace clustersim {

enum class VertexKind : uint8_t { kGpu, kNvSwitch, kPcieSwitch, kNic, kLeafSwitch, kSpineSwitch };
enum class LinkKind : uint8_t { kNvlink, kPcie, kNetwork };

struct VertexInfo {
  VertexKind kind;
  int32_t node;   // -1 for fabric switches
  int32_t index;  // GPU's local index, NIC's index in its node, switch number
};

struct LinkInfo {
  int32_t from;  // vertex
  int32_t to;
  double capacity_bytes_per_s;  // line rate x efficiency
  Picoseconds latency;          // hardware latency of this hop
  LinkKind kind;
};

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

  Topology(int nodes, int gpus_per_node) : nodes_(nodes), gpus_per_node_(gpus_per_node) {}

  // Building (topology_builder.cpp). add_link adds both directions.
  int32_t add_vertex(VertexInfo info);
  void add_link(int32_t a, int32_t b, double capacity_bytes_per_s, Picoseconds a_to_b_latency,
                Picoseconds b_to_a_latency, LinkKind kind);
  void set_step_latencies(StepLatencies latencies) { step_latencies_ = latencies; }
  void set_nvls_capable(double nvls_capacity_bytes_per_s) { nvls_capacity_ = nvls_capacity_bytes_per_s; }

  int nodes() const { return nodes_; }
  int gpus_per_node() const { return gpus_per_node_; }
  int gpu_count() const { return nodes_ * gpus_per_node_; }
  int node_of(int gpu) const { return gpu / gpus_per_node_; }
  int32_t gpu_vertex(int gpu) const { return gpu; }  // GPUs are added first, in order

  const Graph& graph() const { return graph_; }
  const std::vector<LinkInfo>& links() const { return links_; }
  const StepLatencies& step_latencies() const { return step_latencies_; }
  // Per-GPU NVLink capacity usable by in-switch reduction (NVLS); 0 when the node cannot.
  double nvls_capacity() const { return nvls_capacity_; }

  // Links from GPU `from` to GPU `to` along a cheapest path; empty when from == to.
  // Requires: valid GPU indices. Cost: a breadth-first search the first time per pair.
  const std::vector<int32_t>& route(int from, int to) const;
  // Sum of the hardware latencies along route(from, to).
  Picoseconds route_latency(int from, int to) const;
  // The kind of link class that dominates a route: kNetwork if it leaves the node, else kNvlink if
  // it uses NVLink, else kPcie.
  LinkKind route_kind(int from, int to) const;

 private:
  std::vector<int32_t> shortest_path(int32_t from, int32_t to) const;
  int32_t link_cost(int32_t link) const;

  int nodes_;
  int gpus_per_node_;
  Graph graph_;
  std::vector<LinkInfo> links_;
  StepLatencies step_latencies_;
  double nvls_capacity_ = 0;
  mutable std::unordered_map<uint64_t, std::vector<int32_t>> routes_;
};

}  // namespace clustersim
