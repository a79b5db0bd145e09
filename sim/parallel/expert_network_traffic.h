// What a pipeline stage's expert all-to-alls put on the network beyond its NVLink domains, for
// the pipeline simulation to run beside the data- and pipeline-parallel traffic of the step: the
// pairs of GPUs in different domains whose tokens cross NICs and fabric, grouped by the bytes
// each moves into kinds, each kind one coupled transfer (its pairs at one rate, the rate its most
// loaded link sets, as the direct all-to-all's pairs move alike) and the kinds started together.
// A plain all-to-all (NCCL's grouped send/recv, DeepEP or HybridEP inside one group) sends each
// other GPU of its expert-parallel group S/n; a dispatcher that deduplicates per NVLink domain
// across domains (expert_dispatch.h) sends on its rails (the group's GPUs at one place in each
// domain) S x rail share / domains to each other one; both move a pair's bytes / the network's
// all_to_all_bandwidth_fraction, as sim/net/direct.cpp does. Pairs inside one domain stay off
// this traffic: their time is the all-to-all's time alone (layer_times.h).
//
// Which groups deduplicate: the time alone (transformer_stages.cpp) deduplicates every stage's
// all-to-alls when each of stage 0's groups has rails (domain_rails) and a rail share, and times
// stage 0's first group. The traffic here follows each group of each stage: where the
// time alone deduplicates, a group with rails and a rail share for the domains it spans sends on
// its rails, any other (a stage whose GPUs start where a domain does not, splitting its groups
// unevenly or over other domain counts than stage 0's) as a plain all-to-all; where it does not,
// every group sends as a plain all-to-all. So the two differ only on a stage whose groups split
// over the domains otherwise than stage 0's: its time alone is stage 0's, its traffic its own.
#pragma once

#include <utility>
#include <vector>

#include "sim/net/topology.h"
#include "sim/parallel/expert_parallel.h"
#include "sim/util/units.h"

namespace clustersim {

struct ExpertNetworkTraffic {
  // Pairs that move alike: (from GPU, to GPU) in different NVLink domains, and the bytes each
  // carries per byte of the per-GPU send buffer.
  struct Kind {
    std::vector<std::pair<int, int>> edges;
    double edge_bytes_per_byte = 0;
  };
  std::vector<Kind> kinds;  // by edge_bytes_per_byte ascending; empty: no pair leaves a domain
  Picoseconds latency;      // the longest step latency of a pair
};

// The GPUs of `group` per NVLink domain, in group order, the domains in the order the group
// first reaches them.
std::vector<std::vector<int>> domain_parts(const Topology& topology, const std::vector<int>& group);

// The rails of a group whose GPUs per NVLink domain are `parts` (domain_parts): its GPUs at one
// place in each domain, when it spans two domains or more holding the same number of its GPUs;
// else none (a deduplicating dispatcher sends it as a plain all-to-all).
std::vector<std::vector<int>> domain_rails(const std::vector<std::vector<int>>& parts);

// The traffic of one stage's expert all-to-alls: of every expert-parallel group of `layout` whose
// GPUs (`stage_gpus`, by stage-local rank tp + TP (cp + CP dp)) have a tensor-parallel rank below
// `ranks` (of `tensor_parallel`: the simulated ranks of a network replicated over the others;
// requires then expert tensor parallel a multiple of tensor parallel, so that a group's ranks
// share theirs). `rail_shares`: by the number of NVLink domains a group spans, the deduplicating
// dispatcher's rail bytes per all-to-all byte (0, or past the end: a plain all-to-all); empty for
// a plain all-to-all everywhere. No kind: every group stays inside its NVLink domain.
ExpertNetworkTraffic expert_network_traffic(const Topology& topology, const ExpertLayout& layout,
                                            const std::vector<int>& stage_gpus,
                                            const std::vector<double>& rail_shares,
                                            int tensor_parallel, int ranks);

}  // namespace clustersim
