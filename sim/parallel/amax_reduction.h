// Transformer Engine's amax reduction under per-tensor delayed scaling (job.fp8_recipe
// DELAYED_SCALING): what a step's blocking all-reduces move and over which GPUs.
//
// Every FP8 GEMM module keeps the amaxes of its tensors, 3 a GEMM for the forward (input, weight,
// output) and 2 for the backward (output gradient, input gradient), one fp32 each; a grouped
// expert GEMM module as many per expert GEMM. Megatron-Core runs each transformer block, one model
// chunk, inside one fp8_autocast whose group is the stage's tensor x data x context-parallel
// group (Megatron-LM core_v0.12.0 megatron/core/transformer/transformer_block.py with the
// delayed recipe, megatron/core/fp8_utils.py get_fp8_context:
// get_amax_reduction_group(with_context_parallel=True)). At the autocast's exit Transformer
// Engine concatenates the chunk's forward amaxes and all-reduces them (MAX) over that group,
// blocking (NVIDIA/TransformerEngine v2.2 transformer_engine/pytorch/fp8.py
// FP8GlobalStateManager.reduce_and_update_fp8_tensors, reduce_tensor_across_group_op_max:
// all_reduce(..., async_op=False)), and the backward amaxes likewise at the end of the chunk's
// backward (reduce_and_update_bwd_fp8_tensors); so once per model chunk and micro-batch each way,
// on the stage's stream before the pass's output leaves. The other recipes (current scaling,
// blockwise, MXFP8, NVFP4, torchao's tensorwise) scale from each tensor's own amax and keep no
// such buffer ("global_amax_buffer should only be non-empty for fp8 delayed scaling").
#pragma once

#include <vector>

#include "sim/io/schema/job.pb.h"
#include "sim/parallel/pipeline_simulation.h"
#include "sim/workload/layer_ops.h"

namespace clustersim {

// Whether `job`'s step all-reduces amaxes: precision FP8 under delayed scaling.
bool reduces_amax(const schema::TrainingJob& job);

// Bytes of one layer's amaxes in each direction's all-reduce.
struct AmaxBytes {
  double forward = 0, backward = 0;
  AmaxBytes& operator+=(const AmaxBytes& o);
};

// The amaxes of the FP8 GEMMs among `ops` (matmuls not kept in 16 bits, `count` GEMMs each).
AmaxBytes amax_bytes(const std::vector<LayerOp>& ops);

// The GPUs of stage 0's amax reduction group: its tensor- and context-parallel ranks of every
// data-parallel replica (every stage's group is alike).
std::vector<int> amax_reduction_group(const PipelinePlan& plan);

}  // namespace clustersim
