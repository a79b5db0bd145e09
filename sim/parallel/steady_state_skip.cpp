// Finding a repeated pipeline state among the cuts of a run, and how far its schedules repeat.
#include "sim/parallel/steady_state_skip.h"

#include <algorithm>
#include <limits>

#include "sim/util/check.h"

namespace clustersim {

SteadyStateSkip::SteadyStateSkip(std::vector<StageSchedule> schedules)
    : schedules_(std::move(schedules)) {}

std::optional<SteadyStateJump> SteadyStateSkip::record(PipelineCut cut) {
  ++cuts_seen_;
  if (!cut.state.comparable()) return std::nullopt;
  const uint64_t hash = cut.state.hash();
  // One cut is kept per state: the latest, which gives the shortest period.
  auto [begin, end] = cuts_by_hash_.equal_range(hash);
  const auto same = std::find_if(
      begin, end, [&](const auto& entry) { return cuts_[entry.second].state == cut.state; });
  if (same == end) {
    cuts_by_hash_.emplace(hash, cuts_.size());
    cuts_.push_back(std::move(cut));
    return std::nullopt;
  }
  PipelineCut& from = cuts_[same->second];
  CLUSTERSIM_CHECK(cut.next_task[0] > from.next_task[0], "a period in which stage 0 ran nothing");
  const size_t tasks = cut.next_task[0] - from.next_task[0];
  const int micro_batches = cut.micro_batch - from.micro_batch;
  const int64_t periods = periods_repeated(from, tasks, micro_batches);
  if (periods <= 0) {
    from = std::move(cut);
    return std::nullopt;
  }
  found_ = true;
  SteadyStateJump jump{periods,
                       Picoseconds(periods * (cut.time - from.time).count()),
                       static_cast<int>(periods * micro_batches),
                       periods * tasks,
                       {},
                       {},
                       {},
                       {}};
  for (size_t r = 0; r < schedules_.size(); ++r) {
    jump.busy.push_back(Picoseconds(periods * (cut.busy[r] - from.busy[r]).count()));
    jump.stretch.push_back(Picoseconds(periods * (cut.stretch[r] - from.stretch[r]).count()));
    jump.expert_wait.push_back(
        Picoseconds(periods * (cut.expert_wait[r] - from.expert_wait[r]).count()));
    jump.expert_scale_out.push_back(
        Picoseconds(periods * (cut.expert_scale_out[r] - from.expert_scale_out[r]).count()));
  }
  return jump;
}

int64_t SteadyStateSkip::periods_repeated(const PipelineCut& from, size_t tasks,
                                          int micro_batches) const {
  // The run in state `from` reads (starts, or looks at before starting) tasks [next, next + a] of
  // each stage in the first period, and their images n periods on in the (n + 1)-th; its state
  // holds inputs of tasks up to `furthest`. Those are the first period's shifted when task i + a
  // is task i shifted for every i in [next, furthest + n a]:
  // n = (tasks that repeat from next - 1 - (furthest - next)) / a. The current cut is one period
  // on, so that many periods can be skipped from it.
  int64_t periods = std::numeric_limits<int64_t>::max();
  for (size_t r = 0; r < schedules_.size(); ++r) {
    const StageSchedule& s = schedules_[r];
    size_t i = from.next_task[r];
    for (; i + tasks < s.tasks.size(); ++i) {
      const PipelineTask& a = s.tasks[i];
      const PipelineTask& b = s.tasks[i + tasks];
      if (a.forward != b.forward || a.chunk != b.chunk || a.combined != b.combined ||
          a.micro_batch + micro_batches != b.micro_batch ||
          s.last_backward_of_chunk[i] != s.last_backward_of_chunk[i + tasks]) {
        break;
      }
    }
    const size_t repeating = i - from.next_task[r];
    const size_t ahead = from.furthest_task[r] - from.next_task[r];
    if (repeating <= ahead) return 0;
    periods = std::min(periods, static_cast<int64_t>((repeating - 1 - ahead) / tasks));
  }
  return periods;
}

}  // namespace clustersim
