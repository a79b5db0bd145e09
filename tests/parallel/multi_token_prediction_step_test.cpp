// Tests of a hybrid model's multi-token-prediction passes in the training step and its memory
// (sim/parallel/transformer_stages, memory_model): Nemotron 3 Super's two passes of one shared
// "*E" module, each dispatching like one more expert layer, its GEMMs in 16 bits under MXFP8, its
// activations those of its pattern's layers.
#include <catch2/catch.hpp>
#include <string>

#include "sim/parallel/activation_memory.h"
#include "sim/parallel/memory_model.h"
#include "sim/parallel/transformer_stages.h"
#include "tests/testing/cluster.h"
#include "tests/testing/parse_message.h"

namespace clustersim {
namespace {

namespace s = schema;

// Nemotron 3 Super as shipped, or with `edit` applied to its transformer.
s::Model super_model(void (*edit)(s::Transformer*) = nullptr) {
  s::Model model = *testing::shipped_catalog().models().find("nemotron3-super-120b-a12b")->value;
  if (edit != nullptr) edit(model.mutable_transformer());
  return model;
}

void without_modules(s::Transformer* t) {
  t->clear_multi_token_prediction_layers();
  t->clear_multi_token_prediction_pattern();
  t->clear_multi_token_prediction_shared();
  t->clear_multi_token_prediction_sixteen_bit();
}

void in_job_precision(s::Transformer* t) { t->clear_multi_token_prediction_sixteen_bit(); }

// One DGX B200, DP 8 and EP 8, one micro-batch a GPU.
s::Parallelism plan() {
  return testing::parse_message<s::Parallelism>(
      "tensor_parallel: 1 pipeline_parallel: 1 context_parallel: 1 data_parallel: 8 "
      "micro_batch_size: 1 virtual_stages: 1 zero_stage: 0 schedule: ONE_F_ONE_B "
      "recompute: RECOMPUTE_NONE distributed_optimizer: true expert_parallel: 8");
}

s::TrainingJob job(const std::string& precision) {
  return testing::parse_message<s::TrainingJob>(
      "global_batch_size: 8 sequence_length: 8192 optimizer: ADAM steps: 1 " + precision);
}

// The step of `model` on plan() under `precision`.
TransformerPlan super_plan(const s::Model& model, const std::string& precision) {
  const Catalog& catalog = testing::shipped_catalog();
  auto topology = testing::shipped_cluster("onprem.dgx-b200", 1);
  const s::TrainingJob j = job(precision);
  const ComputeModel compute(catalog.gpu_of(*catalog.instances().find("onprem.dgx-b200")->value),
                             j.precision(), *catalog.runtimes().find("default")->value,
                             KernelSetting::kTrainingStep, j.fp8_recipe());
  return transformer_plan(model, j, plan(), *topology, compute);
}

const char* kMxfp8 = "precision: FP8 fp8_recipe: MXFP8";

TEST_CASE("each multi-token-prediction pass dispatches and combines like one more expert layer") {
  // 40 'E' layers and 2 passes of the "*E" module: 42 expert layers' all-to-alls, each alike.
  const TransformerPlan with = super_plan(super_model(), kMxfp8);
  const TransformerPlan without = super_plan(super_model(without_modules), kMxfp8);
  CHECK(with.expert_comm_s[0] == Approx(without.expert_comm_s[0] * 42 / 40).epsilon(1e-9));
  CHECK(with.compute_s[0] > without.compute_s[0]);
}

TEST_CASE("the modules' GEMMs in 16 bits cost more under MXFP8 and nothing under BF16") {
  const TransformerPlan sixteen = super_plan(super_model(), kMxfp8);
  const TransformerPlan narrow = super_plan(super_model(in_job_precision), kMxfp8);
  CHECK(sixteen.compute_s[0] > narrow.compute_s[0]);
  CHECK(sixteen.expert_comm_s[0] == narrow.expert_comm_s[0]);
  CHECK(super_plan(super_model(), "precision: BF16").compute_s[0] ==
        super_plan(super_model(in_job_precision), "precision: BF16").compute_s[0]);
}

TEST_CASE("the last stage stores every pass's activations of the module pattern's layers") {
  // The 2 passes of the shared module each store an attention and an experts layer's activations
  // with 16-bit GEMM inputs (keep_mtp_spec_in_bf16), for the one micro-batch in flight.
  const s::TrainingJob mxfp8 = job(kMxfp8);
  const MemoryEstimate with = estimate_stage_memory(super_model(), mxfp8, plan(), 0, 1e15, {});
  const MemoryEstimate without =
      estimate_stage_memory(super_model(without_modules), mxfp8, plan(), 0, 1e15, {});
  LayerActivationSpec spec;
  spec.sequence_length = 8192;
  spec.micro_batch_size = 1;
  spec.flash_attention = true;
  spec.hybrid = true;
  spec.block = HybridBlock::kAttention;
  const double attention = layer_activation_bytes(super_model().transformer(), spec);
  spec.block = HybridBlock::kExperts;
  const double experts = layer_activation_bytes(super_model().transformer(), spec);
  CHECK(with.activations_bytes - without.activations_bytes ==
        Approx(2 * (attention + experts)).epsilon(1e-9));
}

}  // namespace
}  // namespace clustersim
