// DeepSpeed's PipelineEngine as Megatron-DeepSpeed drove it in 2021-2022
// (parallelism.deepspeed_pipeline_engine): which configurations it runs, and the order in which
// a stage sends and receives between two of its tasks. Facts from deepspeed/runtime/pipe/
// (v0.5.4 to v0.6.4): schedule.py TrainSchedule issues per step "RecvActivation, SendGrad,
// ForwardPass" or "SendActivation, RecvGrad, BackwardPass", each send or receive a blocking NCCL
// call (p2p.py: dist.send / dist.recv, async_op unsupported) that completes once its partner has
// posted the matching call and the tensor has crossed; engine.py refuses ZeRO stages 2 and 3
// ("ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism") and runs BF16 only through
// its BF16 optimizer under ZeRO stage 0 (bf16 with ZeRO-1 raises NotImplementedError).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/io/schema/job.pb.h"
#include "sim/io/schema/parallelism.pb.h"
#include "sim/parallel/pipeline_schedule.h"

namespace clustersim {

// Why DeepSpeed's pipeline engine cannot run `p` in `precision` (empty when it can, or when the
// switch is off): no pipeline, a schedule other than 1F1B, ZeRO stage 2 or 3, BF16 without the
// BF16 optimizer's own sharding (distributed_optimizer) or with ZeRO-1 or 16-bit gradient
// reduction, a precision other than FP32, FP16 or BF16, or overlapped data-parallel reduction,
// parameter gather or stage-to-stage communication (the engine overlaps none of them).
std::string deepspeed_pipeline_problem(const schema::Parallelism& p, schema::Precision precision);

// One blocking call of a stage to its neighbour: send the output of `task` (to the next stage
// for a forward, the previous one for a backward), or receive the input of `task`.
struct PipelineExchange {
  bool send;
  PipelineTask task;
};

// The calls stage `stage` of `stages` makes, in order, after its task `done` (none: before its
// first task) and before its task `next` (none: after its last), as TrainSchedule orders them:
//   after a forward: send its activation, then receive `next`'s input;
//   after a backward: receive `next`'s input, then send its gradient when `next` is a forward;
//   send the gradient first when `next` is a backward (cool-down) or there is none.
// A stage has no input for a first-stage forward or a last-stage backward, and sends nothing
// onward from a last-stage forward or a first-stage backward. Requires: one model chunk.
std::vector<PipelineExchange> deepspeed_exchange(const std::optional<PipelineTask>& done,
                                                 const std::optional<PipelineTask>& next, int stage,
                                                 int stages);

}  // namespace clustersim
