// One training step of a pipeline on the engine: each stage runs its tasks in schedule order on
// its compute stream; activations and gradients cross between stages over the network (every
// tensor-parallel rank sends its 1/t share: Megatron's scatter/gather); after its last backward a
// stage reduces its gradients over data parallelism (in buckets overlapped with that backward, or
// after it) and steps its optimizer. Under ZeRO-3 a stage runs each task layer by layer through
// Zero3Stage (zero3_traffic.h), which gathers weights and reduce-scatters gradients instead.
//
// A task's expert all-to-alls whose groups span NVLink domains (expert_network_traffic.h) run on
// the network too, the task's compute stopped at each: an all-to-all takes its time alone
// (layer_times.h) and what the traffic beside it (gradient buckets, parameter gathers, stage-to-
// stage sends, other stages' all-to-alls) adds to its pairs across domains, which share NICs and
// fabric max-min fairly with it; a ZeRO-3 stage's where Zero3Stage places them in its layer-by-
// layer tasks. A combined step's (expert_comm_overlap.h) keep their closed form.
//
// Symmetry: all data-parallel replicas run the same schedule at the same times, so replica 0's
// stages are simulated and the data-parallel collectives run over every replica's GPUs on the
// network; all tensor- and context-parallel ranks of a stage do the same work, so a stage has one
// stream (every context-parallel rank's sends are simulated; gradients are reduced over the data
// x context-parallel ranks).
// Their transfers and collectives share NICs and switches: when the topology's rank symmetry
// (sim/net/rank_symmetry.h) makes it exact, rank 0's stand for all ranks' on a replicated
// network; otherwise (or when routing breaks the symmetry during the run) each rank's are
// simulated.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/engine/timeline.h"
#include "sim/net/network.h"
#include "sim/parallel/expert_parallel.h"
#include "sim/parallel/pipeline_schedule.h"
#include "sim/parallel/task_span.h"
#include "sim/parallel/zero3_traffic.h"

namespace clustersim {

struct StageWork {
  Picoseconds forward;        // one micro-batch through one model chunk
  Picoseconds backward;       // the same backwards, recomputation included
  Picoseconds optimizer;      // the optimizer step of this stage's parameters
  double gradient_bytes = 0;  // per GPU, reduced over data parallelism
  // Routed experts' share, reduced over the expert data-parallel group beside each bucket.
  double expert_gradient_bytes = 0;
  // When overlapped: equal buckets, each chunk's share ready across that chunk's last backward.
  int gradient_buckets = 1;
  // The collectives, one after another, that reduce the gradients after the pipeline (when not
  // overlapped) and gather the parameters after the step: 1, or Apex DistributedFusedAdam's
  // buckets (Parallelism.optimizer_bucket_mib; overlapped, gradient_buckets is the same count).
  // With 1, a gather overlapped with the next forwards runs in gradient_buckets collectives
  // (Megatron-Core's, parameter_gather_overlap.h).
  int optimizer_buckets = 1;
  double parameter_gather_bytes = 0;  // per GPU, all-gathered after a sharded optimizer step
  double expert_parameter_gather_bytes = 0;  // the same over the expert data-parallel group
  // ZeRO-3: weights gathered layer by layer before every pass, gradients reduce-scattered layer
  // by layer in every backward (instead of gradient_bytes after the last one).
  Zero3Work zero3 = {};
  // Per model chunk when the chunks differ (uneven layouts, the output layer on the last chunk):
  // replace forward / backward; empty: every chunk takes forward / backward.
  std::vector<Picoseconds> chunk_forward = {}, chunk_backward = {};
  // Per model chunk: of its backward, the weight-gradient GEMMs a zero-bubble schedule runs as a
  // task of their own (PipelineTask::weight_only); empty: none apart.
  std::vector<Picoseconds> chunk_weight_gradient = {};
  // With the expert all-to-all overlap: per model chunk, a forward / backward as half of a
  // combined step (expert_comm_overlap.h), which starts once both have their inputs and sends both
  // outputs when it ends.
  std::vector<Picoseconds> combined_forward = {}, combined_backward = {};
  // Per model chunk: a forward's / backward's expert all-to-alls from the task's start (empty
  // without experts), for traces (a combined step draws them squeezed with its shorter pass) and
  // to run those that leave the NVLink domain on the network.
  std::vector<std::vector<TaskSpan>> chunk_forward_all_to_alls = {},
                                     chunk_backward_all_to_alls = {};
  // The SMs of the stage's GPU (Gpu.streaming_multiprocessors), of which overlapped
  // data-parallel collectives take theirs (collective_sm_contention.h); 0: none taken.
  int gpu_sms = 0;
  // The last stage's deferred output-layer weight gradients (output_weight_gradient_deferral.h):
  // the backwards of the last chunk's first `deferred_output_micro_batches` micro-batches run
  // without their `output_weight_gradient` (one micro-batch's GEMM), and the stage runs them all
  // after its last backward, before its gradients are final.
  int deferred_output_micro_batches = 0;
  Picoseconds output_weight_gradient = {};
};

struct PipelinePlan {
  schema::PipelineSchedule schedule = schema::ONE_F_ONE_B;
  int stages = 1;
  int chunks = 1;
  int micro_batches = 1;
  // Pipeline schedules run one after another per step, micro_batches / runs each
  // (parallelism.pipeline_runs, stage_schedule); the data-parallel reduction and the optimizer
  // follow the last.
  int runs = 1;
  int tensor_parallel = 1;
  int context_parallel = 1;  // ranks splitting each sequence, beside the tensor-parallel ones
  int data_parallel = 1;
  // Hybrid sharding (parallelism.data_parallel_shard): consecutive data-parallel ranks per ZeRO-3
  // group; 0: all of them.
  int data_parallel_shard = 0;
  double activation_bytes = 0;  // crossing between stages per micro-batch (all TP x CP ranks)
  bool overlap_gradient_reduce = true;
  // Stage-to-stage transfers run beside the next task (true) or block the sender's stream until
  // they arrive (Megatron-LM before Megatron-Core's overlapped p2p).
  bool overlap_pipeline_communication = true;
  // The parameter all-gather of a sharded optimizer runs ahead of the next step's first forward
  // of each model chunk of the stage, bucket by bucket (parameter_gather_overlap.h): only what
  // they wait for counts in this step (steady state).
  bool overlap_parameter_gather = true;
  // Reduce-scatter instead of all-reduce (ZeRO / distributed optimizer); gradients are reduced
  // over data parallel x context parallel either way.
  bool shard_gradients = false;
  // All-reduce the gradients though the optimizer is sharded (DeepSpeed's BF16 optimizer).
  bool all_reduce_gradients = false;
  // Stage-to-stage sends and receives as DeepSpeed's pipeline engine makes them
  // (deepspeed_pipeline.h deepspeed_exchange): each a blocking call that starts once its partner
  // has reached the matching one, both stages' streams held until the tensor has crossed.
  // Needs the 1F1B schedule with one chunk; overlap_pipeline_communication is then ignored.
  bool deepspeed_exchange = false;
  // The tied word embedding's gradient, bytes per GPU of the first and the last stage, all-reduced
  // between the two (a group of two per tensor-, context- and data-parallel coordinate, the first
  // replica's simulated for all as its data-parallel collectives are) once both stages' gradients
  // are final, on their streams; the optimizer steps after it. DeepSpeed's
  // engine runs it before its data-parallel reduction (schedule.py TrainSchedule: ReduceTiedGrads,
  // ReduceGrads, OptimizerStep), Megatron after (training.py train_step of 2021,
  // finalize_model_grads' _allreduce_word_embedding_grads since). 0: none.
  double tied_embedding_gradient_bytes = 0;
  std::vector<StageWork> work;   // per stage
  schema::RankOrder rank_order = schema::TP_PP_DP;
  // Expert layout of a stage (stage-local ranks tp + TP (cp + CP dp)): whose groups reduce the
  // experts' gradients.
  ExpertLayout experts = {};
  // Megatron-Core's combined 1F1B with the expert all-to-alls overlapped (stage_schedule); under
  // DualPipe its overlapped forward-and-backward pairs.
  bool overlap_expert_communication = false;
  // By the number of NVLink domains an expert-parallel group spans, the deduplicating
  // dispatcher's rail bytes per all-to-all byte (0: a plain all-to-all); empty when every stage's
  // all-to-alls are plain (expert_network_traffic.h).
  std::vector<double> expert_rail_shares;

  // GPUs are placed tensor-parallel innermost, then context-parallel, then as rank_order says:
  // `rank` = context-parallel rank x tensor_parallel + tensor-parallel rank.
  int gpu(int replica, int stage, int rank) const {
    const int outer = rank_order == schema::TP_DP_PP ? stage * data_parallel + replica
                                                     : replica * stages + stage;
    return outer * tensor_parallel * context_parallel + rank;
  }
  Picoseconds chunk_forward(int stage, int chunk) const {
    const StageWork& w = work[stage];
    return w.chunk_forward.empty() ? w.forward : w.chunk_forward[chunk];
  }
  Picoseconds chunk_backward(int stage, int chunk) const {
    const StageWork& w = work[stage];
    return w.chunk_backward.empty() ? w.backward : w.chunk_backward[chunk];
  }
  Picoseconds chunk_weight_gradient(int stage, int chunk) const {
    const StageWork& w = work[stage];
    return w.chunk_weight_gradient.empty() ? Picoseconds(0) : w.chunk_weight_gradient[chunk];
  }
  Picoseconds task_duration(int stage, const PipelineTask& t) const {
    const StageWork& w = work[stage];
    if (t.weight_only) return chunk_weight_gradient(stage, t.chunk);
    if (t.input_only) {
      const Picoseconds full = t.combined && !w.combined_backward.empty()
                                   ? w.combined_backward[t.chunk]
                                   : chunk_backward(stage, t.chunk);
      return full - chunk_weight_gradient(stage, t.chunk);
    }
    const bool deferred = !t.forward && t.chunk == chunks - 1 &&
                          t.micro_batch < w.deferred_output_micro_batches;
    const Picoseconds less = deferred ? w.output_weight_gradient : Picoseconds(0);
    if (t.combined && !w.combined_forward.empty()) {
      return t.forward ? w.combined_forward[t.chunk] : w.combined_backward[t.chunk] - less;
    }
    return t.forward ? chunk_forward(stage, t.chunk) : chunk_backward(stage, t.chunk) - less;
  }
  // The deferred weight-gradient GEMMs stage `stage` runs after its last backward.
  Picoseconds deferred_drain(int stage) const {
    const StageWork& w = work[stage];
    return Picoseconds(w.deferred_output_micro_batches * w.output_weight_gradient.count());
  }
};

// The algorithms data-parallel collectives ran as (choose_algorithm's), by DataParallelGroup
// (zero3_traffic.h; kExperts: the routed experts' own group): what the limiting column weighs
// the data-parallel part on (part_links.h).
struct DataParallelAlgorithms {
  std::array<uint8_t, 4> by_group{};  // bit 1 << CollectiveAlgorithm of each that ran

  void add(DataParallelGroup group, CollectiveAlgorithm algorithm) {
    by_group[static_cast<size_t>(group)] |= static_cast<uint8_t>(1u << static_cast<int>(algorithm));
  }
  DataParallelAlgorithms& operator|=(const DataParallelAlgorithms& o) {
    for (size_t g = 0; g < by_group.size(); ++g) by_group[g] |= o.by_group[g];
    return *this;
  }
};

struct StageTimeline {
  Picoseconds busy;  // compute stream time
  // What the overlapped collectives' SMs added to the compute (collective_sm_contention.h).
  Picoseconds collective_stretch;
  // Of busy: the compute work (its time alone) the stage ran beside data-parallel collectives
  // the step waited on: beside their last spell without a gap, where that spell is still in
  // flight as the last backward ends, and under ZeRO-3 beside each chain of gathers without a
  // gap that the compute then idled for (zero3_traffic.h): from such a spell's or chain's start
  // the step waits on the collectives, not on this work. 0 where the collectives hid behind the
  // kernels.
  Picoseconds work_beside_collectives;
  Picoseconds last_backward_end;  // with the deferred weight gradients after it, if any
  Picoseconds gradients_reduced;  // data-parallel reduction done
  Picoseconds parameter_wait;     // ZeRO-3: compute stream idle until weight gathers arrive
  // Of parameter_wait: the waits DeepSpeed 2021's fetch rate ended (Zero3Stage::
  // fetch_paced_waited), a software rate no link or kernel shortens.
  Picoseconds fetch_paced_wait;
  // What the traffic beside the expert all-to-alls across NVLink domains added to them.
  Picoseconds expert_network_wait;
  // How long the expert all-to-alls' traffic across NVLink domains (over the scale-out network)
  // was in flight, the compute stopped: from each all-to-all's start until all of it arrived.
  Picoseconds expert_scale_out;
  // The kind of link that binds that traffic alone (Network::prepared_binding_link): the
  // scale-out network, or PCIe between a GPU and its NIC, or NVLink to the GPU on the sending
  // rail. Meaningful where expert_scale_out is not 0.
  LinkKind expert_scale_out_link = LinkKind::kNetwork;
  Picoseconds optimizer_end;      // optimizer step done
  Picoseconds end;                // optimizer and parameter gather done
  DataParallelAlgorithms data_parallel_algorithms;  // of its data-parallel collectives
};

struct PipelineTimeline {
  Picoseconds step;
  std::vector<StageTimeline> stages;
  size_t tasks_skipped = 0;  // by the steady-state shortcut, on all stages together

  // The algorithms every stage's data-parallel collectives ran as, together.
  DataParallelAlgorithms data_parallel_algorithms() const {
    DataParallelAlgorithms all;
    for (const StageTimeline& stage : stages) all |= stage.data_parallel_algorithms;
    return all;
  }
};

// Shortcuts that leave every result as it is; tests turn them off to compare.
struct PipelineShortcuts {
  // One tensor-parallel rank's traffic for all where the cluster's rank symmetry allows it.
  bool one_rank_for_all = true;
  // Whole periods of a steady state that repeats exactly jumped over (steady_state_skip.h).
  bool skip_steady_state = true;
};

// Simulates one step on an idle network of `topology`, which spans at least stages x
// tensor_parallel x context_parallel x data_parallel GPUs. When `timeline` is given, every task, transfer,
// collective and optimizer step is recorded in it (one group per stage; tracks "compute",
// "send (network|NVLink|PCIe)", "data parallel"), and no period is skipped.
PipelineTimeline simulate_pipeline(const PipelinePlan& plan, const Topology& topology,
                                   Timeline* timeline = nullptr, PipelineShortcuts shortcuts = {});

// The group simulate_pipeline records stage `stage`'s spans in ("stage 0"), and whether a track of
// it holds the stage's sends to its neighbours.
std::string pipeline_stage_group(int stage);
bool is_pipeline_send_track(const std::string& track);

}  // namespace clustersim
