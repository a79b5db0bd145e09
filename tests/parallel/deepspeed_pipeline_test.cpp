// DeepSpeed's pipeline engine: its send/receive order checked against TrainSchedule's own step
// arithmetic (deepspeed/runtime/pipe/schedule.py, re-derived here), the configurations it refuses,
// its gradient accumulation and buffer bytes, and its gathers of partitioned stage-boundary
// tensors in the step.
#include "sim/parallel/deepspeed_pipeline.h"

#include <catch2/catch.hpp>
#include <string>

#include "sim/net/collective.h"
#include "sim/parallel/memory_model.h"
#include "sim/parallel/optimizer_step.h"
#include "sim/parallel/transformer_stages.h"
#include "tests/testing/cluster.h"
#include "tests/testing/parse_message.h"

namespace clustersim {
namespace {

namespace s = schema;

// TrainSchedule's instruction stream of stage `stage` for `m` micro-batches on `p` stages, as
// "F3 " / "B3 " (compute), "sA3 rG2 " (send activation 3, receive gradient 2) and so on: steps
// alternate forward and backward by the parity of step and stage; step t of an even stage
// forwards micro-batch t / 2 - stage / 2, ... (_step_to_micro_batch); a forward step receives its
// activation, then sends the previous step's gradient; a backward step sends the previous step's
// activation, then receives its gradient; steps of no valid micro-batch compute nothing.
std::string train_schedule(int p, int m, int stage) {
  const auto valid = [&](int mb) { return mb >= 0 && mb < m; };
  std::string out;
  int previous = -1;
  for (int step = 0; step < 2 * (m + p - 1); ++step) {
    const bool even_step = step % 2 == 0, even_stage = stage % 2 == 0;
    const bool forward = even_step == even_stage;
    int mb = 0;
    if (even_step && even_stage) mb = step / 2 - stage / 2;
    if (!even_step && !even_stage) mb = (step - 1) / 2 - stage / 2;
    if (even_step && !even_stage) mb = step / 2 - p + (stage + 1) / 2;
    if (!even_step && even_stage) mb = (step - 1) / 2 - p + 1 + stage / 2;
    if (forward && stage > 0) {
      if (valid(mb)) out += "rA" + std::to_string(mb) + " ";
      if (valid(previous)) out += "sG" + std::to_string(previous) + " ";
    }
    if (!forward && stage < p - 1) {
      if (valid(previous)) out += "sA" + std::to_string(previous) + " ";
      if (valid(mb)) out += "rG" + std::to_string(mb) + " ";
    }
    if (valid(mb)) out += (forward ? "F" : "B") + std::to_string(mb) + " ";
    previous = mb;
  }
  return out;
}

// The same stage as the simulator runs it: the 1F1B task order with deepspeed_exchange's calls
// before, between and after the tasks.
std::string simulated(int p, int m, int stage) {
  std::string out;
  const auto calls = [&](const std::optional<PipelineTask>& done,
                         const std::optional<PipelineTask>& next) {
    for (const PipelineExchange& call : deepspeed_exchange(done, next, stage, p)) {
      out += std::string(call.send ? "s" : "r") + (call.task.forward ? "A" : "G") +
             std::to_string(call.task.micro_batch) + " ";
    }
  };
  std::optional<PipelineTask> done;
  for (const PipelineTask& task : stage_schedule(s::ONE_F_ONE_B, p, 1, m, stage)) {
    calls(done, task);
    out += (task.forward ? "F" : "B") + std::to_string(task.micro_batch) + " ";
    done = task;
  }
  calls(done, std::nullopt);
  return out;
}

TEST_CASE("the 1F1B tasks with deepspeed_exchange's calls are TrainSchedule's instruction stream") {
  for (int p : {2, 3, 4, 5, 8}) {
    for (int m : {1, 2, 3, 4, 9}) {
      for (int stage = 0; stage < p; ++stage) {
        INFO("p " << p << " m " << m << " stage " << stage);
        CHECK(simulated(p, m, stage) == train_schedule(p, m, stage));
      }
    }
  }
  // Spelled out once: the middle stage of 3, 2 micro-batches.
  CHECK(simulated(3, 2, 1) == "rA0 F0 sA0 rA1 F1 sA1 rG0 B0 sG0 rG1 B1 sG1 ");
}

s::Parallelism engine(const std::string& extra = "") {
  s::Parallelism p;
  p.set_pipeline_parallel(4);
  p.set_schedule(s::ONE_F_ONE_B);
  p.set_distributed_optimizer(true);
  p.set_deepspeed_pipeline_engine(true);
  p.set_overlap_gradient_reduce(extra == "overlap_gradient_reduce");
  p.set_overlap_parameter_gather(extra == "overlap_parameter_gather");
  p.set_overlap_pipeline_communication(extra == "overlap_pipeline_communication");
  return p;
}

TEST_CASE("DeepSpeed's pipeline engine refuses what its code refuses") {
  CHECK(deepspeed_pipeline_problem(engine(), s::BF16).empty());
  s::Parallelism off = engine("overlap_gradient_reduce");
  off.set_deepspeed_pipeline_engine(false);
  CHECK(deepspeed_pipeline_problem(off, s::FP8).empty());

  s::Parallelism p = engine();
  p.set_pipeline_parallel(1);
  CHECK(deepspeed_pipeline_problem(p, s::BF16) ==
        "DeepSpeed's pipeline engine needs pipeline parallel > 1");
  p = engine();
  p.set_schedule(s::INTERLEAVED_ONE_F_ONE_B);
  CHECK(deepspeed_pipeline_problem(p, s::BF16) ==
        "DeepSpeed's pipeline engine runs its 1F1B TrainSchedule only");
  for (int zero : {2, 3}) {
    p = engine();
    p.set_distributed_optimizer(false);
    p.set_zero_stage(zero);
    CHECK(deepspeed_pipeline_problem(p, s::FP16) ==
          "DeepSpeed refuses ZeRO-2 and ZeRO-3 with pipeline parallelism");
  }
  CHECK(deepspeed_pipeline_problem(engine(), s::FP8) ==
        "DeepSpeed's pipeline engine trains in FP32, FP16 or BF16");
  p = engine();
  p.set_distributed_optimizer(false);
  p.set_zero_stage(1);
  CHECK(deepspeed_pipeline_problem(p, s::FP16).empty());
  CHECK(deepspeed_pipeline_problem(p, s::BF16) ==
        "DeepSpeed's pipeline engine runs BF16 under ZeRO stage 0 only");
  p.set_zero_stage(0);
  CHECK(deepspeed_pipeline_problem(p, s::BF16) ==
        "DeepSpeed's BF16 optimizer shards its fp32 states over data parallelism: set "
        "distributed_optimizer");
  p = engine();
  p.set_gradient_reduce_in_fp32(false);
  CHECK(deepspeed_pipeline_problem(p, s::BF16) ==
        "DeepSpeed's BF16 optimizer all-reduces fp32 gradients");
  for (const char* overlap :
       {"overlap_gradient_reduce", "overlap_parameter_gather", "overlap_pipeline_communication"}) {
    INFO(overlap);
    CHECK(deepspeed_pipeline_problem(engine(overlap), s::BF16) ==
          "DeepSpeed's pipeline engine overlaps neither its gradient reduction, its parameter "
          "gather nor its stage-to-stage sends with compute");
  }
}

TEST_CASE("DeepSpeed accumulates gradients in a pass of its own: fp32 under BF16, else in place") {
  // bf16_optimizer.py update_hp_grads: read bf16 2 + fp32 4, write fp32 4.
  CHECK(gradient_accumulation_bytes(s::BF16, true) == 10);
  CHECK(gradient_accumulation_bytes(s::FP16, true) == 6);
  CHECK(gradient_accumulation_bytes(s::FP32, true) == 12);
  // Megatron-Core fuses it into the weight-gradient GEMM.
  CHECK(gradient_accumulation_bytes(s::BF16, false) == 0);
  // The BF16 optimizer holds fp32 gradients beside the bf16 ones of the last backward.
  CHECK(gradient_buffer_bytes(engine(), s::BF16) == 6);
  CHECK(gradient_buffer_bytes(engine(), s::FP16) == 4);
}

// Llama 2 7B (h 4096) over TP 2 x PP 4 on one p5 node, 6 micro-batches of 4096 tokens, BF16.
TransformerPlan llama_plan(bool deepspeed) {
  const Catalog& catalog = testing::shipped_catalog();
  auto topology = testing::shipped_cluster("aws.p5.48xlarge", 1);
  auto p = testing::parse_message<s::Parallelism>(
      "tensor_parallel: 2 pipeline_parallel: 4 data_parallel: 1 context_parallel: 1 "
      "micro_batch_size: 1 virtual_stages: 1 zero_stage: 0 schedule: ONE_F_ONE_B "
      "recompute: RECOMPUTE_NONE distributed_optimizer: true overlap_gradient_reduce: false "
      "overlap_parameter_gather: false overlap_pipeline_communication: false");
  p.set_deepspeed_pipeline_engine(deepspeed);
  const auto job = testing::parse_message<s::TrainingJob>(
      "global_batch_size: 6 sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 1");
  const ComputeModel compute(catalog.gpu_of(*catalog.instances().find("aws.p5.48xlarge")->value),
                             s::BF16, *catalog.runtimes().find("default")->value,
                             KernelSetting::kTrainingStep);
  return transformer_plan(*catalog.models().find("llama2-7b")->value, job, p, *topology, compute);
}

TEST_CASE("DeepSpeed gathers its partitioned stage-boundary tensors over tensor parallelism") {
  // Per micro-batch: the received input before a forward (not on the first stage), the freed
  // output and the received gradient before a backward (not on the last): 2, 3, 3, 1 gathers of
  // the 2 x 4096 x 4096-byte tensor over the tensor-parallel pair.
  auto topology = testing::shipped_cluster("aws.p5.48xlarge", 1);
  const double gather =
      collective_time(*topology, {CollectiveOp::kAllGather, {0, 1}, 2.0 * 4096 * 4096,
                                  CollectiveAlgorithm::kAuto})
          .seconds();
  const TransformerPlan megatron = llama_plan(false), deepspeed = llama_plan(true);
  const int gathers[] = {2, 3, 3, 1};
  for (int r = 0; r < 4; ++r) {
    INFO("stage " << r);
    CHECK(deepspeed.tensor_comm_s[r] - megatron.tensor_comm_s[r] ==
          Approx(6 * gathers[r] * gather).epsilon(1e-6));
  }
}

}  // namespace
}  // namespace clustersim
