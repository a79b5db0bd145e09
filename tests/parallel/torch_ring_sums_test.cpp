// Closed forms of the bytes PyTorch's context-parallel ring moves through its FP32 sums, a rank's
// steps at CP 4 (Llama 3.1 8B at 128K: 32 heads of 128, chunks of c = 16384 tokens, a rank's
// sums over 2c tokens; torch/distributed/tensor/experimental/_attention.py as
// sim/parallel/torch_ring_sums.h reads it).
#include "sim/parallel/torch_ring_sums.h"

#include <catch2/catch.hpp>

namespace clustersim {
namespace {

constexpr int64_t kChunk = 16384;
constexpr double kRow = 32.0 * 128;  // elements a token of one tensor: heads x head dimension
constexpr double kLocal = kRow * 2 * kChunk;

AttentionKernel step_kernel(int64_t queries, int64_t keys, bool causal) {
  return {32, queries, keys, 128, causal};
}

TEST_CASE("PyTorch's ring, step 0: the gradient sums start as its gradients in FP32") {
  const TorchRingSums s = torch_ring_sums(step_kernel(2 * kChunk, 2 * kChunk, true), kLocal, 0, 4);
  CHECK(s.forward_bytes == 0);  // its output is the running output, cast where first merged
  // Read 2 bytes of dQ, dK, dV (the whole block each), write 4: 18 bytes a local element.
  CHECK(s.backward_bytes == Approx(18 * kLocal).epsilon(1e-12));
}

TEST_CASE("PyTorch's ring, middle steps: every sum read and written whole") {
  // i <= rank: all queries against the block's first chunk.
  const TorchRingSums early = torch_ring_sums(step_kernel(2 * kChunk, kChunk, false), kLocal, 2, 4);
  // Forward: read the FP32 output (4) and the step's 16-bit one (2), write the output (4).
  CHECK(early.forward_bytes == Approx(10 * kLocal).epsilon(1e-12));
  // Backward: 3 sums read and written in FP32 (24) + the step's 16-bit gradients: dQ over the
  // whole (2), dK and dV over half (1 + 1): 28 bytes a local element.
  CHECK(early.backward_bytes == Approx(28 * kLocal).epsilon(1e-12));
  // i > rank: the later chunk's queries against the whole block; the merged half and the other
  // half concatenated into a whole new output (_partial_update), so the output moves whole too.
  const TorchRingSums late = torch_ring_sums(step_kernel(kChunk, 2 * kChunk, false), kLocal, 2, 4);
  CHECK(late.forward_bytes == Approx(9 * kLocal).epsilon(1e-12));
  CHECK(late.backward_bytes == Approx(29 * kLocal).epsilon(1e-12));
}

TEST_CASE("PyTorch's ring, first and last merges: the casts fused at either end") {
  const AttentionKernel k = step_kernel(2 * kChunk, kChunk, false);
  // Step 1 reads step 0's 16-bit output as the sum: 2 + 2 + 4.
  CHECK(torch_ring_sums(k, kLocal, 1, 4).forward_bytes == Approx(8 * kLocal).epsilon(1e-12));
  // The last writes the 16-bit output (4 + 2 + 2), the last query gradient 16-bit (2 less), and
  // the key and value gradients back from the last pass are cast (2 x 6).
  const TorchRingSums last = torch_ring_sums(k, kLocal, 3, 4);
  CHECK(last.forward_bytes == Approx(8 * kLocal).epsilon(1e-12));
  CHECK(last.backward_bytes == Approx((28 - 2 + 12) * kLocal).epsilon(1e-12));
  // CP 2: step 1 is both the first merge and the last.
  CHECK(torch_ring_sums(k, kLocal, 1, 2).forward_bytes == Approx(6 * kLocal).epsilon(1e-12));
}

}  // namespace
}  // namespace clustersim
