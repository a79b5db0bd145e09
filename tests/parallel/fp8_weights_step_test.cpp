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

TEST_CASE("FP8 weights' transposes made at each use: one per micro-batch on Hopper") {
  // Llama 3 8B on one DGX H100, DP 8 and 4 micro-batches a replica: FP8 weights need their
  // transpose for the data-gradient GEMM (the H100's FP8 GEMMs take one layout), read 1 byte and
  // write 1 per GEMM weight; made at each use, 3 more a step than the cached one.
  const Catalog& catalog = testing::shipped_catalog();
  auto topology = testing::shipped_cluster("onprem.dgx-h100", 1);
  const ComputeModel h100(catalog.gpu_of(*catalog.instances().find("onprem.dgx-h100")->value),
                          s::FP8, *catalog.runtimes().find("default")->value,
                          KernelSetting::kTrainingStep, s::FP8_RECIPE_UNSPECIFIED);
  const auto p = testing::parse_message<s::Parallelism>(
      "tensor_parallel: 1 pipeline_parallel: 1 context_parallel: 1 data_parallel: 8 "
      "micro_batch_size: 1 virtual_stages: 1 zero_stage: 0 schedule: ONE_F_ONE_B "
      "recompute: RECOMPUTE_NONE distributed_optimizer: true");
  const auto stage = [&](const std::string& extra) {
    const auto job = testing::parse_message<s::TrainingJob>(
        "global_batch_size: 32 sequence_length: 4096 precision: FP8 optimizer: ADAM steps: 1 "
        "fp8_parameters: true " +
        extra);
    return transformer_plan(*catalog.models().find("llama3-8b")->value, job, p, *topology, h100)
        .plan.work[0];
  };
  const double linear = 32.0 * (4096.0 * 6144 + 4096.0 * 4096 + 3 * 4096.0 * 14336 + 2 * 4096.0);
  const StageWork cached = stage("");
  const StageWork per_use = stage("fp8_weight_transpose_per_use: true");
  CHECK((per_use.optimizer - cached.optimizer).seconds() ==
        Approx(h100.memory_bound(3 * 2 * linear).seconds()).epsilon(1e-6));
}

}  // namespace
}  // namespace clustersim
