// The memory-bound kernels of their own around the routed experts' grouped GEMMs. Megatron-Core's
// grouped expert MLP (TEGroupedMLP) runs eagerly in PyTorch, where Transformer Engine's fused
// grouped MLP (parallelism.fused_expert_mlp) does not take them into its GEMMs' epilogues, the
// clamp of a clamped GLU's input and the router-weighted bias of a down projection with biases;
// beside the fused one run the gradient of that weighted bias and Megatron-Core's paged stash of
// the tensors its backward reads. Their memory traffic per routed row (one token copy on an
// expert), forward and backward, in 16-bit elements of 2 bytes unless said otherwise.
#pragma once

#include <cstdint>

namespace clustersim {

struct EagerExpertBytes {
  double forward = 0;
  double backward = 0;
};

// Megatron-Core fused_bias_geglu.py weighted_bias_quick_geglu_impl with a clamp_value: the FC1
// output of 2 x `width` per row is chunked into its gate and linear halves, each clamped (read and
// write `width`), and concatenated again (read and write 2 x `width`): 16 x width bytes. Backward:
// each clamp's gradient reads the incoming gradient and its input and writes its own (3 x width
// each), and the chunk's gradient joins the halves (read and write 2 x width): 20 x width bytes.
EagerExpertBytes clamped_glu_bytes(int64_t width);

// Megatron-Core experts.py TEGroupedMLP._apply_bias (the FC2 layer adds no bias itself,
// skip_bias_add): per local expert `t + b * p` on its rows of `hidden` (the product written, then
// read with the GEMM output and the sum written) and torch.cat of the experts' sums (read and
// write): 12 x hidden bytes. Backward: torch.split's gradient concatenates the experts' row
// gradients (read and write), and the product's gradients to the bias (grad x p, then summed over
// the rows) and to the router probability (grad x b, then summed over `hidden`) each write and
// reread a product: 16 x hidden bytes. The router's probabilities in the activations' 16-bit type
// (Megatron-Core's moe_router_dtype absent, as in the gpt-oss recipes, and the all-to-all
// dispatcher). With `fp32_probabilities` (the flex dispatcher's, DeepEP and HybridEP take them in
// fp32) PyTorch promotes the product and the sum to fp32: b x p written (4 h), t and the product
// read and the sum written (10 h), the cat of fp32 rows (8 h) and the cast back to 16 bits (6 h):
// 28 x hidden bytes; backward, the cast's gradient to fp32 (6 h), the sum's gradient to t cast
// back (6 h), the split's gradient joined (4 h) and the two fp32 products written and reread with
// the gradient (24 h): 40 x hidden bytes.
EagerExpertBytes weighted_bias_bytes(int64_t hidden, bool fp32_probabilities);

// The fused grouped MLP's weighted bias (NVIDIA/TransformerEngine 4220403e, the commit
// Megatron-Bridge v0.5.0 pins: pytorch/ops/fused/forward_grouped_mlp.py adds b x p in the down
// GEMM's epilogue) leaves its gradients to one Triton kernel (backward_grouped_mlp.py
// compute_grouped_dbias_dscales, triton/grouped_dbias_dscales.py; 4329ff84, v0.6.0's pin, keeps it
// in fused/grouped_mlp.py): it reads the row's 16-bit output gradient of `hidden` and its fp32
// probability, and adds the probability's gradient into an fp32 sum (read and write): no forward
// traffic, 2 x hidden + 12 bytes backward. The per-expert bias sums it writes are left out.
EagerExpertBytes fused_bias_gradient_bytes(int64_t hidden);

// Megatron-Core's paged stash (moe_paged_stash, which the recipes with full-iteration CUDA graphs
// set: Megatron-Bridge v0.5.0 scripts/performance/configs/*/ set_full_iter_cg_configs, v0.6.0
// perf_recipes/*/common.py; NVIDIA/Megatron-LM d0b3b775, v0.5.0's Megatron-LM,
// megatron/core/transformer/moe/experts.py _fused_forward and moe/paged_stash.py): the fused
// grouped MLP's saved tensors (those Transformer Engine marks, mark_grouped_tensor) are copied,
// their actual rows only, into the pages of a stash buffer after the layer's forward
// (_paged_stash_copy_kernel: read and write) and back before its backward (_paged_stash_pop_kernel:
// read and write). Per row: the up projection's input kept column-wise (`input_width` narrow
// elements of `narrow_bytes`), the activation's 16-bit input (`up_width`, both halves of a GLU),
// the down projection's input kept column-wise (`down_width` narrow elements) and the router
// probability (`probability_bytes`); forward and backward each 2 x their sum.
EagerExpertBytes paged_stash_bytes(int64_t input_width, int64_t up_width, int64_t down_width,
                                   double narrow_bytes, double probability_bytes);

}  // namespace clustersim
