// The memory-bound quantization kernels Transformer Engine (and torchao's Float8, recipe
// TORCHAO_TENSORWISE: fp8_cast_bytes) adds around FP8 and FP4 GEMMs, per recipe (job.proto
// Fp8Recipe) and GPU. Each linear layer's GEMM input is cast to the narrow
// format in the forward and its output gradient in the backward. A cast reads the 16-bit tensor
// and writes its narrow copies:
//   per-tensor scaling (delayed, current): one copy where the GPU's FP8 GEMMs take any layout
//     (gpu.proto fp8_gemm_any_layout: the data-centre Blackwells), else two, the second
//     transposed for the weight-gradient GEMM (Hopper runs only TN FP8 GEMMs);
//   block scaling (blockwise, MXFP8): always two, scaled along rows and along columns (a block's
//     scale runs along the GEMM's reduction dimension, which differs between the GEMMs a tensor
//     feeds), each with one scale byte per 32 elements (MXFP8's E8M0 per 1 x 32 block;
//     blockwise's fp32 per 1 x 128).
//   NVFP4 (precision FP4): always two, the row-wise one of the 16-bit tensor and the column-wise
//     one of its random Hadamard transform (the weight-gradient GEMM's input; weights are not
//     transformed), each of 0.5 byte per element plus one E4M3 scale byte per 16 elements. The
//     transform is fused into the cast (TE's nvte_quantize_with_hadamard_transform: one read of
//     the tensor writes both copies; the 16 x 16 transform runs on the tensor cores and moves no
//     bytes of its own). Transformer Engine before 2.14 (NVIDIA/TransformerEngine#2555) ran the
//     row-wise cast (nvte_quantize_v2) and the column-wise one
//     (nvte_hadamard_transform_cast_fusion_columnwise) as two kernels, each reading the tensor:
//     one more 2-byte read per element (job.fp4_unfused_hadamard_cast; 2.12's quantizer.cpp
//     NVFP4Quantizer::quantize_impl). A copy without the transform (a frozen GEMM's one copy,
//     a weight's) is one kernel in both.
// Per-tensor current scaling and NVFP4 (its per-tensor FP32 scale) first read the tensor once
// more for its amax (NVFP4: nvte_hadamard_transform_amax, the amaxes before and after the
// transform in one pass). Delayed scaling uses the amax of earlier steps and needs no extra pass.
// (NVIDIA/TransformerEngine transformer_engine/pytorch/csrc/quantizer.cpp: a Float8 tensor's
// transpose only where !is_non_tn_fp8_gemm_supported; MXFP8Quantizer: row-wise and column-wise data
// and scales.)
//
// Weights are cast once per step (Transformer Engine caches them over the micro-batches). FP8
// weights (job.fp8_parameters, Megatron-Core's fp8_param_gather) are quantized on the optimizer's
// shard and all-gathered in FP8; per step they then need only their transpose where the GPU
// lacks any-layout FP8 GEMMs (read 1, write 1 byte; blockwise: its column-wise copy). MXFP8
// weights cannot live in Megatron-Core's parameter buffer: they are all-gathered in 16 bits
// through the gradient buffer and re-quantized whole after the gather (Megatron-Bridge
// mixed_precision.py bf16_with_mxfp8_mixed: fp8_param_gather with
// reuse_grad_buf_for_mxfp8_param_ag; NVIDIA/Megatron-LM megatron/core/distributed/
// param_and_grad_buffer.py: the bucket's param_data a bf16 view of its grad_data, and
// _post_param_sync copying the gathered weights into their MXFP8 storage). NVFP4 weights
// (fp4_param_gather) are all-gathered in FP4; their 16 x 16 blocks share a scale along both
// dimensions, so the column-wise copy is the row-wise one transposed (read and write one copy).
// A 16-bit weight is cast into both copies with its amax pass, as an activation.
// A frozen weight (LoRA's base, lora.h) has no weight-gradient GEMM, so Transformer Engine casts
// its GEMMs' inputs and output gradients into the one copy the forward and data-gradient GEMMs
// read (transformer_engine/pytorch/module/linear.py: the input's column-wise usage only where the
// backward needs the input for the weight gradient, the output gradient's likewise); frozen FP8
// weights are never gathered, so MXFP8 ones keep both copies from their one quantization when the
// model is built (fp8_model_init) and need no cast per step.
#pragma once

#include <vector>

#include "sim/io/schema/job.pb.h"
#include "sim/workload/layer_ops.h"

namespace clustersim {

// The recipe of `job`'s narrow GEMMs: NVFP4 under precision FP4, else job.fp8_recipe.
schema::Fp8Recipe gemm_recipe(const schema::TrainingJob& job);

// The recipe an FP8 attention's inputs are cast under: job.fp8_attention_recipe, else the GEMMs'.
schema::Fp8Recipe attention_recipe(const schema::TrainingJob& job);

// Bytes per element of one narrow copy with its scales: NVFP4 0.5 + 1/16, MXFP8 and blockwise
// 1 + 1/32, per-tensor FP8 1.
double narrow_copy_bytes(schema::Fp8Recipe recipe);

// Bytes per element of a GEMM input of `job` as all-gathered and kept for the backward: 2 in 16
// bits, 1 under FP8, narrow_copy_bytes under FP4 (NVFP4).
double gemm_input_bytes(const schema::TrainingJob& job);

// Bytes per element of an output gradient all-gathered under sequence parallelism (the backward of
// a reduce-scatter), as Transformer Engine's gather_along_first_dim moves it: both narrow copies of
// a block-scaled recipe with their scales (MXFP8 2 x (1 + 1/32), NVFP4 2 x (0.5 + 1/16)), the
// row-wise one of per-tensor FP8 (1; the transpose is made after the gather), 2 in 16 bits.
double gathered_gradient_bytes(const schema::TrainingJob& job);

// Narrow copies a cast under `recipe` writes: 1 or 2 (above); `any_layout` is the GPU's
// fp8_gemm_any_layout.
int fp8_copies(schema::Fp8Recipe recipe, bool any_layout);

// Bytes moved per element of a cast under `recipe`: the 16-bit read, the amax read (current
// scaling, NVFP4), each copy's narrow_copy_bytes and, for NVFP4's two copies under
// `unfused_hadamard` (job.fp4_unfused_hadamard_cast), the second read.
double fp8_cast_bytes_per_element(schema::Fp8Recipe recipe, bool any_layout,
                                  bool unfused_hadamard = false);

struct Fp8CastBytes {
  double forward = 0;   // per micro-batch: the GEMM inputs
  double backward = 0;  // per micro-batch: the GEMMs' output gradients
  // TORCHAO_TENSORWISE: elements of the GEMM inputs whose saved row-wise FP8 copy the backward
  // copies into the transposed layout of the weight-gradient GEMM (read 1, write 1 byte each), not
  // in `backward`: where a compiled backward reruns the cast, the rerun writes both copies in one
  // kernel instead (one more byte each).
  double saved_input_transposes = 0;
};

// The casts of the FP8 GEMMs among `ops` (one layer's forward kernels on one rank: matmuls not
// kept in 16 bits; a frozen one's, one copy each; one in MXFP8 inside an FP4 step, LayerOp::mxfp8,
// MXFP8's two copies) and of an FP8 attention's inputs (LayerOp::fp8):
// Transformer Engine's fused attention casts the 16-bit Q, K and V before its forward and the
// output's gradient before its backward, each into the copies a GEMM input gets (MXFP8: row- and
// column-wise; NVIDIA/TransformerEngine 4220403e, the commit Megatron-Bridge v0.5.0 pins,
// pytorch/attention/dot_product_attention/backends.py FusedAttnFunc: combine_and_quantize of
// q, k, v with the default usages, the dO quantizer in the backward; under MXFP8 the output and
// dQ, dK, dV stay 16-bit). A per-tensor recipe's FP8 output and gradients are not counted. Under sequence parallelism (all-gathers and
// reduce-scatters among `ops`, over `tensor_parallel` ranks) Transformer Engine casts a gathered
// input on the rank's shard before gathering it in FP8, and likewise a reduce-scattered output's
// gradient. A per-tensor recipe's shard is cast row-wise only where the GPU needs the transposed
// copy (FP8 column-wise data cannot be all-gathered: Float8Quantizer and
// Float8CurrentScalingQuantizer supports_only_rowwise_all_gather); every rank transposes the
// whole gathered tensor in the backward, before its weight-gradient GEMM, reading and writing a
// byte per element of all the rows: the input of a column-parallel GEMM
// (NVIDIA/TransformerEngine v2.7 pytorch/module/layernorm_linear.py and linear.py backward:
// ln_out_total / inputmat_total.update_usage(columnwise_usage=True) after the gather) and the
// output gradient of a row-parallel one (grad_output.update_usage(columnwise_usage=True); v1.13
// did the same with tex.fp8_transpose of the gathered tensors). Per GEMM FLOP this grows with
// tensor_parallel / hidden size.
// `unfused_hadamard` as for fp8_cast_bytes_per_element.
// TORCHAO_TENSORWISE (torchao eab345c torchao/float8/float8_linear.py, float8_ops.py,
// float8_tensor_parallel.py; torch.compile'd as torchtitan runs it): each GEMM input is cast into
// one row-major copy (amax pass, read, write 1 byte) and the GEMMs reading one input (LayerOp::
// shares_input) cast it once (the joint graph's common-subexpression pass, torch/_functorch/
// partitioners.py fx_graph_cse); the weight-gradient GEMM needs it column-major (torch._scaled_mm
// takes row-major x column-major only: preprocess_addmm's .contiguous()), a copy the backward
// makes from the saved one (saved_input_transposes), or after the gather under sequence
// parallelism as above. Each output gradient is cast into both layouts in one kernel (Inductor
// writes a tensor and its transpose together, pytorch/pytorch#133242), under sequence parallelism
// its shard row-wise and the gathered tensor transposed. The weights are cast each micro-batch:
// the 16-bit weight's amax pass and cast in the forward, none under `fp8_parameters` (torchao's
// Float8 all-gather casts the FSDP shard before gathering it, with scales precomputed after the
// optimizer: fp8_weight_cast_bytes), and in the backward the data-gradient GEMM's transposed copy
// of the gathered FP8 weight (read 1, write 1 byte). Independent of `any_layout` (_scaled_mm's
// layout rule held on every GPU then) and `unfused_hadamard`.
// The attention's inputs are cast under `attention` (attention_recipe: a per-tensor recipe beside
// NVFP4 GEMMs, job.fp8_attention_recipe), or `recipe` where it is FP8_RECIPE_UNSPECIFIED.
Fp8CastBytes fp8_cast_bytes(const std::vector<LayerOp>& ops, schema::Fp8Recipe recipe,
                            bool any_layout, int tensor_parallel, bool unfused_hadamard = false,
                            bool fp8_parameters = false,
                            schema::Fp8Recipe attention = schema::FP8_RECIPE_UNSPECIFIED);

// Bytes per parameter of a narrow weight copy as gathered, kept and transposed: NVFP4's
// narrow_copy_bytes, 1 for the FP8 recipes (their scales left out).
double narrow_weight_bytes(schema::Fp8Recipe recipe);

// Whether narrow weights are all-gathered narrow (narrow_weight_bytes per parameter): with
// `fp8_parameters`, every recipe but MXFP8 (gathered in 16 bits, above).
bool fp8_weights_gathered_in_fp8(schema::Fp8Recipe recipe, bool fp8_parameters);

// Bytes of casting `parameters` narrow-GEMM weights once per step: 16-bit weights (and MXFP8's
// 16-bit gather) a whole cast each, narrow weights their transpose where the GPU needs one;
// `frozen` ones (above) no MXFP8 re-quantization. TORCHAO_TENSORWISE casts its weights each
// micro-batch (fp8_cast_bytes); once per step, under `fp8_parameters`, only the scale precompute
// reads `parameters` (then the rank's FSDP shard) for their amaxes (torchao fsdp_utils.py
// precompute_float8_dynamic_scale_for_fsdp: torch._foreach_norm of order inf over the shards,
// one all-reduce of the amaxes), else nothing.
double fp8_weight_cast_bytes(double parameters, schema::Fp8Recipe recipe, bool any_layout,
                             bool fp8_parameters, bool frozen);

}  // namespace clustersim
