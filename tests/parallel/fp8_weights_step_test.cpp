// Tests of FP8 weights in the training step (sim/parallel/transformer_stages): the parameter
// all-gather bytes and the per-step weight cast of per-tensor FP8 and MXFP8 weights under the
// distributed optimizer, against their closed forms (sim/workload/fp8_casts.h).
#include <catch2/catch.hpp>
#include <string>

#include "sim/parallel/transformer_stages.h"
#include "tests/testing/cluster.h"
#include "tests/testing/parse_message.h"

namespace clustersim {
namespace {

namespace s = schema;

// Llama 3 8B on one DGX B200, DP 8 with the distributed optimizer, FP8 weights under `recipe`.
StageWork llama8b_stage(const std::string& recipe) {
  const Catalog& catalog = testing::shipped_catalog();
  auto topology = testing::shipped_cluster("onprem.dgx-b200", 1);
  const auto p = testing::parse_message<s::Parallelism>(
      "tensor_parallel: 1 pipeline_parallel: 1 context_parallel: 1 data_parallel: 8 "
      "micro_batch_size: 1 virtual_stages: 1 zero_stage: 0 schedule: ONE_F_ONE_B "
      "recompute: RECOMPUTE_NONE distributed_optimizer: true");
  const auto job = testing::parse_message<s::TrainingJob>(
      "global_batch_size: 8 sequence_length: 4096 precision: FP8 optimizer: ADAM steps: 1 "
      "fp8_parameters: true fp8_recipe: " +
      recipe);
  const ComputeModel compute(catalog.gpu_of(*catalog.instances().find("onprem.dgx-b200")->value),
                             s::FP8, *catalog.runtimes().find("default")->value,
                             KernelSetting::kTrainingStep, job.fp8_recipe());
  return transformer_plan(*catalog.models().find("llama3-8b")->value, job, p, *topology, compute)
      .plan.work[0];
}

TEST_CASE("MXFP8 weights are all-gathered in BF16 and re-quantized, per-tensor ones in FP8") {
  // The layers' weights of Llama 3 8B: 32 x (QKV 4096 x 6144, output 4096 x 4096, SwiGLU
  // 3 x 4096 x 14336, and the two RMSNorms' 4096 each, which the step counts with the GEMM
  // weights: 0.004%); the embedding and output layer stay 16-bit.
  const double linear = 32.0 * (4096.0 * 6144 + 4096.0 * 4096 + 3 * 4096.0 * 14336 + 2 * 4096.0);
  const StageWork mxfp8 = llama8b_stage("MXFP8");
  const StageWork per_tensor = llama8b_stage("CURRENT_SCALING");
  // Gather: MXFP8 2 bytes per parameter through the gradient buffer; per-tensor 1 per GEMM weight.
  CHECK(mxfp8.parameter_gather_bytes - per_tensor.parameter_gather_bytes == Approx(linear));
  // Per step: the B200's FP8 GEMMs take any layout, so per-tensor weights need no transpose;
  // MXFP8 re-quantizes every gathered GEMM weight into two copies with their scales.
  const Catalog& catalog = testing::shipped_catalog();
  const ComputeModel b200(catalog.gpu_of(*catalog.instances().find("onprem.dgx-b200")->value),
                          s::FP8, *catalog.runtimes().find("default")->value,
                          KernelSetting::kTrainingStep);
  CHECK((mxfp8.optimizer - per_tensor.optimizer).seconds() ==
        Approx(b200.memory_bound((2 + 2 * (1 + 1.0 / 32)) * linear).seconds()).epsilon(1e-6));
}

}  // namespace
}  // namespace clustersim
