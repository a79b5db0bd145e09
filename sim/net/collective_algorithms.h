// The algorithms behind start_collective (collective.h), one file each. Internal to sim/net.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "sim/net/collective.h"

namespace clustersim {

// A callback that runs `done` after it has been called `count` times.
std::function<void()> after_all(int count, std::function<void()> done);

// Ring (all-reduce, reduce-scatter, all-gather) and pipelined chain (broadcast); ring.cpp.
void start_ring(Network* network, const Collective& c, std::function<void()> done);
// The bytes a ring (broadcast: a chain) over c.gpus moves over each of its edges, its channels
// together: 2(n-1)/n of the buffer for all-reduce, (n-1)/n for reduce-scatter and all-gather,
// the whole buffer down broadcast's chain; ring.cpp.
double ring_bytes_per_edge(const Collective& c);
// Double binary tree across NVLink domains, chains inside them (all-reduce); tree.cpp.
void start_tree(Network* network, const Collective& c, std::function<void()> done);
// One of the two trees of one channel of start_tree: its chains inside the domains and its edges
// across them, each both ways; its latency counts `depth` tree steps and `chain_length` chain
// steps each way.
struct TreeHalf {
  std::vector<std::pair<int, int>> chain_edges, tree_edges;
  int64_t depth = 0, chain_length = 0;
  std::vector<std::pair<int, int>> edges() const;  // the chains', then the tree's
};
// The trees start_tree runs over `gpus` (two per channel, one channel per GPU of the smallest
// domain), each moving an equal share of the buffer over every one of its edges. Requires: the
// GPUs in two or more NVLink domains.
std::vector<TreeHalf> double_binary_trees(const std::vector<int>& gpus, const Topology& t);
// Reduce-scatter in NVLink domains, all-reduce across, all-gather in them (all-reduce);
// hierarchical.cpp.
void start_hierarchical(Network* network, const Collective& c, std::function<void()> done);
// NVLink SHARP in-switch reduction inside one NVLink domain (all-reduce); nvls.cpp.
void start_nvls(Network* network, const Collective& c, std::function<void()> done);
// Each of `gpus` to the next, around: the route GPU -> NVSwitch -> next GPU holds the GPU's link
// into the switch and the next one's out of it, so these edges load every GPU's links to the
// NVSwitches once each way, as start_nvls does; nvls.cpp.
std::vector<std::pair<int, int>> nvls_edges(const std::vector<int>& gpus);
// Point-to-point transfers (all-to-all, send/recv); direct.cpp.
void start_direct(Network* network, const Collective& c, std::function<void()> done);

// The group's GPUs by NVLink domain (a node, or the trays of a rack sharing NVSwitches: what NCCL
// calls a node), in the order given, domains in order of first appearance.
std::vector<std::vector<int>> gpus_by_domain(const std::vector<int>& gpus, const Topology& t);
// gpus_by_domain in one list (two allocations, not one per domain), for the collectives a
// simulation starts: domain i's GPUs are gpus[begin[i] .. begin[i + 1]).
struct DomainGroups {
  std::vector<int> gpus;
  std::vector<int> begin;
  size_t size() const { return begin.size() - 1; }
  std::span<const int> operator[](size_t i) const {
    return std::span(gpus).subspan(begin[i], begin[i + 1] - begin[i]);
  }
};
DomainGroups group_by_domain(const std::vector<int>& gpus, const Topology& t);

// Software step latency plus hardware route latency from GPU `from` to GPU `to`, with the
// low-latency protocol.
Picoseconds step_latency(int from, int to, const Topology& t);

// step_latency of the slowest of `edges`.
Picoseconds slowest_step_latency(const std::vector<std::pair<int, int>>& edges, const Topology& t);

// A latency under each of the two protocols.
struct ProtocolLatencies {
  Picoseconds low;
  Picoseconds simple;
};
// The step latencies of the slowest of `edges` (with hardware route latency).
ProtocolLatencies slowest_step_latencies(const std::vector<std::pair<int, int>>& edges,
                                         const Topology& t);
// The step latencies of `edges` added up (with hardware route latency), in their order.
ProtocolLatencies summed_step_latencies(const std::vector<std::pair<int, int>>& edges,
                                        const Topology& t);
// Latency of `steps` pipelined steps around a ring or chain of `hops` edges whose step latencies
// add up to `sum` (summed_step_latencies): each step at the mean step latency of the edges, so a
// ring of n hops of which d cross the network pays steps x ((n - d) x NVLink step + d x network
// step) / n, as NCCL's tuner counts a ring's intra- and inter-node steps apart.
// Requires: hops > 0.
ProtocolLatencies pipelined_latencies(ProtocolLatencies sum, int64_t hops, int64_t steps);

// Starts a coupled transfer of `bytes_per_edge` over `edges` (Network::start_coupled) on
// `protocol`: the low-latency protocol carries twice the bytes on the wire (8 bytes of flags with
// every 8 of data) at the low latency, Simple the bytes at the Simple latency. The links carry the
// wire bytes over `bandwidth_fraction` (an algorithm that reaches less than its links allow).
void start_on_protocol(Network* network, const std::vector<std::pair<int, int>>& edges,
                       double bytes_per_edge, ProtocolLatencies latencies, Protocol protocol,
                       std::function<void()> done, double bandwidth_fraction = 1);

// start_on_protocol with the protocol that finishes first on the idle links: the shorter of
// latency + wire bytes / idle rate (ties to Simple), the model's own choice where NCCL's tuner is
// not modelled (NVLink-only rings and trees, rings across nodes: nccl_tuner.h says why).
void start_with_protocol(Network* network, const std::vector<std::pair<int, int>>& edges,
                         double bytes_per_edge, ProtocolLatencies latencies,
                         std::function<void()> done, double bandwidth_fraction = 1);

}  // namespace clustersim
