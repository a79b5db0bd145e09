// DualPipe's and DualPipeV's task order (dualpipe_schedule.h).
#include "sim/parallel/dualpipe_schedule.h"

#include <algorithm>
#include <deque>
#include <string>

#include "sim/util/check.h"

namespace clustersim {
namespace {

// Appends the tasks of one stage in the source's order, numbering each chunk's micro-batches and
// keeping the deferred weight gradients first in, first out.
class DualPipeTasks {
 public:
  explicit DualPipeTasks(int near_chunk) : near_(near_chunk) {}

  void forward(bool near, bool paired = false) {
    const int chunk = chunk_of(near);
    tasks_.push_back({true, chunk, forwards_[chunk]++, paired});
  }
  void backward(bool near, bool input_only = false, bool paired = false) {
    const int chunk = chunk_of(near);
    PipelineTask t{false, chunk, backwards_[chunk]++, paired};
    t.input_only = input_only;
    if (input_only) deferred_.push_back(t);
    tasks_.push_back(t);
  }
  void weight() {
    CLUSTERSIM_CHECK(!deferred_.empty(), "a weight gradient without a deferred backward");
    PipelineTask t = deferred_.front();
    deferred_.pop_front();
    t.input_only = false;
    t.weight_only = true;
    tasks_.push_back(t);
  }
  std::vector<PipelineTask> done() {
    CLUSTERSIM_CHECK(deferred_.empty(), "deferred weight gradients left at the step's end");
    return std::move(tasks_);
  }

 private:
  int chunk_of(bool near) const { return near ? near_ : 1 - near_; }

  int near_;
  int forwards_[2] = {0, 0}, backwards_[2] = {0, 0};
  std::deque<PipelineTask> deferred_;
  std::vector<PipelineTask> tasks_;
};

}  // namespace

bool is_dualpipe(schema::PipelineSchedule schedule) {
  return schedule == schema::DUALPIPE || schedule == schema::DUALPIPE_V;
}

std::string dualpipe_problem(schema::PipelineSchedule schedule, int stages, long micro_batches) {
  if (schedule == schema::DUALPIPE_V) {
    if (stages < 1 || micro_batches < 2L * stages) {
      return "DUALPIPE_V needs at least 2 x pipeline parallel micro-batches per replica";
    }
    return "";
  }
  if (stages < 2 || stages % 2 != 0) {
    return "DUALPIPE needs an even pipeline parallel of at least 2";
  }
  if (micro_batches % 2 != 0 || micro_batches < 2L * stages) {
    return "DUALPIPE needs an even number of micro-batches per replica, at least 2 x pipeline "
           "parallel";
  }
  return "";
}

std::vector<PipelineTask> dualpipe_schedule(schema::PipelineSchedule schedule, int stages,
                                            int micro_batches, int stage) {
  CLUSTERSIM_CHECK(is_dualpipe(schedule) &&
                       dualpipe_problem(schedule, stages, micro_batches).empty(),
                   "an invalid DualPipe");
  const bool v = schedule == schema::DUALPIPE_V;
  const int n = v ? stages : stages / 2;
  const int h = v ? stage : std::min(stage, stages - 1 - stage);
  const int m = v ? micro_batches : micro_batches / 2;
  DualPipeTasks s(!v && stage >= n ? 1 : 0);
  for (int i = 0; i < 2 * (n - h - 1); ++i) s.forward(true);
  for (int i = 0; i <= h; ++i) {
    s.forward(true);
    s.forward(false);
  }
  for (int i = 0; i < n - h - 1; ++i) {
    s.backward(false, true);
    s.weight();
    s.forward(false);
  }
  for (int i = 0; i < m - 2 * n + h + 1; ++i) {
    const bool apart = i == 0 && h == n - 1;
    s.forward(true, !apart);
    s.backward(false, false, !apart);
    s.forward(false, true);
    s.backward(true, false, true);
  }
  for (int i = 0; i < n - h - 1; ++i) {
    s.backward(false);
    s.forward(false, true);
    s.backward(true, false, true);
  }
  bool input_only = false;
  for (int i = 0; i <= h; ++i) {
    if (i == (h + 1) / 2 && h % 2 == 1) input_only = true;
    s.backward(false, input_only);
    if (i == (h + 1) / 2 && h % 2 == 0) input_only = true;
    s.backward(true, input_only);
  }
  for (int i = 0; i < n - h - 1; ++i) {
    s.weight();
    s.backward(true, true);
  }
  for (int i = 0; i <= h; ++i) s.weight();
  return s.done();
}

int dualpipe_chunks_in_flight(schema::PipelineSchedule schedule, int stages, int micro_batches,
                              int stage) {
  int held = 0, most = 0;
  for (const PipelineTask& t : dualpipe_schedule(schedule, stages, micro_batches, stage)) {
    held += t.forward ? 1 : t.input_only ? 0 : -1;
    most = std::max(most, held);
  }
  return most;
}

}  // namespace clustersim
