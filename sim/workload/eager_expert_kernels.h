// The elementwise kernels Megatron-Core's grouped expert MLP (TEGroupedMLP) runs eagerly in
// PyTorch around its grouped GEMMs when Transformer Engine's fused grouped MLP does not take them
// (parallelism.fused_expert_mlp): the clamp of a clamped GLU's input and the router-weighted bias
// of a down projection with biases. Their memory traffic per routed row (one token copy on an
// expert), forward and backward, in 16-bit elements of 2 bytes.
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

}  // namespace clustersim
