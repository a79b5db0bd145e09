// Tests of FP8 weights in the training step (sim/parallel/transformer_stages): the parameter
// all-gather bytes and the per-step weight cast of per-tensor FP8 and MXFP8 weights under the
// distributed optimizer, against their closed forms (sim/workload/fp8_casts.h).
#include <catch2/catch.hpp>
#include <string>

#include "sim/parallel/transformer_stages.h"
#include "tests/testing/llama8b_b200_fp8_stage.h"

namespace clustersim {
namespace {

namespace s = schema;

TEST_CASE("MXFP8 weights are all-gathered in BF16 and re-quantized, per-tensor ones in FP8") {
  // The layers' weights of Llama 3 8B: 32 x (QKV 4096 x 6144, output 4096 x 4096, SwiGLU
  // 3 x 4096 x 14336, and the two RMSNorms' 4096 each, which the step counts with the GEMM
  // weights: 0.004%); the embedding and output layer stay 16-bit.
  const double linear = 32.0 * (4096.0 * 6144 + 4096.0 * 4096 + 3 * 4096.0 * 14336 + 2 * 4096.0);
  const StageWork mxfp8 = testing::llama8b_b200_fp8_stage("fp8_recipe: MXFP8");
  const StageWork per_tensor = testing::llama8b_b200_fp8_stage("fp8_recipe: CURRENT_SCALING");
  // Gather: MXFP8 2 bytes per parameter through the gradient buffer; per-tensor 1 per GEMM weight.
  CHECK(mxfp8.parameter_gather_bytes - per_tensor.parameter_gather_bytes == Approx(linear));
  // Per step: the B200's FP8 GEMMs take any layout, so per-tensor weights need no transpose;
  // MXFP8 re-quantizes every gathered GEMM weight into two copies with their scales.
  const ComputeModel b200 = testing::dgx_b200_fp8_compute(s::FP8_RECIPE_UNSPECIFIED);
  CHECK((mxfp8.optimizer - per_tensor.optimizer).seconds() ==
        Approx(b200.memory_bound((2 + 2 * (1 + 1.0 / 32)) * linear).seconds()).epsilon(1e-6));
}

}  // namespace
}  // namespace clustersim
