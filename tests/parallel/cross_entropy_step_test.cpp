// Tests of the cross entropy's kernels in the training step: the loss's traffic per logit,
// Transformer Engine's (job.transformer_engine_cross_entropy) 6 bytes forward and 4 backward,
// Megatron's unfused one (job.unfused_cross_entropy) 38 and 14 and PyTorch's F.cross_entropy
// (job.torch_cross_entropy) 4 and 8 on the 16-bit logits, 14 and 22 on an fp32 copy, against
// Megatron-Core's fused 10 and 20, on the closed form (sim/hw/compute_model.h).
#include <catch2/catch.hpp>
#include <string>

#include "sim/parallel/transformer_stages.h"
#include "tests/testing/llama8b_b200_fp8_stage.h"

namespace clustersim {
namespace {

namespace s = schema;

// The step with the loss kernel `option` (a job field) against Megatron-Core's fused kernel: its
// forward and backward differ by exactly the memory-bound time of the two kernels' bytes a logit
// over Llama 3 8B's logits on one GPU (4096 tokens x 128,256 vocabulary).
void check_loss_bytes(const std::string& option, double forward_bytes, double backward_bytes) {
  const ComputeModel b200 = testing::dgx_b200_fp8_compute(s::DELAYED_SCALING);
  const double logits = 4096.0 * 128256;
  const StageWork fused = testing::llama8b_b200_fp8_stage("");
  const StageWork other = testing::llama8b_b200_fp8_stage(option);
  const auto bound = [&](double bytes) { return b200.memory_bound(bytes * logits).seconds(); };
  INFO(option);
  CHECK((other.forward - fused.forward).seconds() ==
        Approx(bound(forward_bytes) - bound(10)).epsilon(1e-6));
  CHECK((other.backward - fused.backward).seconds() ==
        Approx(bound(backward_bytes) - bound(20)).epsilon(1e-6));
}

TEST_CASE("Transformer Engine's cross entropy moves 6 + 4 bytes a logit, Megatron-Core's 10 + 20") {
  check_loss_bytes("transformer_engine_cross_entropy: true", 6, 4);
}

TEST_CASE("Megatron's unfused cross entropy moves 38 + 14 bytes a logit, the fused 10 + 20") {
  // Forward: cast 6, max 4, subtract 8, exp 8, sum 4, divide 8; backward: scale 8, cast 6.
  check_loss_bytes("unfused_cross_entropy: true", 38, 14);
}

TEST_CASE("PyTorch's cross entropy moves 4 + 8 bytes a logit in 16 bits, 14 + 22 upcast") {
  // log_softmax 2 + 2; backward: nll_loss_backward's gradient 2, log_softmax_backward 2 + 2 + 2.
  check_loss_bytes("torch_cross_entropy: SIXTEEN_BIT_LOGITS", 4, 8);
  // The cast 2 + 4 and log_softmax 4 + 4; backward: 4, 4 + 4 + 4 and the cast back 4 + 2.
  check_loss_bytes("torch_cross_entropy: FP32_UPCAST", 14, 22);
}

}  // namespace
}  // namespace clustersim
