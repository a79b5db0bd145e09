// The run of a pipeline plan on the engine behind simulate_pipeline (pipeline_simulation.h), one
// class whose parts live in three files: pipeline_simulation.cpp runs the stages' tasks, the
// stage-to-stage sends and the expert all-to-alls; pipeline_gradient_reduction.cpp the
// data-parallel tail of the step (gradient buckets, the tied embedding's all-reduce, the
// optimizer, the parameter gather); pipeline_steady_state_cut.cpp the cuts that find the periodic
// steady state and the jump over it (steady_state_skip.h). Only those files use it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/net/collective.h"
#include "sim/net/collective_algorithms.h"
#include "sim/parallel/collective_sm_contention.h"
#include "sim/parallel/deepspeed_pipeline.h"
#include "sim/parallel/expert_network_traffic.h"
#include "sim/parallel/pipeline_simulation.h"
#include "sim/parallel/steady_state_skip.h"

namespace clustersim {

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
              bool skip_steady_state);

  PipelineTimeline run();

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
    // what its start lost to deferred weight gradients (the spans count from the full task's);
    // an input-gradient-only backward's spans squeezed from the full one's length `full`.
    const std::vector<TaskSpan>* spans = nullptr;
    size_t segment = 0;
    Picoseconds offset, length, deferred, full;
    bool squeezed = false;
    // The all-to-all running (its task's, or under ZeRO-3 its Zero3Stage's): which, since when,
    // and the transfers of its traffic, one per kind (-1: arrived), and how many have not.
    const TaskSpan* all_to_all = nullptr;
    Picoseconds all_to_all_start;
    std::vector<int64_t> all_to_all_transfers;
    size_t all_to_all_arriving = 0;
    // How much earlier than they run its data-parallel collectives are drawn: its optimizer's
    // end while its parameter all-gathers overlapped with the next forwards run, so that the
    // trace draws them beside this step's first forwards (the previous step's, in the steady
    // state), else 0.
    Picoseconds drawn_earlier;
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

  // pipeline_simulation.cpp: the tasks, the sends, the expert all-to-alls.
  std::function<void()> holding_sms(int r, std::function<void()> done);
  void contention_changed(int r, int ctas);
  void on_event(uint64_t tag) override;
  void describe_event(uint64_t tag, StateFingerprint* f) const override;
  void try_start(int r);
  const std::vector<TaskSpan>* network_all_to_alls(int r, const PipelineTask& task) const;
  void prepare_all_to_alls(int r);
  void start_compute(int r);
  Picoseconds compute_end(int r) const;
  Picoseconds span_start(int r, const TaskSpan& span) const;
  bool start_all_to_all(int r);
  void run_all_to_all(int r, const TaskSpan& span);
  void all_to_all_arrived(int r, size_t k);
  void all_to_all_ended(int r);
  Picoseconds traffic_alone(int r, double bytes);
  void start_zero3(int r);
  void task_done(int r);
  void begin_exchange(int r, const std::optional<PipelineTask>& done);
  void post_call(int r);
  bool neighbour(int r, const PipelineTask& t, int* to, int* chunk) const;
  bool send_onward(int r, const PipelineTask& t);
  size_t new_send(const Send& send);
  Picoseconds send_latency(int r, int to, int rank);
  void rank_arrived(size_t send_rank);
  void record_send(const Send& send);
  void record(int r, const char* track, const std::string& name, Picoseconds start,
              std::optional<Picoseconds> end = std::nullopt);
  void record_all_to_alls(int r, const PipelineTask& task, Picoseconds start);
  static std::string task_name(const PipelineTask& t, int chunks);

  // pipeline_gradient_reduction.cpp: the data-parallel tail of the step.
  void start_gradient_reduction(int r, Picoseconds work);
  void arm_bucket(int r);
  void bucket_filled(int r);
  void finish_filling(int r);
  void finish_backwards(int r);
  void backward_done(int r);
  void reduce_gradients(int r);
  bool ties(int r) const;
  void reach_tied_reduction(int r);
  void bucket_ready(int r);
  void launch_next_bucket(int r);
  void replica_collectives(int r, CollectiveOp op, double dense_bytes, double expert_bytes,
                           std::function<void()> done,
                           DataParallelGroup group = DataParallelGroup::kAll);
  void record_data_parallel(int r, const char* track, CollectiveOp op, Picoseconds start);
  void expert_data_parallel_collective(int r, CollectiveOp op, double bytes,
                                       std::function<void()> done);
  void data_parallel_collective(int r, CollectiveOp op, double bytes, std::function<void()> done,
                                DataParallelGroup group = DataParallelGroup::kAll);
  void maybe_step_optimizer(int r);
  void optimizer_done(int r);
  int parameter_gathers(int r) const;
  void gather_parameters(int r, int left, Picoseconds optimizer_end);

  // pipeline_steady_state_cut.cpp: cuts and the jump over the steady state.
  void take_cut();
  void describe(StateFingerprint* f, int micro_batch) const;
  template <class Fn>
  void for_each_waiting_input(int r, Fn fn) const;
  void skip(const SteadyStateJump& jump);

  // A task's input comes from another stage (or is local: the first forward, the last backward,
  // a deferred weight gradient).
  bool needs_input(int stage, const PipelineTask& t) const {
    if (t.weight_only) return false;
    if (plan_.schedule == schema::DUALPIPE) {  // chunk 0 runs up the stages, chunk 1 down
      const bool first = stage == (t.chunk == 0 ? 0 : plan_.stages - 1);
      const bool last = stage == (t.chunk == 0 ? plan_.stages - 1 : 0);
      return t.forward ? !first : !last;
    }
    if (plan_.schedule == schema::DUALPIPE_V) {  // up through the chunks 0, down through the 1
      return !(stage == 0 && t.chunk == (t.forward ? 0 : 1));
    }
    if (t.forward) return !(stage == 0 && t.chunk == 0);
    return !(stage == plan_.stages - 1 && t.chunk == plan_.chunks - 1);
  }

  Picoseconds task_duration(int r, const PipelineTask& t) const {
    return plan_.task_duration(r, t);
  }

  Picoseconds now() const { return net_->simulation().now(); }

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
  // By (stage, destination the next stage?, rank); negative: not looked up.
  std::vector<Picoseconds> send_latency_;
  std::map<std::pair<int, double>, CollectiveAlgorithm> algorithms_;
  std::vector<std::unique_ptr<Zero3Stage>> zero3_;  // per stage; null when not ZeRO-3
  std::vector<CollectiveSmContention> contention_;  // per stage
  std::vector<AllToAllRoutes> a2a_;                 // per stage
  std::optional<SteadyStateSkip> skip_;             // when skipping the steady state
  // When skipping: per stage, by input_index(), the task that uses the input.
  std::vector<std::vector<size_t>> consumer_;
  size_t first_backward_ = 0;                       // stage 0's first backward task
  bool cut_due_ = false;                            // paused for a cut
  PipelineTimeline timeline_;
};

}  // namespace clustersim
