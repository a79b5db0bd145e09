// What a pipeline stage's expert all-to-alls put on the network beyond its NVLink domains, for
// the pipeline simulation to run beside the data- and pipeline-parallel traffic of the step: the
// pairs of GPUs in different domains whose tokens cross NICs and fabric, as one coupled transfer
// (every pair at one rate, the rate its most loaded link sets, as the direct all-to-all's pairs
// move alike). A plain all-to-all (NCCL's grouped send/recv, DeepEP or HybridEP inside one
// group) sends each other GPU of its expert-parallel group S/n; a dispatcher that deduplicates
// per NVLink domain across domains (expert_dispatch.h) sends on its rails (the group's GPUs at one
// place in each domain) S x rail share / domains to each other one; both move a pair's bytes /
// the network's all_to_all_bandwidth_fraction, as sim/net/direct.cpp does. Pairs inside one
// domain stay off this traffic: their time is the all-to-all's time alone (layer_times.h).
#pragma once

#include <utility>
#include <vector>

#include "sim/net/topology.h"
#include "sim/parallel/expert_parallel.h"
#include "sim/util/units.h"

namespace clustersim {

struct ExpertNetworkTraffic {
  std::vector<std::pair<int, int>> edges;  // (from GPU, to GPU) in different NVLink domains
  double edge_bytes_per_byte = 0;          // bytes on each edge per byte of the per-GPU send buffer
  Picoseconds latency;                     // the longest step latency of an edge
};

// The GPUs of `group` per NVLink domain, in group order, the domains in the order the group
// first reaches them.
std::vector<std::vector<int>> domain_parts(const Topology& topology, const std::vector<int>& group);

// The traffic of one stage's expert all-to-alls: of every expert-parallel group of `layout` whose
// GPUs (`stage_gpus`, by stage-local rank tp + TP (cp + CP dp)) have a tensor-parallel rank below
// `ranks` (of `tensor_parallel`: the simulated ranks of a network replicated over the others;
// requires then expert tensor parallel a multiple of tensor parallel, so that a group's ranks
// share theirs). `rail_share`: the deduplicating dispatcher's rail bytes per all-to-all byte
// (applied to a group whose domains hold it evenly), 0 for a plain all-to-all. No edge: every
// group stays inside its NVLink domain.
ExpertNetworkTraffic expert_network_traffic(const Topology& topology, const ExpertLayout& layout,
                                            const std::vector<int>& stage_gpus, double rail_share,
                                            int tensor_parallel, int ranks);

}  // namespace clustersim
