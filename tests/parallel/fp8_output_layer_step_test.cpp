// Tests of the MXFP8 output layer in the training step (job.fp8_output_layer, Megatron-Core's
// fp8_output_proj): the last stage's logit GEMMs at the FP8 rate with their input and gradient
// casts, against the closed form (sim/hw/compute_model.h, sim/workload/fp8_casts.h).
#include <catch2/catch.hpp>
#include <string>

#include "sim/parallel/transformer_stages.h"
#include "sim/workload/fp8_casts.h"
#include "tests/testing/llama8b_b200_fp8_stage.h"

namespace clustersim {
namespace {

namespace s = schema;

TEST_CASE("an MXFP8 output layer runs its logits at the FP8 rate and casts their operands") {
  const ComputeModel b200 = testing::dgx_b200_fp8_compute(s::MXFP8);
  // Llama 3 8B's logits: 4096 tokens x 128,256 vocabulary x hidden 4096.
  const int64_t tokens = 4096, vocab = 128256, hidden = 4096;
  const double cast = fp8_cast_bytes_per_element(s::MXFP8, b200.fp8_gemm_any_layout(), false);
  const StageWork sixteen =
      testing::llama8b_b200_fp8_stage("fp8_recipe: MXFP8 fp8_output_layer: false");
  const StageWork narrow =
      testing::llama8b_b200_fp8_stage("fp8_recipe: MXFP8 fp8_output_layer: true");
  // Forward: one GEMM, its input (tokens x hidden) cast.
  const double forward_saved = (b200.matmul(tokens, vocab, hidden, 1, true) -
                                b200.matmul(tokens, vocab, hidden)).seconds() -
                               b200.memory_bound(cast * tokens * hidden).seconds();
  CHECK((sixteen.forward - narrow.forward).seconds() == Approx(forward_saved).epsilon(1e-6));
  CHECK(forward_saved > 0);
  // The whole step's backward is faster too (the data and weight gradients at the FP8 rate),
  // less the logits' gradient (tokens x vocabulary) cast.
  CHECK(narrow.backward < sixteen.backward);
}

}  // namespace
}  // namespace clustersim
