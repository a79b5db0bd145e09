// Tests of the passes over the gradient buffer (optimizer_step.h gradient_buffer_pass_bytes):
// bytes per parameter by the buffer's type and the scenario's fields, none where Megatron's
// data-parallel wrapper does not run.
#include "sim/parallel/optimizer_step.h"

#include <catch2/catch.hpp>
#include <string>

#include "tests/testing/parse_message.h"

namespace clustersim {
namespace {

namespace s = schema;

// Dense bytes per parameter of a BF16 job (unless `precision`) on DP 8 with `extra`.
double dense(const std::string& extra, s::Precision precision = s::BF16) {
  const auto p = testing::parse_message<s::Parallelism>("data_parallel: 8 " + extra);
  return gradient_buffer_pass_bytes(precision, p, 1).dense;
}

GradientBufferPassBytes passes(const std::string& plan, int expert_data_parallel) {
  return gradient_buffer_pass_bytes(s::BF16, testing::parse_message<s::Parallelism>(plan),
                                    expert_data_parallel);
}

TEST_CASE("gradient buffer passes: zero (write), NaN check (read), scaling (read + write)") {
  // fp32 buffer (BF16's default): zeroing 4 + scaling by 1/8 (4 + 4) = 12; with the check 16.
  CHECK(dense("") == 12);
  CHECK(dense("check_for_nan_in_grad: true") == 16);
  // BF16 buffer (gradient_reduce_in_fp32 false): the same passes at 2 bytes.
  CHECK(dense("gradient_reduce_in_fp32: false check_for_nan_in_grad: true") == 8);
  // FP16 keeps 16-bit gradients unless told: zeroing 2 + scaling 4.
  CHECK(dense("", s::FP16) == 6);
  // Averaging in the collective or a per-token loss: no scaling pass; without zeroing (2021's
  // set_to_none) nothing.
  CHECK(dense("gradient_scaling: AVERAGE_IN_COLLECTIVE") == 4);
  CHECK(dense("gradient_scaling: PER_TOKEN_LOSS") == 4);
  CHECK(dense("gradient_scaling: AVERAGE_IN_COLLECTIVE zero_gradient_buffer: false") == 0);
}

TEST_CASE("the scaling pass runs only where the bucket's factor is not 1") {
  // One data-parallel rank: factor 1, no pass; two context-parallel ranks scale by 1/2.
  CHECK(passes("data_parallel: 1", 1).dense == 4);
  CHECK(passes("data_parallel: 1 context_parallel: 2", 1).dense == 12);
  // Averaging in the collective: expert buckets still scaled by expert DP / (DP x CP) = 2/8,
  // unless the expert data-parallel group is the whole data-parallel one; a per-token loss
  // scales neither.
  const GradientBufferPassBytes averaged =
      passes("data_parallel: 8 gradient_scaling: AVERAGE_IN_COLLECTIVE", 2);
  CHECK(averaged.dense == 4);
  CHECK(averaged.expert == 12);
  CHECK(passes("data_parallel: 8 gradient_scaling: AVERAGE_IN_COLLECTIVE", 8).expert == 4);
  CHECK(passes("data_parallel: 8 gradient_scaling: PER_TOKEN_LOSS", 2).expert == 4);
  CHECK(passes("data_parallel: 8", 2).expert == 12);
}

TEST_CASE("no gradient buffer passes under ZeRO or DeepSpeed's pipeline engine") {
  for (const char* other : {"zero_stage: 1", "zero_stage: 3", "zero_stage: 3 fsdp2: true",
                            "pipeline_parallel: 2 deepspeed_pipeline_engine: true"}) {
    INFO(other);
    const GradientBufferPassBytes none = passes(std::string("data_parallel: 8 ") + other, 2);
    CHECK(none.dense == 0);
    CHECK(none.expert == 0);
  }
}

}  // namespace
}  // namespace clustersim
