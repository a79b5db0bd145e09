// Tests of the deferred output-layer weight gradients (parallelism.defer_output_weight_gradient,
// Megatron-Core's defer_embedding_wgrad_compute): the step against the 1F1B closed forms when the
// last stage's GEMMs move into the flush, the limit, the plan's GEMM and count, and the memory the
// kept tensors take.
#include "sim/parallel/output_weight_gradient_deferral.h"

#include <catch2/catch.hpp>
#include <string>

#include "sim/parallel/memory_model.h"
#include "sim/parallel/pipeline_simulation.h"
#include "sim/parallel/transformer_stages.h"
#include "tests/testing/cluster.h"
#include "tests/testing/llama8b_b200_fp8_stage.h"
#include "tests/testing/parse_message.h"
#include "tests/testing/units.h"

namespace clustersim {
namespace {

namespace s = schema;
using testing::ms;

// A 1F1B pipeline of `stages` stages, `micro_batches` micro-batches, every stage's forward f and
// backward b, the last stage's backward b + w (its output layer's weight gradient w), of which
// the first `deferred` micro-batches' w move into the flush. Transfers cost only their latency.
PipelinePlan last_stage_plan(int stages, int micro_batches, double f, double b, double w,
                             int deferred, int chunks = 1) {
  PipelinePlan plan;
  plan.schedule = chunks > 1 ? s::INTERLEAVED_ONE_F_ONE_B : s::ONE_F_ONE_B;
  plan.stages = stages;
  plan.chunks = chunks;
  plan.micro_batches = micro_batches;
  plan.activation_bytes = 1;
  StageWork work{ms(f), ms(b), Picoseconds(0)};
  work.gpu_sms = 132;
  plan.work.assign(stages, work);
  StageWork& last = plan.work.back();
  last.chunk_forward.assign(chunks, ms(f));
  last.chunk_backward.assign(chunks, ms(b));
  last.chunk_backward.back() = ms(b + w);
  last.deferred_output_micro_batches = deferred;
  last.output_weight_gradient = ms(w);
  return plan;
}

double deferral_step_ms(const PipelinePlan& plan, const Topology& topology,
                        PipelineShortcuts shortcuts = {}) {
  return simulate_pipeline(plan, topology, nullptr, shortcuts).step.seconds() * 1e3;
}

TEST_CASE("deferred output weight gradients leave the last stage's backwards for the flush") {
  auto t = testing::shipped_cluster("aws.p5.48xlarge", 1);
  const int p = 4, m = 8;
  const double f = 1, b = 2;
  // Without deferral the last stage paces the pipeline: (p - 1)(f + b) + m (f + b + w).
  for (double w : {0.5, 1.0}) {
    INFO("w " << w);
    CHECK(deferral_step_ms(last_stage_plan(p, m, f, b, w, 0), *t) ==
          Approx((p - 1) * (f + b) + m * (f + b + w)).margin(0.05));
  }
  // All m deferred: the stages are alike, (m + p - 1)(f + b), and the last stage runs its m w
  // while the (p - 1) b of the other stages' last backwards drain: hidden while m w <= (p - 1) b,
  // the step shorter by exactly m w (w 0.5: 4 of 6 ms), otherwise by (p - 1) b only (w 1: 8 ms).
  CHECK(deferral_step_ms(last_stage_plan(p, m, f, b, 0.5, m), *t) ==
        Approx((m + p - 1) * (f + b)).margin(0.05));
  CHECK(deferral_step_ms(last_stage_plan(p, m, f, b, 1.0, m), *t) ==
        Approx((m + p - 1) * (f + b) + (m * 1.0 - (p - 1) * b)).margin(0.05));
  // The limit: the first 2 of 8 deferred shorten the step by their 2 w, the later 6 compute in
  // place; the shortcut over the steady state is off for such a step and changes nothing.
  const PipelinePlan limited = last_stage_plan(p, m, f, b, 0.5, 2);
  CHECK(deferral_step_ms(limited, *t) ==
        Approx((p - 1) * (f + b) + m * (f + b + 0.5) - 2 * 0.5).margin(0.05));
  CHECK(deferral_step_ms(limited, *t) == deferral_step_ms(limited, *t, {true, false}));
}

TEST_CASE("deferral moves no compute off the last stage, and lengthens a step it does not pace") {
  auto t = testing::shipped_cluster("aws.p5.48xlarge", 1);
  // Interleaved, 2 chunks, the last stage pacing: only the last chunk (the output layer's)
  // defers. Whether the flush hides all of it or not, the step is no longer than in place, and
  // each stage computes as long in all.
  for (double w : {0.2, 0.5, 3.0}) {
    INFO("w " << w);
    const PipelinePlan in_place = last_stage_plan(4, 8, 0.5, 1, w, 0, 2);
    const PipelinePlan deferred = last_stage_plan(4, 8, 0.5, 1, w, 8, 2);
    const PipelineTimeline a = simulate_pipeline(in_place, *t);
    const PipelineTimeline d = simulate_pipeline(deferred, *t);
    CHECK(d.step <= a.step);
    CHECK(d.stages.back().busy == a.stages.back().busy);
    CHECK(d.stages.front().busy == a.stages.front().busy);
  }
  // Two stages, the first pacing (backward 3 ms against the last stage's 1 + w, w = 1): the
  // shorter backwards gain nothing, and the 8 ms of deferred GEMMs outlast the 3 ms the first
  // stage's last backward leaves the last one idle. Megatron-Core runs them so all the same.
  PipelinePlan in_place = last_stage_plan(2, 8, 1, 3, 1, 0);
  in_place.work.back().chunk_backward.back() = ms(2);
  PipelinePlan deferred = in_place;
  deferred.work.back().deferred_output_micro_batches = 8;
  const double longer = deferral_step_ms(deferred, *t) - deferral_step_ms(in_place, *t);
  CHECK(longer > 0);
  CHECK(longer <= 8 * 1.0 - 3 + 0.05);
}

// Llama 3 8B on one DGX B200 in 2 stages (DP 4, one 4096-token sequence a micro-batch, 4
// micro-batches a replica), its output layer on stage 1, with `extra` parallelism fields.
TransformerPlan llama8b_two_stages(const std::string& extra) {
  const Catalog& catalog = testing::shipped_catalog();
  auto topology = testing::shipped_cluster("onprem.dgx-b200", 1);
  const auto p = testing::parse_message<s::Parallelism>(
      "tensor_parallel: 1 pipeline_parallel: 2 context_parallel: 1 data_parallel: 4 "
      "micro_batch_size: 1 virtual_stages: 1 zero_stage: 0 schedule: ONE_F_ONE_B "
      "recompute: RECOMPUTE_NONE distributed_optimizer: true " +
      extra);
  const auto job = testing::parse_message<s::TrainingJob>(
      "global_batch_size: 16 sequence_length: 4096 precision: FP8 optimizer: ADAM steps: 1 "
      "fp8_parameters: true");
  const ComputeModel compute = testing::dgx_b200_fp8_compute(s::CURRENT_SCALING);
  return transformer_plan(*catalog.models().find("llama3-8b")->value, job, p, *topology, compute);
}

TEST_CASE("the plan defers the last stage's 16-bit logits weight-gradient GEMM, up to the limit") {
  const ComputeModel b200 = testing::dgx_b200_fp8_compute(s::CURRENT_SCALING);
  // The logits' weight gradient: (hidden 4096 x 4096 tokens).(4096 tokens x 128,256 vocabulary),
  // a 16-bit GEMM (Megatron's output layer is not a Transformer Engine module).
  const Picoseconds gemm = b200.matmul(4096, 128256, 4096, 1, true);
  const TransformerPlan all = llama8b_two_stages("defer_output_weight_gradient: true");
  CHECK(all.plan.work[1].deferred_output_micro_batches == 4);
  CHECK(all.plan.work[1].output_weight_gradient == gemm);
  CHECK(all.plan.work[0].deferred_output_micro_batches == 0);
  CHECK(all.plan.deferred_drain(1) == Picoseconds(4 * gemm.count()));
  const TransformerPlan three = llama8b_two_stages(
      "defer_output_weight_gradient: true output_weight_gradient_deferral_limit: 3");
  CHECK(three.plan.work[1].deferred_output_micro_batches == 3);
  CHECK(llama8b_two_stages("").plan.work[1].deferred_output_micro_batches == 0);
  // The backward of a deferred micro-batch is that GEMM shorter; the other one's is not.
  const TransformerPlan none = llama8b_two_stages("");
  const PipelineTask deferred{false, 0, 2}, in_place{false, 0, 3};
  CHECK(none.plan.task_duration(1, deferred) - three.plan.task_duration(1, deferred) == gemm);
  CHECK(none.plan.task_duration(1, in_place) == three.plan.task_duration(1, in_place));
}

TEST_CASE("the last stage holds every deferred micro-batch's logits gradient and input") {
  const Catalog& catalog = testing::shipped_catalog();
  const s::Model& model = *catalog.models().find("llama3-8b")->value;
  const auto job = testing::parse_message<s::TrainingJob>(
      "global_batch_size: 64 sequence_length: 8192 precision: BF16 optimizer: ADAM steps: 1");
  const auto plan = [](const std::string& extra) {
    return testing::parse_message<s::Parallelism>(
        "tensor_parallel: 2 pipeline_parallel: 2 context_parallel: 2 data_parallel: 2 "
        "micro_batch_size: 1 virtual_stages: 1 zero_stage: 0 schedule: ONE_F_ONE_B "
        "recompute: RECOMPUTE_NONE distributed_optimizer: true sequence_parallel: true " +
        extra);
  };
  // 32 micro-batches a replica, the first 22 deferred: each keeps its logits' gradient,
  // 8192 / CP 2 tokens x 128,256 / TP 2 vocabulary in 16 bits, and its input, the tokens x 4096
  // hidden over TP 2 (sequence parallel) in 16 bits.
  const double tokens = 8192 / 2;
  const double each = 2 * tokens * 128256 / 2 + 2 * tokens * 4096 / 2;
  CHECK(deferred_output_bytes(model.transformer(), job, plan("")) == Approx(each));
  const std::string limited =
      "defer_output_weight_gradient: true output_weight_gradient_deferral_limit: 22";
  const MemoryEstimate with = estimate_stage_memory(model, job, plan(limited), 1, 1e15, {});
  const MemoryEstimate without = estimate_stage_memory(model, job, plan(""), 1, 1e15, {});
  CHECK(with.deferred_output_bytes == Approx(22 * each));
  CHECK(with.total_bytes() - without.total_bytes() == Approx(22 * each));
  // The first stage keeps none; all 32 when the limit is 0 (all) or above them.
  CHECK(estimate_stage_memory(model, job, plan(limited), 0, 1e15, {}).deferred_output_bytes == 0);
  for (const char* all : {"output_weight_gradient_deferral_limit: 0",
                          "output_weight_gradient_deferral_limit: 50", ""}) {
    const MemoryEstimate e = estimate_stage_memory(
        model, job, plan(std::string("defer_output_weight_gradient: true ") + all), 1, 1e15, {});
    CHECK(e.deferred_output_bytes == Approx(32 * each));
  }
}


}  // namespace
}  // namespace clustersim
