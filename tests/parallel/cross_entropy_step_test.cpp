// Tests of the cross entropy's kernels in the training step: the loss's traffic per logit,
// Transformer Engine's (job.transformer_engine_cross_entropy) 6 bytes forward and 4 backward,
// Megatron's unfused one (job.unfused_cross_entropy) 38 and 14 and PyTorch's F.cross_entropy
// (job.torch_cross_entropy) 4 and 8 on the 16-bit logits, 14 and 22 on an fp32 copy, against
// Megatron-Core's fused 10 and 20, on the closed form (sim/hw/compute_model.h).
#include <catch2/catch.hpp>

#include "sim/parallel/transformer_stages.h"
#include "tests/testing/llama8b_b200_fp8_stage.h"

namespace clustersim {
namespace {

namespace s = schema;

TEST_CASE("Transformer Engine's cross entropy moves 6 + 4 bytes a logit, Megatron-Core's 10 + 20") {
  const ComputeModel b200 = testing::dgx_b200_fp8_compute(s::DELAYED_SCALING);
  // Llama 3 8B's logits on one GPU: 4096 tokens x 128,256 vocabulary.
  const double logits = 4096.0 * 128256;
  const StageWork megatron = testing::llama8b_b200_fp8_stage("");
  const StageWork te = testing::llama8b_b200_fp8_stage("transformer_engine_cross_entropy: true");
  const double forward_saved =
      (b200.memory_bound(10 * logits) - b200.memory_bound(6 * logits)).seconds();
  const double backward_saved =
      (b200.memory_bound(20 * logits) - b200.memory_bound(4 * logits)).seconds();
  CHECK((megatron.forward - te.forward).seconds() == Approx(forward_saved).epsilon(1e-6));
  CHECK((megatron.backward - te.backward).seconds() == Approx(backward_saved).epsilon(1e-6));
  CHECK(forward_saved > 0);
}

TEST_CASE("Megatron's unfused cross entropy moves 38 + 14 bytes a logit, the fused 10 + 20") {
  const ComputeModel b200 = testing::dgx_b200_fp8_compute(s::DELAYED_SCALING);
  const double logits = 4096.0 * 128256;
  const StageWork fused = testing::llama8b_b200_fp8_stage("");
  const StageWork unfused = testing::llama8b_b200_fp8_stage("unfused_cross_entropy: true");
  // Forward: cast 6, max 4, subtract 8, exp 8, sum 4, divide 8; backward: scale 8, cast 6.
  CHECK((unfused.forward - fused.forward).seconds() ==
        Approx((b200.memory_bound(38 * logits) - b200.memory_bound(10 * logits)).seconds())
            .epsilon(1e-6));
  CHECK((unfused.backward - fused.backward).seconds() ==
        Approx((b200.memory_bound(14 * logits) - b200.memory_bound(20 * logits)).seconds())
            .epsilon(1e-6));
}

TEST_CASE("PyTorch's cross entropy moves 4 + 8 bytes a logit in 16 bits, 14 + 22 upcast") {
  const ComputeModel b200 = testing::dgx_b200_fp8_compute(s::DELAYED_SCALING);
  const double logits = 4096.0 * 128256;
  const StageWork fused = testing::llama8b_b200_fp8_stage("");
  // log_softmax 2 + 2; backward: nll_loss_backward's gradient 2, log_softmax_backward 2 + 2 + 2.
  const StageWork bf16 = testing::llama8b_b200_fp8_stage("torch_cross_entropy: SIXTEEN_BIT_LOGITS");
  CHECK((fused.forward - bf16.forward).seconds() ==
        Approx((b200.memory_bound(10 * logits) - b200.memory_bound(4 * logits)).seconds())
            .epsilon(1e-6));
  CHECK((fused.backward - bf16.backward).seconds() ==
        Approx((b200.memory_bound(20 * logits) - b200.memory_bound(8 * logits)).seconds())
            .epsilon(1e-6));
  // The cast 2 + 4 and log_softmax 4 + 4; backward: 4, 4 + 4 + 4 and the cast back 4 + 2.
  const StageWork fp32 = testing::llama8b_b200_fp8_stage("torch_cross_entropy: FP32_UPCAST");
  CHECK((fp32.forward - fused.forward).seconds() ==
        Approx((b200.memory_bound(14 * logits) - b200.memory_bound(10 * logits)).seconds())
            .epsilon(1e-6));
  CHECK((fp32.backward - fused.backward).seconds() ==
        Approx((b200.memory_bound(22 * logits) - b200.memory_bound(20 * logits)).seconds())
            .epsilon(1e-6));
}

}  // namespace
}  // namespace clustersim
