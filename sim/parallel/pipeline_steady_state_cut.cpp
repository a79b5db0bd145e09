// The steady-state skip of a pipeline's run on the engine (PipelineRun, pipeline_run.h): the cut
// that records the run's state relative to a micro-batch and a schedule position, and the jump
// that moves the clock, the stages and the micro-batches in flight over the repeating periods
// (steady_state_skip.h).
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "sim/parallel/pipeline_run.h"
#include "sim/util/check.h"

namespace clustersim {

// Records the run's state at this instant (a cut) and jumps when it repeats an earlier one.
void PipelineRun::take_cut() {
  const Stage& first = stages_[0];
  PipelineCut cut{StateFingerprint(now()),
                  now(),
                  first.tasks[first.next - 1].micro_batch,
                  {},
                  {},
                  {},
                  {},
                  {},
                  {}};
  describe(&cut.state, cut.micro_batch);
  net_->fingerprint(&cut.state);
  net_->simulation().fingerprint(&cut.state);
  for (int r = 0; r < plan_.stages; ++r) {
    cut.next_task.push_back(stages_[r].next);
    // The furthest task of the stage the state refers to: a stage behind its upstream holds
    // (or is being sent) inputs for tasks beyond its next ones.
    size_t furthest = stages_[r].next;
    for_each_waiting_input(r, [&](size_t input) {
      furthest = std::max(furthest, consumer_[r][input]);
    });
    cut.furthest_task.push_back(furthest);
    cut.busy.push_back(timeline_.stages[r].busy);
    cut.stretch.push_back(contention_[r].stretch());
    cut.expert_wait.push_back(timeline_.stages[r].expert_network_wait);
    cut.expert_scale_out.push_back(timeline_.stages[r].expert_scale_out);
  }
  for (const Send& send : sends_) {
    if (send.ranks_left == 0) continue;
    size_t& furthest = cut.furthest_task[send.to];
    furthest = std::max(furthest, consumer_[send.to][send.input]);
  }
  if (const std::optional<SteadyStateJump> jump = skip_->record(std::move(cut))) skip(*jump);
}

// Writes the stages, their reductions and the sends in flight into `f`: micro-batches relative
// to `micro_batch`, positions in the schedules relative to stage 0's next task.
void PipelineRun::describe(StateFingerprint* f, int micro_batch) const {
  f->add_handler(this);
  const auto add_input = [&](size_t input) {
    f->add(static_cast<int64_t>(input / micro_batch_ids_));  // forward? and chunk
    f->add(static_cast<int64_t>(input % micro_batch_ids_) - micro_batch);
  };
  for (int r = 0; r < plan_.stages; ++r) {
    const Stage& s = stages_[r];
    f->add(static_cast<int64_t>(s.next) - static_cast<int64_t>(stages_[0].next));
    f->add(s.busy);
    f->add(s.waiting);
    // A compute slowed at the cut ends at a time its stage's record does not show.
    f->add(contention_[r].ctas());
    if (contention_[r].ctas() > 0) f->add(now().count());
    for_each_waiting_input(r, add_input);
    const Reduction& p = reductions_[r];
    for (int v : {p.buckets, p.ready, p.launched, p.done, p.filled}) f->add(v);
    for (bool v : {p.in_flight, p.backward_done, p.optimizer_started, p.filling, p.armed})
      f->add(v);
    if (p.armed) f->add_time(p.bucket_at);
    f->add(static_cast<int64_t>(s.segment));
    if (s.segment % 2 == 1) {
      f->add_time(s.all_to_all_start);
      for (int64_t transfer : s.all_to_all_transfers) {
        f->add(transfer >= 0);
        if (transfer >= 0) net_->describe_transfer(transfer, f);
      }
    }
  }
  std::vector<size_t> in_flight;
  for (size_t id = 0; id < sends_.size(); ++id) {
    if (sends_[id].ranks_left > 0) in_flight.push_back(id);
  }
  // Each input is sent once: (destination, input) names a send.
  std::sort(in_flight.begin(), in_flight.end(), [&](size_t a, size_t b) {
    return std::pair(sends_[a].to, sends_[a].input) < std::pair(sends_[b].to, sends_[b].input);
  });
  f->add(static_cast<int64_t>(in_flight.size()));
  for (size_t id : in_flight) {
    const Send& send = sends_[id];
    f->add(send.from);
    f->add(send.to);
    add_input(send.input);
    f->add(send.task.forward);
    f->add(send.task.chunk);
    f->add(send.task.micro_batch - micro_batch);
    f->add_time(send.start);
    f->add(send.ranks_left);
    for (int rank = 0; rank < senders_; ++rank) {
      const size_t send_rank = id * senders_ + rank;
      const int64_t transfer = send_ranks_[send_rank];
      f->add_object(&sends_, static_cast<int64_t>(send_rank));
      f->add(std::min<int64_t>(transfer, 0));  // arrived, to itself, or a transfer
      if (transfer >= 0) net_->describe_transfer(transfer, f);
    }
  }
}

// Calls fn(input) for each input stage r has received and not yet used, in the order of the
// tasks that will use them.
template <class Fn>
void PipelineRun::for_each_waiting_input(int r, Fn fn) const {
  const Stage& s = stages_[r];
  int found = 0;
  for (size_t i = s.next; found < s.waiting; ++i) {
    CLUSTERSIM_CHECK(i < s.tasks.size(), "an input that no task uses");
    const PipelineTask& t = s.tasks[i];
    if (!needs_input(r, t)) continue;
    const size_t input = input_index(t.forward, t.chunk, t.micro_batch);
    if (s.arrived[input]) {
      fn(input);
      ++found;
    }
  }
}

// Moves the run `jump` on: the clock, every stage along its schedule and every micro-batch in
// flight or waiting (steady_state_skip.h proves the result is the state a full run reaches).
void PipelineRun::skip(const SteadyStateJump& jump) {
  const auto shifted = [&](size_t input) {
    CLUSTERSIM_CHECK(
        static_cast<int>(input % micro_batch_ids_) + jump.micro_batches < micro_batch_ids_,
        "a steady-state jump past the last micro-batch");
    return input + jump.micro_batches;
  };
  for (int r = 0; r < plan_.stages; ++r) {
    Stage& s = stages_[r];
    std::vector<size_t> waiting;
    for_each_waiting_input(r, [&](size_t input) { waiting.push_back(input); });
    for (size_t input : waiting) s.arrived[input] = 0;
    for (size_t input : waiting) s.arrived[shifted(input)] = 1;
    s.next += jump.tasks;
    timeline_.stages[r].busy += jump.busy[r];
    // Work beside collectives is recorded only at a parameter wait (ZeRO-3, which takes no
    // jump) and at the last backward (after every cut): none of a skipped period's is lost.
    CLUSTERSIM_CHECK(contention_[r].work_beside_collectives() == Picoseconds(0),
                     "no work recorded beside collectives before a steady-state jump");
    contention_[r].translate(jump.time);
    contention_[r].add_stretch(jump.stretch[r]);
    timeline_.stages[r].expert_network_wait += jump.expert_wait[r];
    timeline_.stages[r].expert_scale_out += jump.expert_scale_out[r];
    s.all_to_all_start += jump.time;
    if (reductions_[r].armed) reductions_[r].bucket_at += jump.time;
  }
  for (Send& send : sends_) {
    if (send.ranks_left == 0) continue;
    send.input = shifted(send.input);
    send.task.micro_batch += jump.micro_batches;
    send.start += jump.time;
  }
  net_->translate(jump.time);
  net_->simulation().translate(jump.time);
  timeline_.tasks_skipped += jump.tasks * plan_.stages;
}

}  // namespace clustersim
