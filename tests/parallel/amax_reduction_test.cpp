// Tests of delayed scaling's amax all-reduces in the training step (sim/parallel/
// amax_reduction.h, transformer_stages): one blocking all-reduce of a chunk's amaxes at the end of
// each forward and backward, timed by the collective model over the stage's tensor x data x
// context-parallel GPUs, for FP8 under delayed scaling only.
#include <catch2/catch.hpp>
#include <string>

#include "sim/net/collective.h"
#include "sim/parallel/amax_reduction.h"
#include "sim/parallel/step_model.h"
#include "sim/parallel/transformer_stages.h"
#include "tests/testing/cluster.h"
#include "tests/testing/llama8b_b200_fp8_stage.h"

namespace clustersim {
namespace {

namespace s = schema;

// Llama 3 8B's 32 layers each run 4 of Transformer Engine's FP8 GEMMs (QKV, output projection,
// fused gate/up, down), with 3 forward and 2 backward fp32 amaxes each.
constexpr double kForwardBytes = 32 * 4 * 3 * 4.0;
constexpr double kBackwardBytes = 32 * 4 * 2 * 4.0;

// Llama 3 8B on `topology` at data parallel `dp` (x pipeline `pp` with `chunks` model chunks a
// stage), one 4096-token sequence a micro-batch, `micro_batches` of them a replica.
TransformerPlan llama8b_plan(const Topology& topology, const std::string& job_fields, int dp,
                             int pp = 1, int chunks = 1, int micro_batches = 1) {
  const Catalog& catalog = testing::shipped_catalog();
  const std::string schedule = chunks > 1 ? "INTERLEAVED_ONE_F_ONE_B" : "ONE_F_ONE_B";
  const auto p = testing::parse_message<s::Parallelism>(
      "tensor_parallel: 1 context_parallel: 1 micro_batch_size: 1 zero_stage: 0 "
      "recompute: RECOMPUTE_NONE distributed_optimizer: true pipeline_parallel: " +
      std::to_string(pp) + " virtual_stages: " + std::to_string(chunks) +
      " data_parallel: " + std::to_string(dp) + " schedule: " + schedule);
  const auto job = testing::parse_message<s::TrainingJob>(
      "sequence_length: 4096 optimizer: ADAM steps: 1 global_batch_size: " +
      std::to_string(dp * micro_batches) + " " + job_fields);
  const ComputeModel compute(
      catalog.gpu_of(*catalog.instances().find("onprem.dgx-b200")->value), job.precision(),
      *catalog.runtimes().find("default")->value, KernelSetting::kTrainingStep, job.fp8_recipe());
  return transformer_plan(*catalog.models().find("llama3-8b")->value, job, p, topology, compute);
}

Picoseconds all_reduce(const Topology& topology, std::vector<int> gpus, double bytes) {
  return collective_time(topology, {CollectiveOp::kAllReduce, std::move(gpus), bytes});
}

TEST_CASE("Delayed scaling ends each pass with an all-reduce of its amaxes over the stage") {
  auto node = testing::shipped_cluster("onprem.dgx-b200", 1);
  const std::string delayed = "precision: FP8 fp8_recipe: DELAYED_SCALING";
  const StageWork one = llama8b_plan(*node, delayed, 1).plan.work[0];
  const StageWork eight = llama8b_plan(*node, delayed, 8).plan.work[0];
  // Alone, a GPU reduces nothing; with 8 data-parallel replicas each pass is longer by the
  // all-reduce of its amaxes over the 8 GPUs, the rest of the pass unchanged.
  const std::vector<int> gpus = {0, 1, 2, 3, 4, 5, 6, 7};
  const Picoseconds forward = all_reduce(*node, gpus, kForwardBytes);
  const Picoseconds backward = all_reduce(*node, gpus, kBackwardBytes);
  CHECK(forward.count() > 0);
  CHECK((eight.chunk_forward[0] - one.chunk_forward[0]).count() == forward.count());
  CHECK((eight.chunk_backward[0] - one.chunk_backward[0]).count() == backward.count());

  // The unspecified recipe is delayed scaling.
  CHECK(llama8b_plan(*node, "precision: FP8", 8).plan.work[0].chunk_forward[0] ==
        eight.chunk_forward[0]);
}

TEST_CASE("Only delayed scaling reduces amaxes") {
  auto node = testing::shipped_cluster("onprem.dgx-b200", 1);
  for (const std::string fields :
       {"precision: FP8 fp8_recipe: CURRENT_SCALING", "precision: FP8 fp8_recipe: MXFP8",
        "precision: FP8 fp8_recipe: BLOCKWISE", "precision: FP8 fp8_recipe: TORCHAO_TENSORWISE",
        "precision: BF16"}) {
    INFO(fields);
    const TransformerPlan one = llama8b_plan(*node, fields, 1);
    const TransformerPlan eight = llama8b_plan(*node, fields, 8);
    CHECK(eight.plan.work[0].chunk_forward[0] == one.plan.work[0].chunk_forward[0]);
    CHECK(eight.plan.work[0].chunk_backward[0] == one.plan.work[0].chunk_backward[0]);
    CHECK(eight.amax_comm_s[0] == 0);
  }
}

TEST_CASE("The amax all-reduce grows with its group") {
  auto nodes = testing::shipped_cluster("onprem.dgx-b200", 4);
  const std::string delayed = "precision: FP8";
  const Picoseconds alone = llama8b_plan(*nodes, delayed, 1).plan.work[0].chunk_forward[0];
  Picoseconds previous(0);
  for (int dp : {8, 16, 32}) {
    INFO("data parallel " << dp);
    const Picoseconds added =
        llama8b_plan(*nodes, delayed, dp).plan.work[0].chunk_forward[0] - alone;
    CHECK(added > previous);
    previous = added;
  }
}

TEST_CASE("A stage reduces its amaxes once per chunk and micro-batch each way") {
  // Pipeline 2 x 2 chunks of 8 layers, data parallel 4, 8 micro-batches: stage 0's group is its
  // replicas' GPUs (ranks tp-pp-dp: 0, 2, 4, 6), 2 x 8 reductions a step each way.
  auto node = testing::shipped_cluster("onprem.dgx-b200", 1);
  const TransformerPlan plan = llama8b_plan(*node, "precision: FP8", 4, 2, 2, 8);
  const std::vector<int> gpus = {0, 2, 4, 6};
  const Picoseconds forward = all_reduce(*node, gpus, kForwardBytes / 4);
  const Picoseconds backward = all_reduce(*node, gpus, kBackwardBytes / 4);
  CHECK(amax_reduction_group(plan.plan) == gpus);
  CHECK(plan.amax_comm_s[0] == Approx(2 * 8 * (forward + backward).seconds()).epsilon(1e-12));
  CHECK(plan.amax_comm_s[1] == Approx(plan.amax_comm_s[0]).epsilon(1e-12));
  // The step's breakdown counts them as data-parallel communication, not bubble.
  const StepResult step = pipeline_breakdown(simulate_pipeline(plan.plan, *node), plan);
  StageShares without_amax = plan;
  without_amax.amax_comm_s.assign(plan.amax_comm_s.size(), 0);
  const StepResult without = pipeline_breakdown(simulate_pipeline(plan.plan, *node), without_amax);
  CHECK(step.data_comm_s - without.data_comm_s == Approx(plan.amax_comm_s[step.critical_stage]));
  CHECK(without.bubble_s - step.bubble_s == Approx(plan.amax_comm_s[step.critical_stage]));
}

}  // namespace
}  // namespace clustersim
