// Memory traffic of the memory-bound kernels around the routed experts' grouped GEMMs (the closed
// forms are in the header, with the Megatron-Core and Transformer Engine code they count).
#include "sim/workload/eager_expert_kernels.h"

namespace clustersim {

namespace {

constexpr double kElement = 2;  // bytes of a 16-bit activation

}  // namespace

EagerExpertBytes clamped_glu_bytes(int64_t width) {
  const double w = static_cast<double>(width);
  // Two clamps of one half each (read, write) and the concatenation of both halves (read, write).
  const double forward = (2 * (w + w) + (2 * w + 2 * w)) * kElement;
  // Two clamp gradients (read gradient and input, write) and the halves joined (read, write).
  const double backward = (2 * 3 * w + (2 * w + 2 * w)) * kElement;
  return {forward, backward};
}

EagerExpertBytes weighted_bias_bytes(int64_t hidden, bool fp32_probabilities) {
  const double h = static_cast<double>(hidden);
  if (fp32_probabilities) {
    constexpr double kFp32 = 4;
    // b x p; t read with the product and the sum written; the cat; the cast to 16 bits.
    const double forward =
        h * kFp32 + (h * kElement + 2 * h * kFp32) + 2 * h * kFp32 + h * (kFp32 + kElement);
    // The cast's and the sum's gradients; the split's joined; two products with the gradient.
    const double backward =
        2 * h * (kElement + kFp32) + 2 * h * kElement + 2 * (3 * h * kFp32);
    return {forward, backward};
  }
  // b x p written; t and the product read, the sum written; the concatenation read and written.
  const double forward = (h + 3 * h + 2 * h) * kElement;
  // The split's gradient joined (read, write); two products written and reread for their sums.
  const double backward = (2 * h + 2 * (h + h + h)) * kElement;
  return {forward, backward};
}

EagerExpertBytes fused_bias_gradient_bytes(int64_t hidden) {
  constexpr double kFp32 = 4;
  // The output gradient and the probability read; the probability's gradient read and written.
  return {0, static_cast<double>(hidden) * kElement + 3 * kFp32};
}

EagerExpertBytes paged_stash_bytes(int64_t input_width, int64_t up_width, int64_t down_width,
                                   double narrow_bytes, double probability_bytes) {
  const double saved = static_cast<double>(input_width + down_width) * narrow_bytes +
                       static_cast<double>(up_width) * kElement + probability_bytes;
  // Copied into the stash (read, write), and back (read, write).
  return {2 * saved, 2 * saved};
}

}  // namespace clustersim
