// Task orders of the pipeline schedules.
#include "sim/parallel/pipeline_schedule.h"

#include <algorithm>

#include "sim/parallel/dualpipe_schedule.h"
#include "sim/util/check.h"

namespace clustersim {

long micro_batches_per_replica(const schema::TrainingJob& job, const schema::Parallelism& p) {
  return job.global_batch_size() / (static_cast<long>(p.micro_batch_size()) * p.data_parallel());
}

std::vector<PipelineTask> stage_schedule(schema::PipelineSchedule schedule, int stages, int chunks,
                                         int micro_batches, int stage, bool expert_overlap,
                                         int runs) {
  if (runs > 1) {
    CLUSTERSIM_CHECK(micro_batches % runs == 0, "pipeline runs divide the micro-batches");
    const int each = micro_batches / runs;
    const std::vector<PipelineTask> one =
        stage_schedule(schedule, stages, chunks, each, stage, expert_overlap);
    std::vector<PipelineTask> tasks;
    for (int k = 0; k < runs; ++k) {
      for (PipelineTask t : one) {
        t.micro_batch += k * each;
        t.run = k;
        tasks.push_back(t);
      }
    }
    return tasks;
  }
  if (is_dualpipe(schedule)) return dualpipe_schedule(schedule, stages, micro_batches, stage);
  const int total = micro_batches * chunks;
  auto nth = [&](int k, bool forward) {
    const int group = k / stages;
    int chunk = group % chunks;
    if (!forward) chunk = chunks - 1 - chunk;
    return PipelineTask{forward, chunk, (k / (stages * chunks)) * stages + k % stages};
  };
  std::vector<PipelineTask> tasks;
  if (schedule == schema::GPIPE) {
    for (int i = 0; i < micro_batches; ++i) tasks.push_back({true, 0, i});
    for (int i = 0; i < micro_batches; ++i) tasks.push_back({false, 0, i});
    return tasks;
  }
  const int warmup =
      (chunks > 1 ? 2 * (stages - stage - 1) + (chunks - 1) * stages : stages - stage - 1) +
      (expert_overlap ? 1 : 0);
  const int first = std::min(warmup, total);
  int forwards = 0, backwards = 0;
  for (; forwards < first; ++forwards) tasks.push_back(nth(forwards, true));
  while (forwards < total) {
    tasks.push_back(nth(forwards++, true));
    tasks.push_back(nth(backwards++, false));
    tasks.end()[-1].combined = tasks.end()[-2].combined = expert_overlap;
  }
  while (backwards < total) tasks.push_back(nth(backwards++, false));
  return tasks;
}

}  // namespace clustersim
