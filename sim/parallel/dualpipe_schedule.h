// The task orders of DeepSeek-V3's DualPipe schedule (DeepSeek-V3 Technical Report,
// arXiv:2412.19437 section 3.2.1, Figure 5; deepseek-ai/DualPipe@3da1bbe dualpipe/dualpipe.py
// DualPipe.step) and of DualPipeV, the same cut in half (dualpipe/dualpipev.py DualPipeV.step),
// on the pipeline's `stages` GPUs.
//
// DualPipe cuts the model into `stages` pieces and lays them out twice, in opposite directions:
// chunk 0 of stage r holds piece r (its micro-batches enter at stage 0 and run towards the last
// stage), chunk 1 holds piece stages - 1 - r (entering at the last stage, running towards stage
// 0). Half of the micro-batches take each direction, numbered 0 .. micro_batches / 2 - 1 in each.
// DualPipeV cuts it into 2 x stages pieces: chunk 0 of stage r holds piece r, chunk 1 piece
// 2 stages - 1 - r; every micro-batch runs down through the chunks 0 and back up through the
// chunks 1 (the last stage feeding itself at the turn), numbered 0 .. micro_batches - 1.
//
// Both run one order. With n the stages of a direction's first half (DualPipe stages / 2,
// DualPipeV stages), h the stage's place in it (DualPipe min(r, stages - 1 - r), DualPipeV r),
// M the micro-batches a chunk runs, a "near" chunk (the one holding a piece of the first half:
// DualPipe chunk 0 on stages below stages / 2, else chunk 1; DualPipeV chunk 0) and a "far" one,
// a stage runs, in the source's eight steps:
//   1. 2 (n - h - 1) near forwards;
//   2. h + 1 times a near forward, a far forward;
//   3. n - h - 1 times a far input-gradient backward, the oldest deferred weight gradient, a far
//      forward;
//   4. M - 2 n + h + 1 times a near forward paired with a far backward, then a far forward paired
//      with a near backward (on the stages with h = n - 1 the first near forward and far backward
//      run unpaired);
//   5. n - h - 1 times a far backward, then a far forward paired with a near backward;
//   6. h + 1 times a far backward, a near backward, the second half of them (from the middle,
//      the far one first when h is odd) input-gradient only;
//   7. n - h - 1 times the oldest deferred weight gradient, a near input-gradient backward;
//   8. h + 1 deferred weight gradients;
// deferred weight gradients running first in, first out (the source's WeightGradStore).
// A pair is listed forward first, both `combined`: it starts once both have their inputs and
// sends both outputs once both are over (the source receives both, computes both, sends both),
// its halves overlapped (expert_comm_overlap.h) where the plan has combined times.
// Deviation: the source's stages with h = n - 1 hold the output of their last step-2 forward
// back until after their first step-4 forward; here every output leaves when its task (pair)
// ends.
#pragma once

#include <string>
#include <vector>

#include "sim/io/schema/parallelism.pb.h"
#include "sim/parallel/pipeline_schedule.h"

namespace clustersim {

// DUALPIPE or DUALPIPE_V.
bool is_dualpipe(schema::PipelineSchedule schedule);

// Requires: is_dualpipe(schedule), dualpipe_problem(...) empty, 0 <= stage < stages.
std::vector<PipelineTask> dualpipe_schedule(schema::PipelineSchedule schedule, int stages,
                                            int micro_batches, int stage);

// The most model chunks whose activations stage `stage` holds at once: each from its forward's
// start until its backward, or its deferred weight gradient, ends (the pieces + 1 on every
// stage, the report's Table 2). Requires: as dualpipe_schedule.
int dualpipe_chunks_in_flight(schema::PipelineSchedule schedule, int stages, int micro_batches,
                              int stage);

// Why `stages` and `micro_batches` (per replica) cannot run the schedule as its source asserts
// (DualPipe: an even number of stages, an even number of micro-batches, at least 2 x stages;
// DualPipeV: at least 2 x stages micro-batches), or "" when they can.
std::string dualpipe_problem(schema::PipelineSchedule schedule, int stages, long micro_batches);

}  // namespace clustersim
