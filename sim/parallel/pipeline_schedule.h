// The order in which a pipeline stage runs its forward and backward tasks under GPipe, 1F1B and
// interleaved 1F1B (Megatron-LM's schedules).
#pragma once

#include <vector>

#include "sim/io/schema/job.pb.h"
#include "sim/io/schema/parallelism.pb.h"

namespace clustersim {

struct PipelineTask {
  bool forward;
  int chunk;  // model chunk on this stage (0 unless interleaved)
  int micro_batch;
  // Run as one step with the task beside it in the steady state (expert_comm_overlap.h).
  bool combined = false;
  int run = 0;  // which of the step's pipeline runs (parallelism.pipeline_runs) it belongs to
  // A zero-bubble backward split (dualpipe_schedule.h): a backward computing the input gradient
  // only, its weight gradient left for a later `weight_only` task of the same chunk and
  // micro-batch (forward false), which needs no input and sends nothing.
  bool input_only = false;
  bool weight_only = false;
};

// A data-parallel replica's micro-batches a step, all its pipeline runs together: the global batch
// over micro-batch x DP (the configuration's checks make it divide).
long micro_batches_per_replica(const schema::TrainingJob& job, const schema::Parallelism& p);

// Tasks of stage `stage` of `stages`, with `chunks` model chunks per stage and `micro_batches`
// micro-batches per step, in execution order.
//   GPipe: every forward, then every backward.
//   1F1B: min(p - r - 1, m) forwards, then one forward and one backward alternately, then the
//   remaining backwards.
//   Interleaved: as 1F1B with 2(p - r - 1) + (v - 1) p warm-up forwards; the k-th forward runs
//   chunk (k / p) mod v of micro-batch (k / (p v)) p + k mod p, backwards the chunks in reverse.
// With `expert_overlap` (Megatron-Core's combined 1F1B, pipeline_parallel/combined_1f1b.py and
// schedules.py get_pp_rank_microbatches): one more warm-up forward, and every forward and backward
// of the alternating steady state is `combined`; without a pipeline one forward runs alone first.
// With `runs` > 1 the micro-batches run as that many such schedules one after another, of
// micro_batches / runs each (run k's micro-batches numbered after run k - 1's), each filled and
// drained (parallelism.pipeline_runs).
// DualPipe and DualPipeV: dualpipe_schedule.h.
// Requires: runs dividing micro_batches; for interleaving, micro_batches / runs divisible by
// stages; for `expert_overlap` with stages > 1, the interleaved or DualPipe schedule; for
// DualPipe what dualpipe_schedule requires.
std::vector<PipelineTask> stage_schedule(schema::PipelineSchedule schedule, int stages, int chunks,
                                         int micro_batches, int stage, bool expert_overlap = false,
                                         int runs = 1);

}  // namespace clustersim
