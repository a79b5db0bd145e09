// What a token dispatcher that deduplicates per GPU and per NVLink domain (schema
// EXPERT_NODE_DEDUPLICATED: DeepEP, HybridEP) moves. It sends a token once to each rank holding
// any of its experts, not once per expert: DeepEP's layout kernel marks a token for a rank when any
// of its top-k lands there (deepseek-ai/DeepEP@dd758ca csrc/kernels/legacy/layout.cu
// get_dispatch_layout: is_token_in_rank, num_tokens_per_rank), its intranode dispatch copies the
// token once to each marked rank, whose experts read it from there, and its combine reduces one
// copy a rank (csrc/kernels/legacy/intranode.cu: dispatch and combine over is_token_in_rank /
// send_head); HybridEP likewise writes a token once to each rank's dense buffer
// (deepseek-ai/DeepEP@34152ae csrc/hybrid_ep/backend/hybrid_ep_backend.cuh: sparse_to_dense_map,
// one entry a token and rank, the buffer holding each token some local expert takes). Across
// domains each sends a token once to each domain holding any of its experts (DeepEP's
// num_tokens_per_rdma_rank, HybridEP's rdma_to_attn_map), on the rail of GPUs at its place in each
// domain, and forwards it over NVLink there. With E experts spread evenly over G groups (ranks, or
// domains) a token picking k distinct experts at random misses a given group with probability q =
// C(E - E/G, k) / C(E, k), so it reaches G (1 - q) of them where the plain all-to-all sends its k
// copies. The layer then takes the longer of the rail all-to-all (among the group's GPUs at one
// place in each domain: a token's copy for each domain it reaches) and the all-to-all inside each
// domain (a copy for each rank it reaches, over NVLink), which DeepEP pipelines one beside the
// other.
//
// Inside one NVLink domain HybridEP's combine kernel's reduction warp group reads each output
// token's copies back one after another, each behind its own barrier: the kernel is latency-bound,
// not bandwidth-bound (the kernel's authors' measurement, harryzhou2000/DeepEP@1c3989c
// docs/Hybrid-EP_Implementation.md section 10). A combine then takes at least tokens x copies per
// token x the time per copy / SMs.
//
// Before each forward dispatch HybridEP gathers every rank's boolean routing map, one byte per
// token and expert, on all ranks of the expert-parallel group (deepseek-ai/DeepEP@34152ae
// csrc/hybrid_ep/executor/executor.cu Executor::allgather_routing_map: its own all-gather kernel
// inside one NVLink domain, NCCL's all_gather_into_tensor across domains), and builds the
// dispatch's layout from the gathered map; the backward's dispatch and combine reuse that layout
// (Megatron-Core's HybridEPDispatch and HybridEPCombine pass the forward's handle back).
//
// AutoModel's fake balanced gate routes not at random (random_groups_per_token) but to
// consecutive experts (consecutive_groups_per_token): a token then reaches one or a few
// neighbouring ranks, mostly in one domain, and the dispatcher moves that many copies of it.
#pragma once

#include <cstdint>

#include "sim/util/units.h"

namespace clustersim {

// The groups (ranks, or domains) a token's k distinct experts, picked at random, reach among
// `groups` holding experts / groups each: groups (1 - C(E - E/groups, k) / C(E, k)), the copies
// of it the deduplicating dispatcher sends. Requires: 1 <= k <= experts, groups dividing the
// experts.
double random_groups_per_token(int experts, int experts_per_token, int groups);

// The groups of experts / groups consecutive experts each (expert-parallel ranks, or the NVLink
// domains of a group) that a token's k experts reach under AutoModel's fake balanced gate
// (job.expert_routing.consecutive_experts: token t takes experts t k .. t k + k - 1 modulo E),
// averaged over the E / gcd(E, k) tokens after which the pattern repeats. A deduplicating
// dispatcher (DeepEP: one copy per rank holding any of a token's experts, one per node over the
// rails) moves that many copies of a token, not its k. Requires: as random_groups_per_token.
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
