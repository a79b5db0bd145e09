// Collective operations (all-reduce, reduce-scatter, all-gather, broadcast, all-to-all,
// send/recv) over any group of GPUs, decomposed into transfers on the Network by an algorithm:
// ring, double binary tree, hierarchical (NVLink inside nodes + network across), NVLink SHARP,
// or direct. kAuto picks what NCCL's tuner would: the fastest of NCCL's algorithms (ring, tree,
// NVLS) for this size and topology.
//
// Sizes follow nccl-tests: `bytes` is the per-GPU buffer of all-reduce and broadcast, the total
// (all ranks) buffer of all-gather and reduce-scatter, the per-GPU send buffer of all-to-all.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sim/net/network.h"

namespace clustersim {

enum class CollectiveOp {
  kAllReduce,
  kReduceScatter,
  kAllGather,
  kBroadcast,
  kAllToAll,
  kSendRecv
};
enum class CollectiveAlgorithm { kAuto, kRing, kTree, kHierarchical, kNvls, kDirect };

struct Collective {
  CollectiveOp op = CollectiveOp::kAllReduce;
  std::vector<int> gpus;  // global GPU indices; broadcast's root and send/recv's sender first
  double bytes = 0;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kAuto;
  // An all-to-all by the flex dispatcher's own kernels (HybridEP, DeepEP), which copy between the
  // GPUs of an NVLink domain at the ring's rate; false: NCCL's grouped send/recv, whose transfers
  // inside a domain reach the NVLink class's all_to_all_bandwidth_fraction of it (direct.cpp).
  bool dispatcher_kernels = false;
};

// Names as users type them: "all_reduce", ..., "send_recv"; "auto", "ring", "tree",
// "hierarchical", "nvls", "direct".
std::optional<CollectiveOp> parse_collective_op(const std::string& name);
std::optional<CollectiveAlgorithm> parse_collective_algorithm(const std::string& name);
std::string collective_op_name(CollectiveOp op);
std::string collective_algorithm_name(CollectiveAlgorithm algorithm);

// nccl-tests' bus bandwidth factor: busbw = algbw x factor (2(n-1)/n for all-reduce, ...).
double bus_bandwidth_factor(CollectiveOp op, int gpus);

// Why `c` cannot run on `topology`, or "" when it can: fewer than two GPUs, a GPU repeated or not
// in the topology, a size <= 0, an algorithm that does not apply (NVLS without NVLink SHARP or
// across NVLink domains, tree or hierarchical within one domain, ...).
std::string collective_problem(const Collective& c, const Topology& topology);

// The algorithm kAuto stands for: each applicable one of NCCL's (ring, tree, NVLS; not
// hierarchical) is simulated alone on an idle copy of the network and the fastest wins (ties to
// the first of ring, tree, NVLS).
// Requires: collective_problem(c) is "".
CollectiveAlgorithm choose_algorithm(const Collective& c, const Topology& topology);

// Starts `c` on `network` now; `done` runs when every GPU has its result.
// Requires: collective_problem(c, network->topology()) is "".
void start_collective(Network* network, const Collective& c, std::function<void()> done);

// Convenience: simulates `c` alone on an idle network of `topology` and returns its duration.
Picoseconds collective_time(const Topology& topology, const Collective& c);
// Simulates `collectives` started together (in that order) on an idle network of `topology` and
// returns when the last has ended. Kept per topology, so the same collectives again cost a lookup
// (idle_collective_times.h). Requires: as start_collective, for each.
Picoseconds concurrent_collectives_time(const Topology& topology,
                                        std::span<const Collective> collectives);

// The kind of link that binds `collectives` run at once, each as its algorithm moves its bytes:
// a ring's channels (start_ring), a tree's chains inside the NVLink domains and trees across them
// (start_tree), NVLS's links between each GPU and the NVSwitches (start_nvls). The link that
// carries the most bytes per byte/s of its capacity, as Network::prepared_binding_link finds it;
// a protocol's flags and the tree's bandwidth fraction scale every link of a collective alike,
// so they change no answer. binding_link.cpp. Requires: each collective's algorithm ring, tree
// or NVLS, and collective_problem "" for it.
LinkKind collectives_binding_link(const Topology& topology,
                                  std::span<const Collective> collectives);
// The kind of link that binds a ring over `gpus`. Requires: at least two distinct GPUs of
// `topology`.
LinkKind ring_binding_link(const Topology& topology, const std::vector<int>& gpus);

}  // namespace clustersim
