// What a token dispatcher that deduplicates per NVLink domain (schema EXPERT_NODE_DEDUPLICATED:
// DeepEP's internode kernels, HybridEP) sends between domains. With E experts spread evenly over
// the D domains an expert-parallel group spans, a token picking k distinct experts at random
// misses a given domain with probability q = C(E - E/D, k) / C(E, k), so it crosses to
// (D - 1)(1 - q) remote domains on average, where the plain all-to-all sends its k (D - 1) / D
// copies. The layer then takes the longer of the rail all-to-all (among the group's GPUs at one
// place in each domain: a token's copy for each domain it reaches) and the all-to-all inside each
// domain (every copy delivered over NVLink), which DeepEP pipelines one beside the other.
//
// Inside one NVLink domain HybridEP (DeepEP's hybrid-ep kernels at the commit the Megatron-Bridge
// recipes pin, deepseek-ai/DeepEP@34152ae csrc/hybrid_ep/backend/hybrid_ep_backend.cuh) writes a
// token once to each rank holding any of its experts, and its combine kernel's reduction warp
// group reads each output token's copies back one after another, each behind its own barrier: the
// kernel is latency-bound, not bandwidth-bound (the kernel's authors' measurement,
// harryzhou2000/DeepEP@1c3989c docs/Hybrid-EP_Implementation.md section 10). A combine then takes
// at least tokens x copies per token x the time per copy / SMs.
//
// Before each forward dispatch HybridEP gathers every rank's boolean routing map, one byte per
// token and expert, on all ranks of the expert-parallel group (deepseek-ai/DeepEP@34152ae
// csrc/hybrid_ep/executor/executor.cu Executor::allgather_routing_map: its own all-gather kernel
// inside one NVLink domain, NCCL's all_gather_into_tensor across domains), and builds the
// dispatch's layout from the gathered map; the backward's dispatch and combine reuse that layout
// (Megatron-Core's HybridEPDispatch and HybridEPCombine pass the forward's handle back).
//
// AutoModel's fake balanced gate routes not at random but to consecutive experts
// (consecutive_groups_per_token): a token then reaches one or a few neighbouring ranks, mostly in
// one domain, and the dispatcher moves that many copies of it.
#pragma once

#include <cstdint>

#include "sim/util/units.h"

namespace clustersim {

// The bytes of the rail all-to-all per byte of the plain one's (its k copies a token): a GPU's
// share to every place of the rail, D (1 - q) / k. Requires: 1 <= k <= experts, domains divides
// experts.
double deduplicated_rail_share(int experts, int experts_per_token, int domains);

// The ranks a token's k distinct experts reach among `ranks` holding experts / ranks each:
// ranks (1 - C(E - E/ranks, k) / C(E, k)). Requires: as deduplicated_rail_share, ranks dividing
// the experts.
double ranks_per_token(int experts, int experts_per_token, int ranks);

// The groups of experts / groups consecutive experts each (expert-parallel ranks, or the NVLink
// domains of a group) that a token's k experts reach under AutoModel's fake balanced gate
// (job.expert_routing.consecutive_experts: token t takes experts t k .. t k + k - 1 modulo E),
// averaged over the E / gcd(E, k) tokens after which the pattern repeats. A deduplicating
// dispatcher (DeepEP: one copy per rank holding any of a token's experts, one per node over the
// rails) moves that many copies of a token, not its k. Requires: as deduplicated_rail_share,
// groups dividing the experts.
double consecutive_groups_per_token(int experts, int experts_per_token, int groups);

// The bytes of HybridEP's routing-map all-gather (nccl-tests' size: the gathered buffer), each of
// `ranks` ranks' `tokens` x `experts` map. Requires: tokens >= 0, experts >= 1, ranks >= 1.
double routing_map_gather_bytes(int64_t tokens, int experts, int ranks);

// The combine kernel's floor: `tokens` output tokens of `copies_per_token` copies each, read at
// `us_per_copy` per copy on each of `sms` SMs. Requires: tokens >= 0, copies_per_token >= 0,
// us_per_copy >= 0, sms >= 1.
Picoseconds combine_reduction_floor(int64_t tokens, double copies_per_token, double us_per_copy,
                                    int sms);

}  // namespace clustersim
