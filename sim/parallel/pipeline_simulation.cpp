// Event-driven execution of pipeline schedules with stage-to-stage transfers and data-parallel
// gradient reduction on the network, skipping the periodic steady state (steady_state_skip.h).
#include "sim/parallel/pipeline_simulation.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <memory>
#include <optional>

#include "sim/net/collective.h"
#include "sim/net/collective_algorithms.h"
#include "sim/parallel/collective_sm_contention.h"
#include "sim/parallel/deepspeed_pipeline.h"
#include "sim/parallel/expert_network_traffic.h"
#include "sim/parallel/steady_state_skip.h"
#include "sim/util/check.h"

namespace clustersim {
namespace {

// Runs the plan on the engine. Its own events (a task's end, a gradient bucket becoming ready, an
// optimizer step's end, an input a stage sends itself) carry their kind in the low bits of the
// tag and a stage or send rank above; transfers call back with a send rank. So the per-task path
// allocates nothing beyond amortised vector growth.
//
// With `skip_steady_state`, every time stage 0 starts a forward after its first backward the run
// pauses at the end of that timestamp and records its state (a cut); once a cut repeats an
// earlier one, it jumps over the periods its schedules repeat for (steady_state_skip.h).
class PipelineRun final : private EventHandler {
 public:
  // `network` replicated over the tensor-parallel ranks, or not replicated.
  PipelineRun(const PipelinePlan& plan, Network* network, Timeline* timeline,
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
        if (t.forward || seen[t.chunk]) continue;
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
    if (skip_steady_state && !timeline && !zero3 && !plan.deepspeed_exchange && plan.runs == 1 &&
        !partly_deferred) {
      std::vector<StageSchedule> schedules;
      for (const Stage& s : stages_) schedules.push_back({s.tasks, s.last_backward_of_chunk});
      skip_.emplace(std::move(schedules));
      const std::vector<PipelineTask>& first = stages_[0].tasks;
      first_backward_ = std::find_if(first.begin(), first.end(),
                                     [](const PipelineTask& t) { return !t.forward; }) -
                        first.begin();
    }
  }

  PipelineTimeline run() {
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
      if (zero3_[r]) timeline_.stages[r].parameter_wait = zero3_[r]->waited();
      timeline_.stages[r].collective_stretch = contention_[r].stretch();
    }
    for (const StageTimeline& s : timeline_.stages)
      timeline_.step = std::max(timeline_.step, s.end);
    return timeline_;
  }

 private:
  enum EventKind : uint64_t {
    kTaskEnd,
    kBucketReady,
    kOptimizerEnd,
    kSelfArrival,
    kAllToAllEnd
  };
  static constexpr int kKindBits = 3;

  struct Stage {
    std::vector<PipelineTask> tasks;
    size_t next = 0;
    bool busy = false;
    bool draining = false;  // running its deferred weight gradients after its last task
    Picoseconds started;  // of the running task (collectives beside it may stretch it)
    std::vector<char> arrived;                 // inputs received and not yet used, by input_index()
    int waiting = 0;                           // how many
    std::vector<char> last_backward_of_chunk;  // by task: its chunk's gradients are then final
    // DeepSpeed's blocking calls between two tasks (deepspeed_exchange), the first calls_done of
    // them done; the stage is busy until all are.
    std::vector<PipelineExchange> calls;
    size_t calls_done = 0;
    std::optional<size_t> receiving;  // the input its posted receive waits for
    std::vector<std::pair<int, PipelineTask>> posted_sends;  // (stage, task) waiting to send here
    // The running task's expert all-to-alls on the network (null: none, it runs whole) and the
    // segment of it running: 2 i the compute before all-to-all i (the last one: after the last
    // all-to-all), 2 i + 1 all-to-all i; the task's time alone before that segment, in all, and
    // what its start lost to deferred weight gradients (the spans count from the full task's).
    const std::vector<TaskSpan>* spans = nullptr;
    size_t segment = 0;
    Picoseconds offset, length, deferred;
    // The all-to-all running (its task's, or under ZeRO-3 its Zero3Stage's): which, since when,
    // and the transfers of its traffic, one per kind (-1: arrived), and how many have not.
    const TaskSpan* all_to_all = nullptr;
    Picoseconds all_to_all_start;
    std::vector<int64_t> all_to_all_transfers;
    size_t all_to_all_arriving = 0;
  };
  // A stage's expert all-to-all traffic across NVLink domains (expert_network_traffic.h), each
  // kind prepared on the network; none when its groups stay inside their domains.
  struct AllToAllRoutes {
    ExpertNetworkTraffic traffic;
    std::vector<int32_t> prepared;        // per kind
    std::map<double, Picoseconds> alone;  // by per-GPU bytes: the traffic alone on an idle network
  };
  // A task's output on its way to the stage that needs it, one transfer per simulated tensor- and
  // context-parallel rank (sender `rank` of send `id` is send rank id * senders_ + rank).
  struct Send {
    int from, to;
    size_t input;  // input_index() at `to`
    PipelineTask task;
    Picoseconds start;
    int ranks_left;
  };
  struct Reduction {
    int buckets = 0, ready = 0, launched = 0, done = 0;
    bool in_flight = false, backward_done = false, optimizer_started = false;
    // The chunk's last backward while it runs: its buckets filled so far, of chunk_buckets, over
    // its work alone; the next one due at bucket_at when armed.
    bool filling = false, armed = false;
    int filled = 0, chunk_buckets = 0;
    Picoseconds backward_work, bucket_at;
  };

  // Where the input (forward?, chunk, micro-batch) of a stage is flagged in Stage::arrived.
  size_t input_index(bool forward, int chunk, int micro_batch) const {
    return (static_cast<size_t>(forward) * plan_.chunks + chunk) * micro_batch_ids_ + micro_batch;
  }

  void schedule(Picoseconds delay, EventKind kind, size_t index) {
    net_->simulation().schedule_after(delay, this, (index << kKindBits) | kind);
  }
  void schedule_at(Picoseconds when, EventKind kind, size_t index) {
    net_->simulation().schedule_at(when, this, (index << kKindBits) | kind);
  }

  // An overlapped collective of stage r holds its CTAs from now until `done` runs; the stage's
  // compute beside it slows (collective_sm_contention.h). A ZeRO-3 stage's compute moves itself.
  std::function<void()> holding_sms(int r, std::function<void()> done) {
    contention_changed(r, kNcclCollectiveCtas);
    return [this, r, done = std::move(done)] {
      contention_changed(r, -kNcclCollectiveCtas);
      done();
    };
  }
  void contention_changed(int r, int ctas) {
    const std::optional<Picoseconds> end = contention_[r].add_ctas(now(), ctas);
    arm_bucket(r);
    if (!end) return;
    if (zero3_[r]) return zero3_[r]->compute_moved(*end);
    schedule_at(*end, kTaskEnd, r);
  }

  void on_event(uint64_t tag) override {
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

  void describe_event(uint64_t tag, StateFingerprint* f) const override {
    const uint64_t kind = tag & ((1u << kKindBits) - 1);
    f->add(static_cast<int64_t>(kind));
    if (kind == kSelfArrival) return f->add_object(&sends_, static_cast<int64_t>(tag >> kKindBits));
    f->add(static_cast<int64_t>(tag >> kKindBits));
  }

  // A task's input comes from another stage (or is local: the first forward, the last backward).
  bool needs_input(int stage, const PipelineTask& t) const {
    if (t.forward) return !(stage == 0 && t.chunk == 0);
    return !(stage == plan_.stages - 1 && t.chunk == plan_.chunks - 1);
  }

  void try_start(int r) {
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
    s.deferred =
        (task.forward ? plan_.chunk_forward(r, task.chunk) : plan_.chunk_backward(r, task.chunk)) -
        duration;
    start_compute(r);
    if (last_backward) start_gradient_reduction(r, duration);
  }

  // The expert all-to-alls of `task` on stage r that run on the network; null when none do: the
  // stage's groups stay inside their NVLink domains, or the task has none, or runs them beside
  // the other pass of a combined step (whose closed form times them alone).
  const std::vector<TaskSpan>* network_all_to_alls(int r, const PipelineTask& task) const {
    if (a2a_[r].prepared.empty() || task.combined) return nullptr;
    const StageWork& w = plan_.work[r];
    const auto& spans = task.forward ? w.chunk_forward_all_to_alls : w.chunk_backward_all_to_alls;
    if (spans.size() <= static_cast<size_t>(task.chunk) || spans[task.chunk].empty()) {
      return nullptr;
    }
    return &spans[task.chunk];
  }

  // Stage r's all-to-all traffic across NVLink domains, prepared on the network when it has any.
  void prepare_all_to_alls(int r) {
    const int tcp = plan_.tensor_parallel * plan_.context_parallel;
    std::vector<int> gpus;
    for (int local = 0; local < plan_.experts.stage_gpus; ++local) {
      gpus.push_back(plan_.gpu(local / tcp, r, local % tcp));
    }
    AllToAllRoutes& routes = a2a_[r];
    routes.traffic =
        expert_network_traffic(net_->topology(), plan_.experts, gpus, plan_.expert_rail_shares,
                               plan_.tensor_parallel, ranks_);
    for (const ExpertNetworkTraffic::Kind& kind : routes.traffic.kinds) {
      routes.prepared.push_back(net_->prepare_coupled(kind.edges));
    }
    stages_[r].all_to_all_transfers.assign(routes.prepared.size(), -1);
  }

  // Runs the running task's compute from the end of the last all-to-all (or its start) to the next
  // one (or its end). No end while the collectives beside it hold every SM: the one that ends
  // first gives it.
  void start_compute(int r) {
    const Picoseconds work = compute_end(r) - stages_[r].offset;
    if (const auto end = contention_[r].start(now(), work)) schedule_at(*end, kTaskEnd, r);
    arm_bucket(r);
  }

  // Where the running compute segment of stage r ends in its task's time alone.
  Picoseconds compute_end(int r) const {
    const Stage& s = stages_[r];
    const size_t next = s.segment / 2;
    if (s.spans == nullptr || next >= s.spans->size()) return s.length;
    return (*s.spans)[next].start - s.deferred;
  }

  // Stage r's compute segment has ended: starts the all-to-all after it, if any (false: the task
  // is over).
  bool start_all_to_all(int r) {
    Stage& s = stages_[r];
    if (s.draining || s.spans == nullptr || s.segment / 2 >= s.spans->size()) return false;
    const TaskSpan& span = (*s.spans)[s.segment / 2];
    ++s.segment;
    s.offset = span.start - s.deferred;
    run_all_to_all(r, span);
    return true;
  }

  // Runs stage r's all-to-all `span` on the network, the compute stopped: it takes its time alone
  // (layer_times.h) and, when its traffic across domains (every kind, started together) takes
  // longer on the network than alone (traffic beside it), that much more.
  void run_all_to_all(int r, const TaskSpan& span) {
    Stage& s = stages_[r];
    s.all_to_all = &span;
    s.all_to_all_start = now();
    const AllToAllRoutes& routes = a2a_[r];
    s.all_to_all_arriving = routes.prepared.size();
    for (size_t k = 0; k < routes.prepared.size(); ++k) {
      s.all_to_all_transfers[k] = net_->start_prepared(
          routes.prepared[k], span.bytes * routes.traffic.kinds[k].edge_bytes_per_byte,
          routes.traffic.latency, [this, r, k] { all_to_all_arrived(r, k); });
    }
  }

  // Kind k of its traffic has arrived. Once every kind has, the all-to-all ends after its time
  // alone, and after the part of it beyond its traffic's time alone.
  void all_to_all_arrived(int r, size_t k) {
    Stage& s = stages_[r];
    s.all_to_all_transfers[k] = -1;
    if (--s.all_to_all_arriving > 0) return;
    const TaskSpan& span = *s.all_to_all;
    const Picoseconds rest = std::max(Picoseconds(0), span.length - traffic_alone(r, span.bytes));
    schedule_at(std::max(s.all_to_all_start + span.length, now() + rest), kAllToAllEnd, r);
  }

  void all_to_all_ended(int r) {
    Stage& s = stages_[r];
    const TaskSpan& span = *s.all_to_all;
    if (record_) record(r, "expert all-to-all", span.name, s.all_to_all_start);
    timeline_.stages[r].expert_network_wait += now() - s.all_to_all_start - span.length;
    if (zero3_[r]) return zero3_[r]->all_to_all_done();
    ++s.segment;
    s.offset += span.length;
    start_compute(r);
  }

  // Stage r's all-to-all traffic of `bytes` per GPU (every kind) alone on an idle copy of the
  // network, on the routes prepare_all_to_alls resolved.
  Picoseconds traffic_alone(int r, double bytes) {
    AllToAllRoutes& routes = a2a_[r];
    const auto found = routes.alone.find(bytes);
    if (found != routes.alone.end()) return found->second;
    std::vector<Network::PreparedLoad> loads;
    for (size_t k = 0; k < routes.prepared.size(); ++k) {
      loads.push_back({routes.prepared[k], bytes * routes.traffic.kinds[k].edge_bytes_per_byte});
    }
    const Picoseconds alone = net_->prepared_time_alone(loads, routes.traffic.latency);
    routes.alone.emplace(bytes, alone);
    return alone;
  }

  // ZeRO-3 stages run their tasks layer by layer, gathering weights and reduce-scattering
  // gradients over data parallelism; the optimizer waits for the last reduce-scatter. Their
  // expert all-to-alls whose traffic crosses NVLink domains run on the network as a task's do.
  void start_zero3(int r) {
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

  Picoseconds task_duration(int r, const PipelineTask& t) const {
    return plan_.task_duration(r, t);
  }

  // The task stage r started last has ended (or its deferred weight gradients have).
  void task_done(int r) {
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
  void begin_exchange(int r, const std::optional<PipelineTask>& done) {
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
  void post_call(int r) {
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
  bool neighbour(int r, const PipelineTask& t, int* to, int* chunk) const {
    const int p = plan_.stages;
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
  bool send_onward(int r, const PipelineTask& t) {
    int to = 0, chunk = 0;
    if (!neighbour(r, t, &to, &chunk)) return false;
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
          send_latency(r, t.forward, rank), [this, send_rank] { rank_arrived(send_rank); });
    }
    return true;
  }

  size_t new_send(const Send& send) {
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

  // Step latency of rank `rank`'s transfer of a forward's (or backward's) output from stage r:
  // the destination is fixed by r and the direction, so it is looked up once.
  Picoseconds send_latency(int r, bool forward, int rank) {
    Picoseconds& latency =
        send_latency_[(static_cast<size_t>(r) * 2 + forward) * senders_ + rank];
    if (latency < Picoseconds(0)) {
      int to = 0, chunk = 0;
      neighbour(r, {forward, forward ? 0 : plan_.chunks - 1, 0}, &to, &chunk);
      latency = step_latency(plan_.gpu(0, r, plan_rank(rank)), plan_.gpu(0, to, plan_rank(rank)),
                             net_->topology());
    }
    return latency;
  }

  void rank_arrived(size_t send_rank) {
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

  void record_send(const Send& send) {
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

  // Buckets of gradients: when overlapped, a model chunk's share of them becomes ready across
  // that chunk's last backward (which starts now, `work` long alone): Megatron-Core reduces each
  // chunk's gradients after its last micro-batch (grad_sync_func in the interleaved schedule,
  // megatron/core/pipeline_parallel/schedules.py), so with interleaving the reductions run under
  // the other chunks' remaining backwards. Each bucket is reduced after the previous one (NCCL
  // runs a group's collectives in order). A bucket is full when the backward's work has passed
  // its share, at the pace the collectives' SMs leave the backward (collective_sm_contention.h),
  // the last one at the backward's end (Megatron-Core launches a bucket's collective from its last
  // gradient's hook, register_grad_ready in megatron/core/distributed/
  // distributed_data_parallel.py, NVIDIA/Megatron-LM 0011998; its last bucket holds the first
  // layers'): a backward slowed by the reductions beside it fills its buckets later, and the last
  // bucket's reduction follows its end.
  void start_gradient_reduction(int r, Picoseconds work) {
    const StageWork& w = plan_.work[r];
    Reduction& pending = reductions_[r];
    pending.buckets = plan_.data_parallel > 1 && !zero3_[r]
                          ? (plan_.overlap_gradient_reduce ? w.gradient_buckets : 1)
                          : 0;
    if (pending.buckets == 0 || !plan_.overlap_gradient_reduce) return;
    pending.chunk_buckets = std::max(1, pending.buckets / plan_.chunks);
    pending.buckets = pending.chunk_buckets * plan_.chunks;
    pending.filling = true;
    pending.filled = 0;
    pending.backward_work = work;
    arm_bucket(r);
  }

  // Schedules the filling backward's next bucket but its last (which its end fills) at the time
  // its work reaches it at the present pace; none while every SM is held (the next change of the
  // collectives arms it again).
  void arm_bucket(int r) {
    Reduction& p = reductions_[r];
    if (!p.filling || p.filled + 1 >= p.chunk_buckets) {
      p.armed = false;
      return;
    }
    const Picoseconds share(p.backward_work.count() * (p.filled + 1) / p.chunk_buckets);
    // A backward whose all-to-alls run on the network fills a bucket in the compute segment that
    // reaches it, or (in an all-to-all) as the next one starts.
    const Stage& s = stages_[r];
    if (s.segment % 2 == 1 || share > compute_end(r)) {
      p.armed = false;
      return;
    }
    const std::optional<Picoseconds> at =
        contention_[r].reaches(now(), std::max(Picoseconds(0), share - s.offset));
    if (p.armed && at == p.bucket_at) return;
    p.armed = at.has_value();
    if (!at) return;
    p.bucket_at = *at;
    schedule_at(*at, kBucketReady, r);
  }

  void bucket_filled(int r) {
    Reduction& p = reductions_[r];
    if (!p.armed || p.bucket_at != now()) return;  // moved by a collective's start or end
    p.armed = false;
    ++p.filled;
    bucket_ready(r);
    arm_bucket(r);
  }

  // The chunk's last backward has ended: its buckets not yet filled are.
  void finish_filling(int r) {
    Reduction& p = reductions_[r];
    if (!p.filling) return;
    p.filling = false;
    p.armed = false;
    for (; p.filled < p.chunk_buckets; ++p.filled) bucket_ready(r);
  }

  // Stage r's last task has ended: its gradients are final, or once the weight-gradient GEMMs it
  // deferred have run after it on the compute stream (Megatron-Core runs them after the
  // schedule's last send, before finalize_model_grads waits for the reductions; the buckets were
  // launched from the backwards' hooks as they are without them).
  void finish_backwards(int r) {
    const Picoseconds drain = plan_.deferred_drain(r);
    if (drain <= Picoseconds(0)) return backward_done(r);
    Stage& s = stages_[r];
    s.draining = true;
    s.started = now();
    timeline_.stages[r].busy += drain;
    if (const auto end = contention_[r].start(now(), drain)) schedule_at(*end, kTaskEnd, r);
  }

  void backward_done(int r) {
    reductions_[r].backward_done = true;
    if (plan_.deepspeed_exchange && ties(r) && !tied_.done) return reach_tied_reduction(r);
    reduce_gradients(r);
  }

  void reduce_gradients(int r) {
    if (plan_.data_parallel > 1 && !plan_.overlap_gradient_reduce && !zero3_[r]) bucket_ready(r);
    maybe_step_optimizer(r);
  }

  // Whether stage r holds a copy of the tied word embedding whose gradient it all-reduces.
  bool ties(int r) const {
    return plan_.tied_embedding_gradient_bytes > 0 && plan_.stages > 1 &&
           (r == 0 || r == plan_.stages - 1);
  }

  // Stage r's gradients are final for the tied all-reduce (DeepSpeed: its backwards; Megatron: its
  // data-parallel reduction too); once both stages' are, the all-reduce runs, then each goes on.
  void reach_tied_reduction(int r) {
    if (tied_.reached[r != 0]) return;
    tied_.reached[r != 0] = true;
    if (!tied_.reached[0] || !tied_.reached[1]) return;
    const Picoseconds start = now();
    const int last = plan_.stages - 1;
    // One pair per simulated tensor-parallel rank, of replica 0 and context-parallel rank 0: the
    // other replicas' and context ranks' pairs are on other GPUs and their links and run alike, as
    // the data-parallel collectives take one group for all (a step of 128 replicas otherwise
    // starts 128 times the collectives for the same time).
    auto all = after_all(ranks_, [this, last, start] {
      if (record_) record(0, "data parallel", "tied embedding", start);
      tied_.done = true;
      for (int stage : {0, last}) {
        if (plan_.deepspeed_exchange) {
          reduce_gradients(stage);
        } else {
          maybe_step_optimizer(stage);
        }
      }
    });
    for (int rank = 0; rank < ranks_; ++rank) {
      start_collective(net_,
                       {CollectiveOp::kAllReduce,
                        {plan_.gpu(0, 0, rank), plan_.gpu(0, last, rank)},
                        plan_.tied_embedding_gradient_bytes, CollectiveAlgorithm::kAuto},
                       all);
    }
  }

  void bucket_ready(int r) {
    ++reductions_[r].ready;
    launch_next_bucket(r);
  }

  void launch_next_bucket(int r) {
    Reduction& pending = reductions_[r];
    if (pending.in_flight || pending.launched >= pending.ready) return;
    pending.in_flight = true;
    ++pending.launched;
    const StageWork& w = plan_.work[r];
    const CollectiveOp op = plan_.shard_gradients && !plan_.all_reduce_gradients
                                ? CollectiveOp::kReduceScatter
                                : CollectiveOp::kAllReduce;
    replica_collectives(r, op, w.gradient_bytes / pending.buckets,
                        w.expert_gradient_bytes / pending.buckets, [this, r] {
                          Reduction& p = reductions_[r];
                          p.in_flight = false;
                          ++p.done;
                          launch_next_bucket(r);
                          maybe_step_optimizer(r);
                        });
  }

  // A bucket's dense share over the data x context-parallel replicas and, beside it, its routed
  // experts' share over their expert data-parallel group (Megatron-Core keeps expert parameters
  // in buffers of their own, reduced over that group); `done` when both are.
  void replica_collectives(int r, CollectiveOp op, double dense_bytes, double expert_bytes,
                           std::function<void()> done) {
    if (expert_bytes <= 0 || plan_.experts.expert_data_parallel() <= 1) {
      return data_parallel_collective(r, op, dense_bytes, std::move(done));
    }
    auto both = after_all(2, std::move(done));
    data_parallel_collective(r, op, dense_bytes, both);
    expert_data_parallel_collective(r, op, expert_bytes, both);
  }

  // One collective per simulated tensor-parallel rank of stage r over the expert data-parallel
  // group of the same stage-local rank (expert_parallel.h; the stage's other expert groups, on
  // other GPUs and their links, run alike).
  void expert_data_parallel_collective(int r, CollectiveOp op, double bytes,
                                       std::function<void()> done) {
    const Picoseconds start = now();
    auto all = after_all(ranks_, [this, r, op, start, done = holding_sms(r, std::move(done))] {
      if (record_) record(r, "expert data parallel", collective_op_name(op), start);
      done();
    });
    const int tcp = plan_.tensor_parallel * plan_.context_parallel;
    for (int rank = 0; rank < ranks_; ++rank) {
      std::vector<int> group;
      for (int local : expert_data_parallel_group(plan_.experts, rank)) {
        group.push_back(plan_.gpu(local / tcp, r, local % tcp));
      }
      start_collective(net_, {op, group, bytes, CollectiveAlgorithm::kAuto}, all);
    }
  }

  // One collective per tensor-parallel rank of stage r (simulated) and data-parallel `group`
  // (hybrid sharding's groups, or its ranks holding one shard, all at once), over the replicas'
  // context-parallel ranks.
  void data_parallel_collective(int r, CollectiveOp op, double bytes, std::function<void()> done,
                                DataParallelGroup group = DataParallelGroup::kAll) {
    const Picoseconds start = now();
    const int shard = group == DataParallelGroup::kAll || plan_.data_parallel_shard <= 0
                          ? plan_.data_parallel
                          : plan_.data_parallel_shard;
    const int replicas = plan_.data_parallel / shard;
    // Each collective's replicas d: a group's consecutive ones, or one shard's in every group.
    std::vector<std::vector<int>> replica_sets;
    if (group == DataParallelGroup::kReplicas) {
      for (int j = 0; j < shard; ++j) {
        for (int c = 0; c < plan_.context_parallel; ++c) {
          replica_sets.emplace_back();
          for (int g = 0; g < replicas; ++g) replica_sets.back().push_back(g * shard + j);
        }
      }
    } else {
      for (int g = 0; g < replicas; ++g) {
        replica_sets.emplace_back();
        for (int j = 0; j < shard; ++j) replica_sets.back().push_back(g * shard + j);
      }
    }
    auto all = after_all(ranks_ * static_cast<int>(replica_sets.size()),
                         [this, r, op, start, done = holding_sms(r, std::move(done))] {
                           if (record_) record(r, "data parallel", collective_op_name(op), start);
                           done();
                         });
    for (int rank = 0; rank < ranks_; ++rank) {
      for (size_t set = 0; set < replica_sets.size(); ++set) {
        std::vector<int> members;
        for (int d : replica_sets[set]) {
          if (group == DataParallelGroup::kReplicas) {
            const int c = static_cast<int>(set) % plan_.context_parallel;
            members.push_back(plan_.gpu(d, r, c * plan_.tensor_parallel + rank));
            continue;
          }
          for (int c = 0; c < plan_.context_parallel; ++c) {
            members.push_back(plan_.gpu(d, r, c * plan_.tensor_parallel + rank));
          }
        }
        Collective c{op, members, bytes, CollectiveAlgorithm::kAuto};
        // Every group of a kind has the same shape on the cluster: choose once per size.
        auto [it, inserted] =
            algorithms_.try_emplace({static_cast<int>(op) * 3 + static_cast<int>(group), bytes});
        if (inserted) it->second = choose_algorithm(c, net_->topology());
        c.algorithm = it->second;
        start_collective(net_, c, all);
      }
    }
  }

  void maybe_step_optimizer(int r) {
    Reduction& pending = reductions_[r];
    if (!pending.backward_done || pending.done < pending.buckets || pending.optimizer_started)
      return;
    if (zero3_[r] && zero3_[r]->reductions_pending()) return;
    if (ties(r) && !tied_.done) return reach_tied_reduction(r);
    pending.optimizer_started = true;
    timeline_.stages[r].gradients_reduced = now();
    schedule(plan_.work[r].optimizer, kOptimizerEnd, r);
  }

  void optimizer_done(int r) {
    const StageWork& w = plan_.work[r];
    if (record_) record(r, "compute", "optimizer", now() - w.optimizer);
    timeline_.stages[r].optimizer_end = now();
    if (w.parameter_gather_bytes + w.expert_parameter_gather_bytes <= 0 ||
        plan_.data_parallel <= 1) {
      timeline_.stages[r].end = now();
      return;
    }
    const Picoseconds optimizer_end = now();
    replica_collectives(r, CollectiveOp::kAllGather, w.parameter_gather_bytes,
                        w.expert_parameter_gather_bytes, [this, r, optimizer_end] {
                          Picoseconds end = now();
                          // Each chunk's gather runs under the first forwards of the
                          // chunks before it (param_sync_func in the interleaved schedule),
                          // which it slows (collective_sm_contention.h).
                          if (plan_.overlap_parameter_gather) {
                            Picoseconds first_forwards(0);
                            for (int c = 0; c < plan_.chunks; ++c)
                              first_forwards += plan_.chunk_forward(r, c);
                            end = optimizer_end +
                                  exposed_beside_compute(end - optimizer_end, first_forwards,
                                                         plan_.work[r].gpu_sms);
                          }
                          timeline_.stages[r].end = end;
                        });
  }

  // Records the run's state at this instant (a cut) and jumps when it repeats an earlier one.
  void take_cut() {
    const Stage& first = stages_[0];
    PipelineCut cut{
        StateFingerprint(now()), now(), first.tasks[first.next - 1].micro_batch, {}, {}, {}, {}};
    describe(&cut.state, cut.micro_batch);
    net_->fingerprint(&cut.state);
    net_->simulation().fingerprint(&cut.state);
    for (int r = 0; r < plan_.stages; ++r) {
      cut.next_task.push_back(stages_[r].next);
      cut.busy.push_back(timeline_.stages[r].busy);
      cut.stretch.push_back(contention_[r].stretch());
      cut.expert_wait.push_back(timeline_.stages[r].expert_network_wait);
    }
    if (const std::optional<SteadyStateJump> jump = skip_->record(std::move(cut))) skip(*jump);
  }

  // Writes the stages, their reductions and the sends in flight into `f`: micro-batches relative
  // to `micro_batch`, positions in the schedules relative to stage 0's next task.
  void describe(StateFingerprint* f, int micro_batch) const {
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
  void for_each_waiting_input(int r, Fn fn) const {
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
  void skip(const SteadyStateJump& jump) {
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
      contention_[r].translate(jump.time);
      contention_[r].add_stretch(jump.stretch[r]);
      timeline_.stages[r].expert_network_wait += jump.expert_wait[r];
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

  // Records [start, end) (end: now) on `track` of stage r. Requires: recording.
  void record(int r, const char* track, const std::string& name, Picoseconds start,
              std::optional<Picoseconds> end = std::nullopt) {
    record_->add("stage " + std::to_string(r), track, name, start, end.value_or(now()));
  }
  Picoseconds now() const { return net_->simulation().now(); }

  // Draws the expert all-to-alls of the task stage r has just ended, begun at `start`, on their
  // own track, at their places in its pass (a combined step's pass is shorter: their starts
  // squeezed with it, each cut at the task's end). Requires: recording.
  void record_all_to_alls(int r, const PipelineTask& task, Picoseconds start) {
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

  static std::string task_name(const PipelineTask& t, int chunks) {
    std::string name =
        std::string(t.forward ? "forward" : "backward") + " mb " + std::to_string(t.micro_batch);
    return chunks > 1 ? name + " chunk " + std::to_string(t.chunk) : name;
  }

  const PipelinePlan& plan_;
  Network* net_;
  Timeline* record_;
  // The plan's rank of sender `rank`: its context-parallel rank, then its tensor-parallel rank.
  int plan_rank(int rank) const {
    return rank / ranks_ * plan_.tensor_parallel + rank % ranks_;
  }

  int ranks_;    // tensor-parallel ranks whose traffic is simulated (1 when replicated)
  // The tied embedding's all-reduce (PipelinePlan::tied_embedding_gradient_bytes): whether the
  // first and the last stage have reached it, and whether it has ended.
  struct TiedReduction {
    bool reached[2] = {false, false};
    bool done = false;
  } tied_;
  int senders_;  // the stage's ranks whose sends are simulated: ranks_ x context parallel
  std::vector<Stage> stages_;
  // Micro-batch numbers in the schedules are below this (an interleaved schedule may number past
  // micro_batches when stages does not divide it).
  int micro_batch_ids_ = 0;
  std::vector<Reduction> reductions_;
  std::vector<Send> sends_;  // in flight, or free for reuse when listed in free_sends_
  std::vector<size_t> free_sends_;
  // By send rank: the transfer in flight, or one of these.
  static constexpr int64_t kArrived = -1, kToItself = -2;
  std::vector<int64_t> send_ranks_;
  std::vector<Picoseconds> send_latency_;  // by (stage, forward?, rank); negative: not looked up
  std::map<std::pair<int, double>, CollectiveAlgorithm> algorithms_;
  std::vector<std::unique_ptr<Zero3Stage>> zero3_;  // per stage; null when not ZeRO-3
  std::vector<CollectiveSmContention> contention_;  // per stage
  std::vector<AllToAllRoutes> a2a_;                 // per stage
  std::optional<SteadyStateSkip> skip_;             // when skipping the steady state
  size_t first_backward_ = 0;                       // stage 0's first backward task
  bool cut_due_ = false;                            // paused for a cut
  PipelineTimeline timeline_;
};

}  // namespace

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
