// Exact skipping of a pipeline's periodic steady state. A pipeline run is deterministic. Suppose
// its whole state at one instant (a "cut") equals its state at an earlier cut, shifted by P in
// time, by D in micro-batch numbers and by `a` tasks on every stage's schedule (equal state
// records, state_fingerprint.h, written relative to the time, a micro-batch and a position), and
// every stage's schedule repeats with that shift: task i + a is task i with its micro-batch
// D later, for every task the run can reach in the next n periods. Then, by induction over the
// periods, the state n periods on is this one shifted n times, so the run may jump there by
// moving its clock and relabelling its state, and continue with exactly the events and results
// of a full simulation. 1F1B and interleaved schedules repeat between their warm-up and cool-down
// (the forwards and backwards alternate), GPipe's never does; the state repeats once transfers
// and compute have settled into a periodic pattern, which on an integer picosecond clock is exact.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "sim/engine/state_fingerprint.h"
#include "sim/parallel/pipeline_schedule.h"

namespace clustersim {

// One stage's schedule as the run executes it.
struct StageSchedule {
  std::span<const PipelineTask> tasks;
  std::span<const char> last_backward_of_chunk;  // by task: starts the gradient reduction
};

// The run at one instant, with its state written relative to `time`, to the micro-batch number
// `micro_batch` and to stage 0's next task.
struct PipelineCut {
  StateFingerprint state;
  Picoseconds time;
  int micro_batch;
  std::vector<size_t> next_task;  // per stage
  // Per stage: the furthest task the state refers to, the next one or one whose input the stage
  // holds or is being sent (a stage behind its upstream).
  std::vector<size_t> furthest_task;
  std::vector<Picoseconds> busy;  // per stage: compute time so far
  std::vector<Picoseconds> stretch;  // per stage: what collectives' SMs added to it so far
  // Per stage: what the traffic beside its expert all-to-alls added to them so far, and how long
  // their traffic across NVLink domains was in flight.
  std::vector<Picoseconds> expert_wait;
  std::vector<Picoseconds> expert_scale_out;
};

// What a run skips: `periods` periods of the steady state in all.
struct SteadyStateJump {
  int64_t periods;
  Picoseconds time;
  int micro_batches;
  size_t tasks;                   // on every stage
  std::vector<Picoseconds> busy;  // compute time per stage
  std::vector<Picoseconds> stretch;  // per stage: what collectives' SMs added to it
  std::vector<Picoseconds> expert_wait;  // per stage: what traffic added to its all-to-alls
  std::vector<Picoseconds> expert_scale_out;  // per stage: its all-to-alls' traffic in flight
};

class SteadyStateSkip {
 public:
  explicit SteadyStateSkip(std::vector<StageSchedule> schedules);

  // Records the cut at the run's current instant (cuts come in time order). When its state is
  // that of the latest earlier cut in it, returns the jump that proves: from this cut to the
  // furthest later state the schedules allow, never past a task whose schedule stops repeating.
  std::optional<SteadyStateJump> record(PipelineCut cut);
  // False once a repeat was jumped over, or after enough cuts without one (a state that never
  // repeats, or not soon enough to pay for the records): the run stops looking.
  bool looking() const { return !found_ && cuts_seen_ < kCutsLookedAt; }

 private:
  static constexpr size_t kCutsLookedAt = 160;

  // For a period of `tasks` tasks and `micro_batches` micro-batches that starts at `from`: how
  // many periods after the first read only tasks that repeat the first period's (those can be
  // skipped from the cut one period after `from`).
  int64_t periods_repeated(const PipelineCut& from, size_t tasks, int micro_batches) const;

  std::vector<StageSchedule> schedules_;
  std::vector<PipelineCut> cuts_;  // the latest in each state recorded
  std::unordered_multimap<uint64_t, size_t> cuts_by_hash_;
  size_t cuts_seen_ = 0;
  bool found_ = false;
};

}  // namespace clustersim
