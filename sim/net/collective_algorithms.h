// The algorithms behind start_collective (collective.h), one file each. Internal to sim/net.
#pragma once

#include <functional>
#include <vector>

#include "sim/net/collective.h"

namespace clustersim {

// A callback that runs `done` after it has been called `count` times.
std::function<void()> after_all(int count, std::function<void()> done);

// Ring (all-reduce, reduce-scatter, all-gather) and pipelined chain (broadcast); ring.cpp.
void start_ring(Network* network, const Collective& c, std::function<void()> done);
// Double binary tree across NVLink domains, chains inside them (all-reduce); tree.cpp.
void start_tree(Network* network, const Collective& c, std::function<void()> done);
// Reduce-scatter in NVLink domains, all-reduce across, all-gather in them (all-reduce);
// hierarchical.cpp.
void start_hierarchical(Network* network, const Collective& c, std::function<void()> done);
// NVLink SHARP in-switch reduction inside one NVLink domain (all-reduce); nvls.cpp.
void start_nvls(Network* network, const Collective& c, std::function<void()> done);
// Point-to-point transfers (all-to-all, send/recv); direct.cpp.
void start_direct(Network* network, const Collective& c, std::function<void()> done);

// The group's GPUs by NVLink domain (a node, or the trays of a rack sharing NVSwitches: what NCCL
// calls a node), in the order given, domains in order of first appearance.
std::vector<std::vector<int>> gpus_by_domain(const std::vector<int>& gpus, const Topology& t);

// Software step latency plus hardware route latency from GPU `from` to GPU `to`.
Picoseconds step_latency(int from, int to, const Topology& t);
// step_latency of the slowest of `edges`.
Picoseconds slowest_step_latency(const std::vector<std::pair<int, int>>& edges, const Topology& t);

}  // namespace clustersim
