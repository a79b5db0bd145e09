// Tests of an NVFP4 step with job.fp4_overrides (sim/parallel/transformer_kernels,
// transformer_stages): Nemotron 3 Super's last layers in 16 bits, each adding its own kind's
// 16-bit cost, and a module in MXFP8 between its NVFP4 and 16-bit costs.
#include <catch2/catch.hpp>
#include <string>

#include "sim/parallel/transformer_stages.h"
#include "tests/testing/cluster.h"
#include "tests/testing/parse_message.h"

namespace clustersim {
namespace {

namespace s = schema;

// One DGX B200, DP 8 and EP 8, one micro-batch a GPU.
s::Parallelism one_b200_plan() {
  return testing::parse_message<s::Parallelism>(
      "tensor_parallel: 1 pipeline_parallel: 1 context_parallel: 1 data_parallel: 8 "
      "micro_batch_size: 1 virtual_stages: 1 zero_stage: 0 schedule: ONE_F_ONE_B "
      "recompute: RECOMPUTE_NONE distributed_optimizer: true expert_parallel: 8");
}

// Nemotron 3 Super's step compute on one_b200_plan() in NVFP4 with `overrides`
// (job.fp4_overrides' text).
double nvfp4_super_compute_s(const std::string& overrides) {
  const Catalog& catalog = testing::shipped_catalog();
  const s::Model& model = *catalog.models().find("nemotron3-super-120b-a12b")->value;
  auto topology = testing::shipped_cluster("onprem.dgx-b200", 1);
  const s::TrainingJob job = testing::parse_message<s::TrainingJob>(
      "global_batch_size: 8 sequence_length: 8192 optimizer: ADAM steps: 1 precision: FP4 "
      "fp4_overrides { " + overrides + " }");
  const ComputeModel compute(catalog.gpu_of(*catalog.instances().find("onprem.dgx-b200")->value),
                             job.precision(), *catalog.runtimes().find("default")->value,
                             KernelSetting::kTrainingStep);
  return transformer_plan(model, job, one_b200_plan(), *topology, compute).compute_s[0];
}

TEST_CASE("each last layer kept in 16 bits adds its own kind's 16-bit cost") {
  // The pattern ends "...EMEME": the last layer an expert one, the one before it a Mamba mixer.
  const double nvfp4 = nvfp4_super_compute_s("");
  const auto added = [&](int layers) {
    return nvfp4_super_compute_s("sixteen_bit_last_layers: " + std::to_string(layers)) - nvfp4;
  };
  const double expert = added(1), expert_and_mamba = added(2);
  REQUIRE(expert > 0);
  REQUIRE(expert_and_mamba > expert);
  // "EME" = 2 experts + 1 Mamba; "MEME" = 2 x "ME".
  CHECK(added(3) == Approx(expert + expert_and_mamba).epsilon(1e-9));
  CHECK(added(4) == Approx(2 * expert_and_mamba).epsilon(1e-9));
  CHECK(added(88) > added(14));
}

TEST_CASE("a Mamba out_proj in MXFP8 costs between its NVFP4 and 16-bit GEMMs") {
  const double nvfp4 = nvfp4_super_compute_s("");
  const double mxfp8 = nvfp4_super_compute_s("mxfp8_modules: MAMBA_OUT_PROJECTION");
  const double sixteen = nvfp4_super_compute_s("sixteen_bit_modules: MAMBA_OUT_PROJECTION");
  CHECK(nvfp4 < mxfp8);
  CHECK(mxfp8 < sixteen);
  // The recipe's 16-bit attention and latent projections add to it.
  CHECK(nvfp4_super_compute_s("sixteen_bit_modules: [ATTENTION_QKV, ATTENTION_OUT, "
                              "LATENT_PROJECTIONS] mxfp8_modules: MAMBA_OUT_PROJECTION") > mxfp8);
}

}  // namespace
}  // namespace clustersim
