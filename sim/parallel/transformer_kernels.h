// A transformer's kernel times per layer kind for one training step's shapes and groups: each
// kind's forward, backward and recomputation (layer_times.h) with FP8 casts, the windowed,
// compressed-key (compressed sparse attention) and multi-token-prediction variants, the output
// layer, the expert layers' host waits and all-to-all overlap, and under delayed scaling each
// kind's amaxes. transformer_stages.cpp sums them per stage.
#pragma once

#include <array>
#include <map>
#include <utility>

#include "sim/hw/compute_model.h"
#include "sim/io/schema/job.pb.h"
#include "sim/io/schema/model.pb.h"
#include "sim/io/schema/parallelism.pb.h"
#include "sim/parallel/amax_reduction.h"
#include "sim/parallel/layer_times.h"
#include "sim/parallel/muon_step.h"
#include "sim/workload/layer_ops.h"

namespace clustersim {

// A layer's times per kind (FP8 casts included; a kind the model lacks left zero), each also
// attending within the sliding window, and the output layer's.
struct TransformerKernels {
  std::array<LayerTimes, kLayerKinds> layers;  // by LayerKind
  // Under delayed scaling, a layer's amaxes by LayerKind (amax_reduction.h); zero otherwise.
  std::array<AmaxBytes, kLayerKinds> amax;
  LayerTimes output;
  // Of the output layer's backward: its logits GEMM's weight gradient alone (what
  // defer_output_weight_gradient moves into the flush).
  Picoseconds output_weight_gradient;
  LayerTimes dense_windowed, experts_windowed;
  // Under compressed sparse attention, the layers attending to compressed keys, by LayerKind and
  // compress ratio (4, 128); `layers` holds the window-only ones (ratio 0).
  std::map<std::pair<LayerKind, int>, LayerTimes> compressed;
  // The kinds of the layers kept in 16 bits (fp4_overrides.sixteen_bit_last_layers), by
  // LayerKind; zero for a kind none of them is.
  std::array<LayerTimes, kLayerKinds> sixteen_bit_layers;
  LayerTimes mtp;  // one multi-token-prediction module, on the output chunk
  // Muon: one layer's Newton-Schulz work per kind (muon_step.h), before the split over ranks.
  NewtonSchulzTime muon_dense, muon_experts;
  // With the expert all-to-all overlap: how much shorter an expert layer's forward and backward
  // are in a combined step, the all-to-alls it hides (expert_comm_overlap.h) less what the host's
  // issue floor takes back of them (expert_layer_host.h).
  Picoseconds combined_forward_saved, combined_backward_saved;
  // DeepSpeed's pipeline engine under tensor parallelism: one all-gather of a micro-batch's
  // stage-boundary tensor from the ranks' 1/TP shares (engine.py PartitionedTensor.full()).
  Picoseconds pipe_gather;
};

// The layer kinds' times for `job` under `p` on `compute`, its collectives in `groups`.
TransformerKernels time_transformer_kernels(const schema::Transformer& t,
                                            const schema::TrainingJob& job,
                                            const schema::Parallelism& p,
                                            const ComputeModel& compute,
                                            const LayerGroups& groups);

// Whether the GEMMs run narrower than 16 bits (FP8 or FP4).
bool narrow_gemms(schema::Precision precision);

// Whether an expert layer's forward reruns before its backward, all-to-alls included: full
// recomputation or recompute_modules' RECOMPUTE_MOE.
bool expert_layers_rerun(const schema::Parallelism& p);

// HybridEP's combine floor (expert_dispatch.h) per micro-batch: a rank's tokens reduced from the
// ranks holding each one's experts, when the scenario gives the kernels' SMs and the
// expert-parallel group is inside one NVLink domain; else 0.
Picoseconds expert_combine_floor(const schema::Transformer& t, const schema::TrainingJob& job,
                                 const schema::Parallelism& p, const ComputeModel& compute,
                                 bool in_one_domain);

// HybridEP's routing-map all-gather (expert_dispatch.h) per micro-batch, when the scenario runs
// HybridEP's kernels (expert_combine_sms) over an expert-parallel group; else 0 bytes.
double expert_routing_map_bytes(const schema::Transformer& t, const schema::TrainingJob& job,
                                const schema::Parallelism& p);

}  // namespace clustersim
