// DeepSpeed's pipeline engine: the configurations it refuses and its send/receive order.
#include "sim/parallel/deepspeed_pipeline.h"

namespace clustersim {

namespace s = schema;

std::string deepspeed_pipeline_problem(const s::Parallelism& p, s::Precision precision) {
  if (!p.deepspeed_pipeline_engine()) return "";
  if (p.pipeline_parallel() < 2) return "DeepSpeed's pipeline engine needs pipeline parallel > 1";
  if (p.schedule() != s::ONE_F_ONE_B) {
    return "DeepSpeed's pipeline engine runs its 1F1B TrainSchedule only";
  }
  if (p.zero_stage() >= 2) {
    return "DeepSpeed refuses ZeRO-2 and ZeRO-3 with pipeline parallelism";
  }
  if (precision != s::FP32 && precision != s::FP16 && precision != s::BF16) {
    return "DeepSpeed's pipeline engine trains in FP32, FP16 or BF16";
  }
  if (precision == s::BF16) {
    if (p.zero_stage() > 0) return "DeepSpeed's pipeline engine runs BF16 under ZeRO stage 0 only";
    if (!p.distributed_optimizer()) {
      return "DeepSpeed's BF16 optimizer shards its fp32 states over data parallelism: set "
             "distributed_optimizer";
    }
    if (p.has_gradient_reduce_in_fp32() && !p.gradient_reduce_in_fp32()) {
      return "DeepSpeed's BF16 optimizer all-reduces fp32 gradients";
    }
  }
  if (p.overlap_gradient_reduce() || p.overlap_parameter_gather() ||
      p.overlap_pipeline_communication()) {
    return "DeepSpeed's pipeline engine overlaps neither its gradient reduction, its parameter "
           "gather nor its stage-to-stage sends with compute";
  }
  return "";
}

namespace {

// Whether `task` on `stage` receives an input / sends an output (one model chunk).
bool has_input(const PipelineTask& task, int stage, int stages) {
  return task.forward ? stage > 0 : stage < stages - 1;
}
bool has_output(const PipelineTask& task, int stage, int stages) {
  return task.forward ? stage < stages - 1 : stage > 0;
}

}  // namespace

std::vector<PipelineExchange> deepspeed_exchange(const std::optional<PipelineTask>& done,
                                                 const std::optional<PipelineTask>& next, int stage,
                                                 int stages) {
  const bool send = done && has_output(*done, stage, stages);
  const bool receive = next && has_input(*next, stage, stages);
  // TrainSchedule's forward step receives before it sends the previous backward's gradient.
  const bool receive_first = done && !done->forward && next && next->forward;
  PipelineExchange calls[2] = {};
  int n = 0;
  if (receive && receive_first) calls[n++] = {false, *next};
  if (send) calls[n++] = {true, *done};
  if (receive && !receive_first) calls[n++] = {false, *next};
  return std::vector<PipelineExchange>(calls, calls + n);
}

}  // namespace clustersim
