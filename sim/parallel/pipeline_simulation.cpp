// Event-driven execution of pipeline schedules with stage-to-stage transfers and data-parallel
// gradient reduction on the network.
#include "sim/parallel/pipeline_simulation.h"

#include <map>
#include <memory>

#include "sim/net/collective.h"
#include "sim/net/collective_algorithms.h"

namespace clustersim {
namespace {

// Identifies a task's input: (forward?, chunk, micro-batch).
using TaskKey = std::tuple<bool, int, int>;

class PipelineRun {
 public:
  PipelineRun(const PipelinePlan& plan, Network* network, Timeline* timeline)
      : plan_(plan), net_(network), record_(timeline) {
    const int p = plan.stages;
    stages_.resize(p);
    timeline_.stages.resize(p);
    for (int r = 0; r < p; ++r) {
      stages_[r].tasks = stage_schedule(plan.schedule, p, plan.chunks, plan.micro_batches, r);
    }
  }

  PipelineTimeline run() {
    for (int r = 0; r < plan_.stages; ++r) try_start(r);
    net_->simulation().run();
    for (const StageTimeline& s : timeline_.stages)
      timeline_.step = std::max(timeline_.step, s.end);
    return timeline_;
  }

 private:
  struct Stage {
    std::vector<PipelineTask> tasks;
    size_t next = 0;
    bool busy = false;
    std::map<TaskKey, bool> arrived;  // inputs received from the neighbouring stage
    std::map<size_t, bool> gathered;  // ZeRO-3: task index -> parameters gathered (requested)
  };

  // A task's input comes from another stage (or is local: the first forward, the last backward).
  bool needs_input(int stage, const PipelineTask& t) const {
    if (t.forward) return !(stage == 0 && t.chunk == 0);
    return !(stage == plan_.stages - 1 && t.chunk == plan_.chunks - 1);
  }

  void try_start(int r) {
    Stage& s = stages_[r];
    if (s.busy || s.next >= s.tasks.size()) return;
    const PipelineTask task = s.tasks[s.next];
    if (needs_input(r, task) && !s.arrived[{task.forward, task.chunk, task.micro_batch}]) return;
    if (!parameters_ready(r, s.next)) return;
    prefetch_parameters(r, s.next + 1);
    s.busy = true;
    ++s.next;
    const StageWork& w = plan_.work[r];
    const Picoseconds duration = task.forward ? w.forward : w.backward;
    timeline_.stages[r].busy += duration;
    const bool last_task = s.next == s.tasks.size();
    if (last_task) start_gradient_reduction(r, duration);
    const Picoseconds start = now();
    net_->simulation().call_after(duration, [this, r, task, last_task, start] {
      record(r, "compute", task_name(task, plan_.chunks), start);
      if (last_task) {
        timeline_.stages[r].last_backward_end = net_->simulation().now();
        backward_done(r);
      }
      // Blocking point-to-point: the stage's stream waits for its send to complete.
      const bool blocking = !plan_.overlap_pipeline_communication;
      const bool sent = send_onward(r, task, [this, r, blocking] {
        if (!blocking) return;
        stages_[r].busy = false;
        try_start(r);
      });
      if (blocking && sent) return;
      stages_[r].busy = false;
      try_start(r);
    });
  }

  // ZeRO-3: whether task `index`'s parameters are gathered (requesting them if not yet).
  bool parameters_ready(int r, size_t index) {
    if (plan_.work[r].gather_before_each_task_bytes <= 0 || plan_.data_parallel < 2) return true;
    prefetch_parameters(r, index);
    return stages_[r].gathered.count(index) && stages_[r].gathered[index];
  }

  void prefetch_parameters(int r, size_t index) {
    Stage& s = stages_[r];
    if (plan_.work[r].gather_before_each_task_bytes <= 0 || plan_.data_parallel < 2) return;
    if (index >= s.tasks.size() || s.gathered.count(index)) return;
    s.gathered[index] = false;
    data_parallel_collective(r, CollectiveOp::kAllGather,
                             plan_.work[r].gather_before_each_task_bytes, [this, r, index] {
                               stages_[r].gathered[index] = true;
                               try_start(r);
                             });
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

  // Sends a task's output to the stage that needs it; `sent` runs once it has arrived. Returns
  // false when nothing is sent (the last forward, the first backward).
  bool send_onward(int r, const PipelineTask& t, std::function<void()> sent) {
    int to = 0, chunk = 0;
    if (!neighbour(r, t, &to, &chunk)) return false;
    const TaskKey key{t.forward, chunk, t.micro_batch};
    const int ranks = plan_.tensor_parallel;
    const Picoseconds start = now();
    const LinkKind kind = net_->topology().route_kind(plan_.gpu(0, r, 0), plan_.gpu(0, to, 0));
    const char* track = kind == LinkKind::kNetwork  ? "send (network)"
                        : kind == LinkKind::kNvlink ? "send (NVLink)"
                                                    : "send (PCIe)";
    const std::string name = std::string(t.forward ? "activations mb " : "gradients mb ") +
                             std::to_string(t.micro_batch);
    auto arrived = after_all(ranks, [this, r, to, key, start, track, name, sent] {
      record(r, track, name, start);
      stages_[to].arrived[key] = true;
      try_start(to);
      sent();
    });
    for (int rank = 0; rank < ranks; ++rank) {
      const int from_gpu = plan_.gpu(0, r, rank), to_gpu = plan_.gpu(0, to, rank);
      if (from_gpu == to_gpu) {  // a single stage feeding itself (interleaving with one stage)
        net_->simulation().call_after(Picoseconds(0), arrived);
        continue;
      }
      net_->start_transfer(from_gpu, to_gpu, plan_.activation_bytes / ranks,
                           slowest_step_latency({{from_gpu, to_gpu}}, net_->topology()), arrived);
    }
    return true;
  }

  // Buckets of gradients: when overlapped they become ready across the last backward (which
  // starts now and lasts `duration`); each bucket is reduced after the previous one (NCCL runs a
  // group's collectives in order).
  void start_gradient_reduction(int r, Picoseconds duration) {
    const StageWork& w = plan_.work[r];
    auto& pending = reductions_[r];
    pending.buckets =
        plan_.data_parallel > 1 ? (plan_.overlap_gradient_reduce ? w.gradient_buckets : 1) : 0;
    if (pending.buckets == 0 || !plan_.overlap_gradient_reduce) return;
    for (int b = 0; b < pending.buckets; ++b) {
      const Picoseconds ready(duration.count() * (b + 1) / pending.buckets);
      net_->simulation().call_after(ready, [this, r] { bucket_ready(r); });
    }
  }

  void backward_done(int r) {
    auto& pending = reductions_[r];
    pending.backward_done = true;
    if (plan_.data_parallel > 1 && !plan_.overlap_gradient_reduce) bucket_ready(r);
    maybe_step_optimizer(r);
  }

  void bucket_ready(int r) {
    ++reductions_[r].ready;
    launch_next_bucket(r);
  }

  void launch_next_bucket(int r) {
    auto& pending = reductions_[r];
    if (pending.in_flight || pending.launched >= pending.ready) return;
    pending.in_flight = true;
    ++pending.launched;
    const StageWork& w = plan_.work[r];
    const CollectiveOp op =
        plan_.shard_gradients ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce;
    data_parallel_collective(r, op, w.gradient_bytes / pending.buckets, [this, r] {
      auto& p = reductions_[r];
      p.in_flight = false;
      ++p.done;
      launch_next_bucket(r);
      maybe_step_optimizer(r);
    });
  }

  // One collective per tensor-parallel rank of stage r, over the data-parallel replicas.
  void data_parallel_collective(int r, CollectiveOp op, double bytes, std::function<void()> done) {
    const Picoseconds start = now();
    auto all = after_all(plan_.tensor_parallel, [this, r, op, start, done = std::move(done)] {
      record(r, "data parallel", collective_op_name(op), start);
      done();
    });
    for (int rank = 0; rank < plan_.tensor_parallel; ++rank) {
      std::vector<int> group;
      for (int d = 0; d < plan_.data_parallel; ++d) group.push_back(plan_.gpu(d, r, rank));
      Collective c{op, group, bytes, CollectiveAlgorithm::kAuto};
      // Every data-parallel group has the same shape on the cluster: choose once per size.
      auto [it, inserted] = algorithms_.try_emplace({static_cast<int>(op), bytes});
      if (inserted) it->second = choose_algorithm(c, net_->topology());
      c.algorithm = it->second;
      start_collective(net_, c, all);
    }
  }

  void maybe_step_optimizer(int r) {
    auto& pending = reductions_[r];
    if (!pending.backward_done || pending.done < pending.buckets || pending.optimizer_started)
      return;
    pending.optimizer_started = true;
    StageTimeline& t = timeline_.stages[r];
    t.gradients_reduced = net_->simulation().now();
    const StageWork& w = plan_.work[r];
    const Picoseconds optimizer_start = now();
    net_->simulation().call_after(w.optimizer, [this, r, &w, optimizer_start] {
      record(r, "compute", "optimizer", optimizer_start);
      auto finish = [this, r] { timeline_.stages[r].end = net_->simulation().now(); };
      if (w.parameter_gather_bytes > 0 && plan_.data_parallel > 1) {
        const Picoseconds optimizer_end = net_->simulation().now();
        data_parallel_collective(r, CollectiveOp::kAllGather, w.parameter_gather_bytes,
                                 [this, r, &w, optimizer_end] {
                                   Picoseconds end = net_->simulation().now();
                                   if (plan_.overlap_parameter_gather) {
                                     end = std::max(optimizer_end, end - w.forward);
                                   }
                                   timeline_.stages[r].end = end;
                                 });
      } else {
        finish();
      }
    });
  }

  struct Reduction {
    int buckets = 0, ready = 0, launched = 0, done = 0;
    bool in_flight = false, backward_done = false, optimizer_started = false;
  };

  // Records [start, now) on `track` of stage r, when recording.
  void record(int r, const char* track, const std::string& name, Picoseconds start) {
    if (record_) record_->add("stage " + std::to_string(r), track, name, start, now());
  }
  Picoseconds now() const { return net_->simulation().now(); }

  static std::string task_name(const PipelineTask& t, int chunks) {
    std::string name =
        std::string(t.forward ? "forward" : "backward") + " mb " + std::to_string(t.micro_batch);
    return chunks > 1 ? name + " chunk " + std::to_string(t.chunk) : name;
  }

  const PipelinePlan& plan_;
  Network* net_;
  Timeline* record_;
  std::vector<Stage> stages_;
  std::map<int, Reduction> reductions_;
  std::map<std::pair<int, double>, CollectiveAlgorithm> algorithms_;
  PipelineTimeline timeline_;
};

}  // namespace

PipelineTimeline simulate_pipeline(const PipelinePlan& plan, Network* network, Timeline* timeline) {
  return PipelineRun(plan, network, timeline).run();
}

}  // namespace clustersim
