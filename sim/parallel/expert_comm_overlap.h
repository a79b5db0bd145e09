// Megatron-Core's expert-parallel all-to-all overlap (--overlap-moe-expert-parallel-comm, a
// Megatron-Bridge recipe's moe_a2a_overlap): in the steady state of the schedule the forward of one
// micro-batch and the backward of another run as one combined step (combined_1f1b.py), layer by
// layer, each layer's dispatch and combine on a communication stream beside the other pass's
// compute (model_chunk_schedule_plan.py, TransformerLayerSchedulePlan.run), in three phases:
//   communication: combine backward     | dispatch forward, dispatch backward | combine forward
//   compute:       pre-dispatch forward | experts backward, experts forward   | pre-dispatch
//   backward
// Warm-up forwards and cool-down backwards run alone, their all-to-alls exposed. While an
// all-to-all runs its kernels hold a share s of the SMs and compute beside it runs at 1 - s of its
// speed, so a phase of communication a beside compute c takes max(a, c + s a).
// Approximation: ops after the combine (unpermute, shared experts) count as pre-dispatch compute.
#pragma once

#include <string>

#include "sim/io/schema/gpu.pb.h"
#include "sim/io/schema/parallelism.pb.h"
#include "sim/util/units.h"

namespace clustersim {

// One pass of an expert layer on one rank.
struct ExpertPassPhases {
  Picoseconds pre_dispatch;  // compute outside the experts: attention, router, permute, unpermute
  Picoseconds experts;       // compute between the dispatch and the combine
  Picoseconds dispatch, combine;  // the all-to-alls alone
};

// Exposed all-to-all time of a layer's forward `f` co-scheduled with a like layer's backward `b`
// (subscripts f, b; P pre-dispatch, E experts, D dispatch, C combine):
//   [max(Cb, Pf + s Cb) - Pf] + [max(Df + Db, Eb + Ef + s (Df + Db)) - (Eb + Ef)]
//   + [max(Cf, Pb + s Cf) - Pb].
// Requires: 0 <= sm_share < 1.
Picoseconds combined_exposed_all_to_all(const ExpertPassPhases& f, const ExpertPassPhases& b,
                                        double sm_share);

// The share of the GPU's SMs (Gpu.streaming_multiprocessors) the all-to-alls take: the scenario's
// expert_communication_sms; else, for Megatron-Core's alltoall dispatcher (EXPERT_ALL_TO_ALL:
// torch.distributed.all_to_all_single, NCCL's grouped sends and receives), NCCL's CTAs, one per
// p2p channel: an all-to-all stripes its peers over all p2pnChannels of them, which are the
// collectives' channels (NVIDIA/nccl@5067397 src/graph/paths.cc ncclTopoComputeP2pChannels:
// min(nChannels, MAX_P2P_NCHANNELS = MAXCHANNELS), rounded to a power of two; src/enqueue.cc
// shrinks the channels per peer, not their total, as peers are added), kNcclCollectiveCtas;
// else (the flex dispatcher without a count) Megatron-Core's DeepEP default of 20 (20 / 132 on
// an H100 SXM, 20 / 148 on a B200). None on an accelerator without CUDA SMs.
double expert_communication_sm_share(const schema::Parallelism& p, const schema::Gpu& gpu);

// "" when Megatron-Core allows the overlap in this layout (transformer_config.py: expert parallel
// > 1, no full recomputation, the interleaved schedule when pipeline parallel > 1; or DualPipe's
// overlapped pairs, dualpipe_schedule.h), else why not.
std::string expert_overlap_problem(const schema::Parallelism& p);

}  // namespace clustersim
