// Event-driven execution of pipeline schedules (PipelineRun, pipeline_run.h): the stages' tasks
// and the stage-to-stage transfers. The expert all-to-alls on the network are in
// pipeline_expert_all_to_all.cpp, the data-parallel tail of the step in
// pipeline_gradient_reduction.cpp, the steady-state skip in pipeline_steady_state_cut.cpp.
#include "sim/parallel/pipeline_simulation.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/net/collective_algorithms.h"
#include "sim/parallel/collective_sm_contention.h"
#include "sim/parallel/deepspeed_pipeline.h"
#include "sim/parallel/dualpipe_schedule.h"
#include "sim/parallel/pipeline_run.h"
#include "sim/parallel/steady_state_skip.h"

namespace clustersim {

PipelineRun::PipelineRun(const PipelinePlan& plan, Network* network, Timeline* timeline,
                         bool skip_steady_state)
    : plan_(plan),
      net_(network),
      record_(timeline),
      ranks_(plan.tensor_parallel / network->replicas()),
      senders_(ranks_ * plan.context_parallel) {
  const int p = plan.stages;
  stages_.resize(p);
  reductions_.resize(p);
  timeline_.stages.resize(p);
  for (int r = 0; r < p; ++r) {
    Stage& s = stages_[r];
    s.tasks = stage_schedule(plan.schedule, p, plan.chunks, plan.micro_batches, r,
                             plan.overlap_expert_communication, plan.runs);
    s.last_backward_of_chunk.assign(s.tasks.size(), 0);
    std::vector<char> seen(plan.chunks, 0);
    for (size_t i = s.tasks.size(); i-- > 0;) {
      const PipelineTask& t = s.tasks[i];
      if (t.forward || t.input_only || seen[t.chunk]) continue;
      seen[t.chunk] = 1;
      s.last_backward_of_chunk[i] = 1;
    }
    for (const PipelineTask& t : s.tasks)
      micro_batch_ids_ = std::max(micro_batch_ids_, t.micro_batch + 1);
  }
  for (Stage& s : stages_)
    s.arrived.assign(input_index(true, plan.chunks - 1, micro_batch_ids_), 0);
  send_latency_.assign(static_cast<size_t>(p) * 2 * senders_, Picoseconds(-1));
  zero3_.resize(p);
  for (const StageWork& w : plan.work) contention_.emplace_back(w.gpu_sms);
  a2a_.resize(p);
  for (int r = 0; r < p; ++r) prepare_all_to_alls(r);
  for (int r = 0; r < p; ++r) start_zero3(r);
  const bool zero3 =
      std::any_of(zero3_.begin(), zero3_.end(), [](auto& z) { return z != nullptr; });
  // The steady-state shortcut knows one fill and drain a step, and tasks whose length depends
  // on their chunk alone: not some micro-batches' deferred weight gradients.
  const bool partly_deferred = std::any_of(plan.work.begin(), plan.work.end(), [&](auto& w) {
    return w.deferred_output_micro_batches > 0 &&
           w.deferred_output_micro_batches < plan.micro_batches;
  });
  // DualPipe's steady state is not a repeat of stage 0's forward-after-backward cuts.
  if (skip_steady_state && !timeline && !zero3 && !plan.deepspeed_exchange && plan.runs == 1 &&
      !partly_deferred && !is_dualpipe(plan.schedule)) {
    std::vector<StageSchedule> schedules;
    for (const Stage& s : stages_) schedules.push_back({s.tasks, s.last_backward_of_chunk});
    skip_.emplace(std::move(schedules));
    for (int r = 0; r < p; ++r) {
      const Stage& s = stages_[r];
      consumer_.emplace_back(s.arrived.size(), 0);
      for (size_t i = 0; i < s.tasks.size(); ++i) {
        const PipelineTask& t = s.tasks[i];
        if (needs_input(r, t)) consumer_[r][input_index(t.forward, t.chunk, t.micro_batch)] = i;
      }
    }
    const std::vector<PipelineTask>& first = stages_[0].tasks;
    first_backward_ = std::find_if(first.begin(), first.end(),
                                   [](const PipelineTask& t) { return !t.forward; }) -
                      first.begin();
  }
}

PipelineTimeline PipelineRun::run() {
  for (int r = 0; r < plan_.stages; ++r) {
    if (plan_.deepspeed_exchange) {
      begin_exchange(r, std::nullopt);
    } else {
      try_start(r);
    }
  }
  Simulation& sim = net_->simulation();
  sim.run();
  while (cut_due_) {
    cut_due_ = false;
    take_cut();
    sim.run();
  }
  for (int r = 0; r < plan_.stages; ++r) {
    if (zero3_[r]) {
      timeline_.stages[r].parameter_wait = zero3_[r]->waited();
      timeline_.stages[r].fetch_paced_wait = zero3_[r]->fetch_paced_waited();
    }
    timeline_.stages[r].collective_stretch = contention_[r].stretch();
    timeline_.stages[r].work_beside_collectives = contention_[r].work_beside_collectives();
  }
  for (const StageTimeline& s : timeline_.stages)
    timeline_.step = std::max(timeline_.step, s.end);
  return timeline_;
}

// An overlapped collective of stage r holds its CTAs from now until `done` runs; the stage's
// compute beside it slows (collective_sm_contention.h). A ZeRO-3 stage's compute moves itself.
std::function<void()> PipelineRun::holding_sms(int r, std::function<void()> done) {
  contention_changed(r, kNcclCollectiveCtas);
  return [this, r, done = std::move(done)] {
    contention_changed(r, -kNcclCollectiveCtas);
    done();
  };
}

void PipelineRun::contention_changed(int r, int ctas) {
  const std::optional<Picoseconds> end = contention_[r].add_ctas(now(), ctas);
  arm_bucket(r);
  if (!end) return;
  if (zero3_[r]) return zero3_[r]->compute_moved(*end);
  schedule_at(*end, kTaskEnd, r);
}

void PipelineRun::on_event(uint64_t tag) {
  const size_t index = tag >> kKindBits;
  switch (static_cast<EventKind>(tag & ((1u << kKindBits) - 1))) {
    case kTaskEnd:
      if (!contention_[index].ends_at(now())) return;  // moved by a collective's start or end
      contention_[index].finish();
      if (start_all_to_all(static_cast<int>(index))) return;
      return task_done(static_cast<int>(index));
    case kBucketReady:
      return bucket_filled(static_cast<int>(index));
    case kOptimizerEnd:
      return optimizer_done(static_cast<int>(index));
    case kSelfArrival:
      return rank_arrived(index);
    case kAllToAllEnd:
      return all_to_all_ended(static_cast<int>(index));
  }
}

void PipelineRun::describe_event(uint64_t tag, StateFingerprint* f) const {
  const uint64_t kind = tag & ((1u << kKindBits) - 1);
  f->add(static_cast<int64_t>(kind));
  if (kind == kSelfArrival) return f->add_object(&sends_, static_cast<int64_t>(tag >> kKindBits));
  f->add(static_cast<int64_t>(tag >> kKindBits));
}

void PipelineRun::try_start(int r) {
  Stage& s = stages_[r];
  if (s.busy || s.next >= s.tasks.size()) return;
  const PipelineTask task = s.tasks[s.next];
  // A combined step (expert_comm_overlap.h) starts once both its passes have their inputs.
  if (task.combined && task.forward && s.next + 1 < s.tasks.size()) {
    const PipelineTask& partner = s.tasks[s.next + 1];
    if (needs_input(r, partner) &&
        !s.arrived[input_index(partner.forward, partner.chunk, partner.micro_batch)]) {
      return;
    }
  }
  if (needs_input(r, task)) {
    char& arrived = s.arrived[input_index(task.forward, task.chunk, task.micro_batch)];
    if (!arrived) return;
    arrived = 0;
    --s.waiting;
  }
  s.busy = true;
  s.started = now();
  const Picoseconds duration = task_duration(r, task);
  timeline_.stages[r].busy += duration;
  const bool last_backward = s.last_backward_of_chunk[s.next];
  ++s.next;
  if (r == 0 && task.forward && s.next > first_backward_ && skip_ && skip_->looking()) {
    cut_due_ = true;
    net_->simulation().pause();
  }
  if (zero3_[r]) return zero3_[r]->run_task(s.next - 1, [this, r] { task_done(r); });
  s.spans = network_all_to_alls(r, task);
  s.segment = 0;
  s.offset = Picoseconds(0);
  s.length = duration;
  s.full =
      task.forward ? plan_.chunk_forward(r, task.chunk) : plan_.chunk_backward(r, task.chunk);
  s.squeezed = task.input_only;
  s.deferred = s.squeezed ? Picoseconds(0) : s.full - duration;
  start_compute(r);
  if (last_backward) start_gradient_reduction(r, duration);
}

// Runs the running task's compute from the end of the last all-to-all (or its start) to the next
// one (or its end). No end while the collectives beside it hold every SM: the one that ends
// first gives it.
void PipelineRun::start_compute(int r) {
  const Picoseconds work = compute_end(r) - stages_[r].offset;
  if (const auto end = contention_[r].start(now(), work)) schedule_at(*end, kTaskEnd, r);
  arm_bucket(r);
}

// Where the running compute segment of stage r ends in its task's time alone.
Picoseconds PipelineRun::compute_end(int r) const {
  const Stage& s = stages_[r];
  const size_t next = s.segment / 2;
  if (s.spans == nullptr || next >= s.spans->size()) return s.length;
  return span_start(r, (*s.spans)[next]);
}

// Where all-to-all `span` of the running task of stage r starts in the task's time alone.
Picoseconds PipelineRun::span_start(int r, const TaskSpan& span) const {
  const Stage& s = stages_[r];
  if (!s.squeezed) return span.start - s.deferred;
  return Picoseconds(std::llround(static_cast<double>(span.start.count()) *
                                  static_cast<double>(s.length.count()) /
                                  static_cast<double>(s.full.count())));
}

// ZeRO-3 stages run their tasks layer by layer, gathering weights and reduce-scattering
// gradients over data parallelism; the optimizer waits for the last reduce-scatter. Their
// expert all-to-alls whose traffic crosses NVLink domains run on the network as a task's do.
void PipelineRun::start_zero3(int r) {
  const StageWork& w = plan_.work[r];
  if (w.zero3.units <= 0 || plan_.data_parallel < 2) return;
  ExpertAllToAll all_to_all;
  if (!a2a_[r].prepared.empty()) {
    all_to_all = [this, r](const TaskSpan& span) { run_all_to_all(r, span); };
  }
  zero3_[r] = std::make_unique<Zero3Stage>(
      w.zero3, stages_[r].tasks, w.forward, w.backward, &net_->simulation(),
      [this, r](CollectiveOp op, DataParallelGroup group, double bytes,
                std::function<void()> done) {
        if (group == DataParallelGroup::kExperts) {
          return expert_data_parallel_collective(r, op, bytes, std::move(done));
        }
        data_parallel_collective(r, op, bytes, std::move(done), group);
      },
      &contention_[r], std::move(all_to_all));
  zero3_[r]->on_reductions_drained([this, r] { maybe_step_optimizer(r); });
}

// The task stage r started last has ended (or its deferred weight gradients have).
void PipelineRun::task_done(int r) {
  Stage& s = stages_[r];
  if (s.draining) {
    if (record_) record(r, "compute", "deferred output weight gradients", s.started);
    s.draining = false;
    timeline_.stages[r].last_backward_end = now();
    return backward_done(r);
  }
  const PipelineTask& task = s.tasks[s.next - 1];
  if (record_) {
    const Picoseconds start = s.started;
    record(r, "compute", task_name(task, plan_.chunks), start);
    if (s.spans == nullptr) record_all_to_alls(r, task, start);
  }
  const bool last = s.next == s.tasks.size();
  if (last) timeline_.stages[r].last_backward_end = now();
  if (s.last_backward_of_chunk[s.next - 1]) finish_filling(r);
  if (plan_.deepspeed_exchange) return begin_exchange(r, PipelineTask(task));
  if (last) finish_backwards(r);
  // A combined step sends its forward's output with its backward's, once the step is over:
  // Megatron-Core's host issues post_forward (the send) after the layer loop of both passes
  // (NVIDIA/Megatron-LM core_v0.16.0 3bec9aa, models/common/model_chunk_schedule_plan.py
  // TransformerModelChunkSchedulePlan.run), and without the point-to-point overlap sends both
  // together after the step (pipeline_parallel/schedules.py,
  // send_forward_backward_recv_forward_backward). Approximation: a GPU-bound step could start
  // the send after its last layer's combine forward, up to that layer's pre-dispatch backward
  // (one layer of the chunk's) before the end.
  // The steady state alternates forward and backward (stage_schedule), so a combined backward's
  // forward half is the task listed just before it.
  bool sent = false;
  if (task.combined && !task.forward) sent = send_onward(r, s.tasks[s.next - 2]);
  if (!(task.combined && task.forward)) sent = send_onward(r, task) || sent;
  // Blocking point-to-point: the stage's stream waits for its sends to complete.
  if (sent && !plan_.overlap_pipeline_communication) return;
  s.busy = false;
  try_start(r);
}

// DeepSpeed's engine: stage r, its task `done` over (none: before its first), makes its blocking
// calls before the next task; each starts when the partner's matching call is posted.
void PipelineRun::begin_exchange(int r, const std::optional<PipelineTask>& done) {
  Stage& s = stages_[r];
  s.busy = true;
  std::optional<PipelineTask> next;
  if (s.next < s.tasks.size()) next = s.tasks[s.next];
  s.calls = deepspeed_exchange(done, next, r, plan_.stages);
  s.calls_done = 0;
  post_call(r);
}

// Posts stage r's next call, starting the transfer when its partner has posted the match; once
// none is left, the stage runs its next task (or, after its last, reduces its gradients).
void PipelineRun::post_call(int r) {
  Stage& s = stages_[r];
  if (s.calls_done == s.calls.size()) {
    if (s.next == s.tasks.size()) return backward_done(r);
    s.busy = false;
    return try_start(r);
  }
  const PipelineExchange& call = s.calls[s.calls_done];
  int to = r, chunk = call.task.chunk;
  if (call.send) neighbour(r, call.task, &to, &chunk);
  const size_t input = input_index(call.task.forward, chunk, call.task.micro_batch);
  if (call.send) {
    Stage& peer = stages_[to];
    if (peer.receiving != input) return peer.posted_sends.push_back({r, call.task});
    peer.receiving.reset();
    send_onward(r, call.task);
    return;
  }
  auto posted = std::find_if(s.posted_sends.begin(), s.posted_sends.end(), [&](const auto& p) {
    int at = 0, c = 0;
    neighbour(p.first, p.second, &at, &c);
    return input_index(p.second.forward, c, p.second.micro_batch) == input;
  });
  if (posted == s.posted_sends.end()) {
    s.receiving = input;
    return;
  }
  const auto [from, task] = *posted;
  s.posted_sends.erase(posted);
  send_onward(from, task);
}

// The next stage (forward) or previous stage (backward) of a task, in the virtual pipeline of
// stages x chunks; false when there is none.
bool PipelineRun::neighbour(int r, const PipelineTask& t, int* to, int* chunk) const {
  const int p = plan_.stages;
  if (plan_.schedule == schema::DUALPIPE) {  // chunk 0 runs up the stages, chunk 1 down
    *to = r + ((t.chunk == 0) == t.forward ? 1 : -1);
    *chunk = t.chunk;
    return *to >= 0 && *to < p;
  }
  if (plan_.schedule == schema::DUALPIPE_V) {  // the last stage turns to its other chunk
    const bool up = (t.chunk == 0) == t.forward;
    if (up && r + 1 == p) return *to = r, *chunk = 1 - t.chunk, true;
    *to = r + (up ? 1 : -1);
    *chunk = t.chunk;
    return *to >= 0;
  }
  if (t.forward) {
    if (r + 1 < p) return *to = r + 1, *chunk = t.chunk, true;
    if (t.chunk + 1 < plan_.chunks) return *to = 0, *chunk = t.chunk + 1, true;
    return false;
  }
  if (r > 0) return *to = r - 1, *chunk = t.chunk, true;
  if (t.chunk > 0) return *to = p - 1, *chunk = t.chunk - 1, true;
  return false;
}

// Sends a task's output to the stage that needs it; sent() runs once it has arrived. Returns
// false when nothing is sent (the last forward, the first backward).
bool PipelineRun::send_onward(int r, const PipelineTask& t) {
  int to = 0, chunk = 0;
  if (t.weight_only || !neighbour(r, t, &to, &chunk)) return false;
  const size_t id =
      new_send({r, to, input_index(t.forward, chunk, t.micro_batch), t, now(), senders_});
  for (int rank = 0; rank < senders_; ++rank) {
    const size_t send_rank = id * senders_ + rank;
    const int from_gpu = plan_.gpu(0, r, plan_rank(rank)),
              to_gpu = plan_.gpu(0, to, plan_rank(rank));
    if (from_gpu == to_gpu) {  // a single stage feeding itself (interleaving with one stage)
      send_ranks_[send_rank] = kToItself;
      schedule(Picoseconds(0), kSelfArrival, send_rank);
      continue;
    }
    send_ranks_[send_rank] = net_->start_transfer(
        from_gpu, to_gpu,
        plan_.activation_bytes / (plan_.tensor_parallel * plan_.context_parallel),
        send_latency(r, to, rank), [this, send_rank] { rank_arrived(send_rank); });
  }
  return true;
}

size_t PipelineRun::new_send(const Send& send) {
  if (free_sends_.empty()) {
    sends_.push_back(send);
    send_ranks_.resize(sends_.size() * senders_);
    return sends_.size() - 1;
  }
  const size_t id = free_sends_.back();
  free_sends_.pop_back();
  sends_[id] = send;
  return id;
}

// Step latency of rank `rank`'s transfer from stage r to stage `to`, the next or the previous
// stage (around the ring), looked up once.
Picoseconds PipelineRun::send_latency(int r, int to, int rank) {
  const bool next = to == (r + 1) % plan_.stages;
  Picoseconds& latency = send_latency_[(static_cast<size_t>(r) * 2 + next) * senders_ + rank];
  if (latency < Picoseconds(0)) {
    latency = step_latency(plan_.gpu(0, r, plan_rank(rank)), plan_.gpu(0, to, plan_rank(rank)),
                           net_->topology());
  }
  return latency;
}

void PipelineRun::rank_arrived(size_t send_rank) {
  send_ranks_[send_rank] = kArrived;
  const size_t id = send_rank / senders_;
  Send& send = sends_[id];
  if (--send.ranks_left > 0) return;
  const Send done = send;
  free_sends_.push_back(id);
  if (record_) record_send(done);
  stages_[done.to].arrived[done.input] = 1;
  ++stages_[done.to].waiting;
  if (plan_.deepspeed_exchange) {
    ++stages_[done.from].calls_done;
    ++stages_[done.to].calls_done;
    post_call(done.from);
    return post_call(done.to);
  }
  try_start(done.to);
  // A blocked stage waits for every send of its last task (a combined step makes two).
  const auto from_stage = [&](const Send& other) {
    return other.ranks_left > 0 && other.from == done.from;
  };
  if (!plan_.overlap_pipeline_communication &&
      std::none_of(sends_.begin(), sends_.end(), from_stage)) {
    stages_[done.from].busy = false;
    try_start(done.from);
  }
}

void PipelineRun::record_send(const Send& send) {
  const LinkKind kind =
      net_->topology().route_kind(plan_.gpu(0, send.from, 0), plan_.gpu(0, send.to, 0));
  const char* track = kind == LinkKind::kNetwork  ? "send (network)"
                      : kind == LinkKind::kNvlink ? "send (NVLink)"
                                                  : "send (PCIe)";
  record(send.from, track,
         std::string(send.task.forward ? "activations mb " : "gradients mb ") +
             std::to_string(send.task.micro_batch),
         send.start);
}

// Records [start, end) (end: now) on `track` of stage r. Requires: recording.
void PipelineRun::record(int r, const char* track, const std::string& name, Picoseconds start,
                         std::optional<Picoseconds> end) {
  record_->add(pipeline_stage_group(r), track, name, start, end.value_or(now()));
}

std::string pipeline_stage_group(int stage) { return "stage " + std::to_string(stage); }

bool is_pipeline_send_track(const std::string& track) { return track.starts_with("send ("); }

// Draws the expert all-to-alls of the task stage r has just ended, begun at `start`, on their
// own track, at their places in its pass (a combined step's pass is shorter: their starts
// squeezed with it, each cut at the task's end). Requires: recording.
void PipelineRun::record_all_to_alls(int r, const PipelineTask& task, Picoseconds start) {
  const StageWork& w = plan_.work[r];
  const auto& spans = task.forward ? w.chunk_forward_all_to_alls : w.chunk_backward_all_to_alls;
  if (spans.empty() || spans[task.chunk].empty()) return;
  const Picoseconds duration = now() - start;
  const Picoseconds alone =
      task.forward ? plan_.chunk_forward(r, task.chunk) : plan_.chunk_backward(r, task.chunk);
  const double squeeze =
      static_cast<double>(duration.count()) / static_cast<double>(alone.count());
  for (const TaskSpan& span : spans[task.chunk]) {
    const Picoseconds from =
        start + Picoseconds(std::llround(static_cast<double>(span.start.count()) * squeeze));
    record(r, "expert all-to-all", span.name, from, std::min(from + span.length, now()));
  }
}

std::string PipelineRun::task_name(const PipelineTask& t, int chunks) {
  const char* pass = t.forward       ? "forward"
                     : t.weight_only ? "weight gradient"
                     : t.input_only  ? "input gradient"
                                     : "backward";
  std::string name = std::string(pass) + " mb " + std::to_string(t.micro_batch);
  return chunks > 1 ? name + " chunk " + std::to_string(t.chunk) : name;
}

PipelineTimeline simulate_pipeline(const PipelinePlan& plan, const Topology& topology,
                                   Timeline* timeline, PipelineShortcuts shortcuts) {
  const int t = plan.tensor_parallel;
  // Rank 0's expert-parallel groups stand for the others' when theirs are its images.
  const bool experts_replicate = plan.experts.expert_parallel < 2 ||
                                 plan.experts.expert_tensor_parallel % t == 0;
  if (shortcuts.one_rank_for_all && t > 1 && std::has_single_bit(static_cast<unsigned>(t)) &&
      t <= topology.rank_symmetry().max_ranks() && experts_replicate) {
    Simulation sim;
    Network network(&sim, &topology, t);
    Timeline recorded;
    PipelineTimeline result =
        PipelineRun(plan, &network, timeline ? &recorded : nullptr, shortcuts.skip_steady_state)
            .run();
    if (network.symmetric()) {
      if (timeline) {
        for (const TimelineSpan& span : recorded.spans())
          timeline->add(span.group, span.track, span.name, span.start, span.end);
      }
      return result;
    }
  }
  Simulation sim;
  Network network(&sim, &topology);
  return PipelineRun(plan, &network, timeline, shortcuts.skip_steady_state).run();
}

}  // namespace clustersim