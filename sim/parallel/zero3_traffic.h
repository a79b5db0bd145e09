// ZeRO-3 (DeepSpeed stage 3) on one pipeline stage: the stage's weights live sharded over data
// parallelism, so every pass over a layer first all-gathers that layer's weights, and every
// layer's backward reduce-scatters its gradients at once. A task (one chunk's forward or backward
// of one micro-batch) therefore runs layer by layer, each layer waiting for its gather; gathers
// run in order on one stream, prefetched a few layers ahead of the compute; reduce-scatters run
// in order on another stream. Gradient accumulation repeats all of it for every micro-batch.
// With activation offload (activation_offload.h) a forward layer's end and a backward layer's
// start also wait on the copies to and from host memory. Under FSDP2 with expert parallelism a
// layer's routed experts have collectives of their own over the expert data-parallel group, and
// the expert all-to-alls whose traffic leaves the NVLink domain may run outside the compute
// (Zero3ExpertAllToAlls): the caller runs them on its network beside the gathers and
// reduce-scatters.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "sim/engine/simulation.h"
#include "sim/net/collective.h"
#include "sim/parallel/activation_offload.h"
#include "sim/parallel/collective_sm_contention.h"
#include "sim/parallel/pipeline_schedule.h"
#include "sim/parallel/task_span.h"

namespace clustersim {

// DeepSpeed ZeRO-3 defaults (microsoft/DeepSpeed deepspeed/runtime/zero/constants.py, 2021):
// stage3_prefetch_bucket_size 5e7 parameters fetched ahead of use, stage3_max_reuse_distance 1e9
// parameters (a parameter used again within this many is kept gathered instead of released),
// reduce_bucket_size 5e8 elements.
inline constexpr double kZero3PrefetchBucketParameters = 5e7;
inline constexpr double kZero3MaxReuseDistanceParameters = 1e9;
inline constexpr double kZero3ReduceBucketElements = 5e8;

// DeepSpeed's stage3_max_live_parameters default (constants.py, 2021): its coordinator prefetches
// only while the gathered parameters it holds stay below this many.
inline constexpr double kZero3MaxLiveParameters = 1e9;

// DeepSpeed before mid-2021 (v0.3.13 to v0.3.16, deepspeed/runtime/zero/stage3.py and
// partition_parameters.py) ran every all-gather and reduce-scatter through torch.distributed's
// list API on the one data-parallel process group, with explicit copies of the gathered
// partitions, and synchronized the device (torch.cuda.synchronize) before each gather and after
// each module's fetch (PR #1188, 2021-06-25, removed both). Its rate, per GPU, in bytes moved per
// second: a 5.1B-parameter BERT (64 layers, hidden 2560) on one 8 x A100 NVLink node
// (p4d.24xlarge) took ~480 ms per forward under ZeRO-3 (v0.3.16) against ~60 ms under ZeRO-2
// (DeepSpeed issue #1174, 2021-06-19): 5.11e9 gathered weights x 2 bytes in 420 ms = 24.3 GB/s
// (NCCL's ring would move them in ~45 ms). Not calibration data: a user's measurement, so
// unverified.
inline constexpr double kDeepSpeed2021FetchBytesPerSecond = 2 * 5.11e9 / 0.420;

// The expert all-to-alls of a stage's layer-by-layer tasks. ZeRO-3 spreads the stage's work
// evenly over its chunks' layers (units) and these the expert layers alike, as evenly as whole
// layers allow: unit j of the stage's U (chunk x units + layer) holds the all-to-alls of its
// expert layers floor(j E / U) to floor((j + 1) E / U) of E. A pass's segment holding k of them
// is split in k equal parts, each holding one expert layer's all-to-alls where its pass has them,
// scaled to the part (one after another, ending by the segment's end where they fit).
struct Zero3ExpertAllToAlls {
  int layers = 0;  // expert layers of the stage over all its chunks, E; 0: none
  // One expert layer's forward, recomputed forward and backward (without the recomputation), and
  // its all-to-alls from each one's start (the recomputed forward's empty: experts not rerun).
  Picoseconds forward, recompute, backward;
  std::vector<TaskSpan> forward_spans, recompute_spans, backward_spans;
};

// The ZeRO-3 traffic of one stage's chunk, per tensor-parallel rank. units == 0: not ZeRO-3.
struct Zero3Work {
  int units = 0;                   // layers of one chunk, each gathered before its passes
  double unit_gather_bytes = 0;    // one layer's weights (the all-gather's whole buffer)
  double unit_gradient_bytes = 0;  // one layer's gradients (the reduce-scatter's whole buffer)
  int unit_reduce_buckets = 1;     // reduce-scatters per layer (reduce_bucket_size)
  // Part of a backward task that recomputes the forward (full recomputation), 0 when none: the
  // recomputed forward gathers the layer again; `regather_for_backward` when the backward then
  // needs a third gather (the weights were released: the layer exceeds the reuse distance).
  Picoseconds recompute;
  bool regather_for_backward = true;
  int prefetch_units = 1;  // gathers issued ahead of the module computing (0: none)
  // A gather or reduce-scatter takes at least its bytes at this rate (0: only the network bounds
  // it).
  double fetch_bytes_per_s = 0;
  // The modules a layer's weights are fetched as, one collective each: their shares of the
  // layer's weights in forward order, adding up to 1 (compute split alike). Empty: the layer is
  // one module.
  std::vector<double> module_shares;
  double unit_parameters = 0;  // one layer's gathered parameters, for the two limits below
  // DeepSpeed's 2021 coordinator (make_fetch_synchronous): each module's fetch synchronizes the
  // device, so a module computes only once its gather and every collective issued before it are
  // done; gathers and reduce-scatters take turns on one process group; a module's gradients are
  // reduce-scattered while the next module computes (a reduce bucket holds the last gradient until
  // the next one arrives); the next module is prefetched only while the module computing holds
  // fewer than `max_live_parameters`; with recomputation, a module's backward regathers it when
  // the modules between its recomputed forward and its backward (those after it, twice) reach the
  // reuse distance.
  bool synchronize = false;
  double max_live_parameters = 0;
  // Hybrid sharding (parallelism.data_parallel_shard): groups holding replicas of the shards, and
  // the ranks of one group, whose reduce-scatter leaves each a 1 / shard_ranks shard to all-reduce
  // across the groups. 1 replica: plain ZeRO-3.
  int replicas = 1;
  int shard_ranks = 1;
  // Hybrid-FSDP (parallelism.shard_optimizer_across_replicas): each shard reduce-scattered across
  // the groups, not all-reduced, and only in each chunk's last backward of the step, as are the
  // routed experts' gradients over their expert data-parallel group (the caller all-gathers the
  // updated shards after the optimizer step).
  bool optimizer_across_replicas = false;
  // FSDP2 of expert layers: a layer's routed experts' weights (whole buffer) gathered, and their
  // gradients reduce-scattered, over the expert data-parallel group in a collective of their own
  // beside the rest of the layer's over the data-parallel ranks (a module is ready when both
  // are). 0: the experts are not sharded (expert data parallel 1: each GPU holds its experts
  // whole), or none.
  double unit_expert_gather_bytes = 0;
  double unit_expert_gradient_bytes = 0;
  // FSDP2's options (parallelism.fsdp2_keep_forward_gather, fsdp2_defer_gradient_sync): the
  // forward's gather serves the backward (and its recomputed forward); each layer gathered once a
  // pipeline run (PipelineTask::run; once a step without runs), at the chunk's first forward of
  // the run, and its gradients reduce-scattered in the chunk's last backward of the run only, or
  // with `reduce_after_backward` all of the chunk's at once after it, the compute stream waiting
  // for them before it goes on (torch.distributed.pipelining's stage.py
  // backward_maybe_with_nosync: FSDP's post_backward, then _root_post_backward_final_callback,
  // whose finalize_backward makes the current stream wait on the reduce-scatter's event).
  bool keep_forward_gather = false;
  bool defer_gradient_sync = false;
  bool reduce_after_backward = false;
  // FSDP2: a backward that reduce-scatters ends only once its reductions are done, the stream
  // waiting on them (torch/distributed/fsdp/_fully_shard/_fsdp_state.py
  // _root_post_backward_final_callback, is_last_backward true unless a no-sync caller clears it:
  // each state's _finalize_backward waits on its post-reduce event, the root on the last
  // reduce-scatter's), so the next task's compute starts after them.
  bool backward_waits_reductions = false;
  // Activations of the first layers copied to host memory and back (activation_offload.h); not
  // with recomputation.
  ActivationOffload offload;
  // Where the expert all-to-alls run, for a caller that runs them outside the compute; with one
  // module per layer only (FSDP2's: DeepSpeed's 2021 modules keep them inside the compute).
  Zero3ExpertAllToAlls expert_all_to_alls;
};

// The traffic of a chunk of `layers` layers holding `chunk_parameters` weights per tensor-parallel
// rank (embedding and head spread over its layers), `weight_bytes` per weight gathered, of which
// `chunk_trained_parameters` have gradients (all of them but under LoRA, whose frozen base is
// gathered and not reduced), `gradient_bytes` per gradient reduced. DeepSpeed's buckets, prefetch
// and reuse distance; without recomputation (set `recompute` after).
// Requires: chunk_trained_parameters <= chunk_parameters.
Zero3Work zero3_work(int layers, double chunk_parameters, double weight_bytes,
                     double chunk_trained_parameters, double gradient_bytes);

// DeepSpeed before mid-2021 (zero3_synchronous_fetch) on layers whose weights are the modules of
// `module_shares` (Zero3Work's): its synchronizing coordinator, collectives at its fetch rate.
// Requires: shares that add up to 1.
void make_fetch_synchronous(Zero3Work* work, std::vector<double> module_shares);

// PyTorch FSDP2 (parallelism.fsdp2), each layer one fully_shard module: one gather prefetched
// ahead (torch's implicit backward prefetch and AutoModel's set_modules_to_forward_prefetch of the
// next layer), one reduce-scatter per layer, a recomputed forward served by the backward's one
// gather (the checkpointed layer recomputes inside its FSDP module's backward, weights unsharded),
// and a reducing backward waiting for its reduce-scatters (backward_waits_reductions).
void make_fsdp2(Zero3Work* work);

// The data-parallel ranks a collective spans: all of them, one hybrid-sharding group, the ranks
// holding the same shard in every group, or the expert data-parallel group (the replicas of the
// same experts).
enum class DataParallelGroup { kAll, kShard, kReplicas, kExperts };

// Collective over the stage's data-parallel `group`s (every tensor-parallel rank, every such group
// at once): runs `done` when complete.
using DataParallelCollective = std::function<void(CollectiveOp op, DataParallelGroup group,
                                                  double bytes, std::function<void()> done)>;

// Runs expert all-to-all `span` (its time alone span.length) with the compute stopped, and calls
// Zero3Stage::all_to_all_done when it ends.
using ExpertAllToAll = std::function<void(const TaskSpan& span)>;

class Zero3Stage {
 public:
  // `tasks` is the stage's schedule; `forward`/`backward` the durations of one task. Compute
  // slows beside the collectives `contention` counts (the caller tells it of each and passes a
  // moved end to compute_moved). With `all_to_all`, the work's expert all-to-alls run through it
  // (without, inside the compute: their closed form). Requires: `contention` outlives the stage.
  Zero3Stage(const Zero3Work& work, const std::vector<PipelineTask>& tasks, Picoseconds forward,
             Picoseconds backward, Simulation* simulation, DataParallelCollective collective,
             CollectiveSmContention* contention, ExpertAllToAll all_to_all = {});

  // The compute running now ends at `end` instead (a collective began or ended beside it).
  void compute_moved(Picoseconds end);

  // The expert all-to-all started through `all_to_all` has ended: the compute goes on.
  void all_to_all_done();

  // Runs task `index` of the schedule layer by layer from now; `done` when its compute ends.
  // Requires: tasks run in schedule order, one at a time.
  void run_task(size_t index, std::function<void()> done);

  // Whether gradients of a finished backward are still being reduce-scattered.
  bool reductions_pending() const {
    return reductions_in_flight_ > 0 || !reductions_queued_.empty() || deferred_.bytes > 0 ||
           deferred_.expert_bytes > 0;
  }
  // `drained` runs whenever the last pending reduce-scatter completes.
  void on_reductions_drained(std::function<void()> drained) { drained_ = std::move(drained); }

  // Totals over the step, for tests: bytes all-gathered and reduce-scattered (whole buffers).
  double gathered_bytes() const { return gathered_bytes_; }
  double reduced_bytes() const { return reduced_bytes_; }
  // Of them, the routed experts' over the expert data-parallel group.
  double expert_gathered_bytes() const { return expert_gathered_bytes_; }
  double expert_reduced_bytes() const { return expert_reduced_bytes_; }
  // Bytes all-reduced (Hybrid-FSDP: reduce-scattered) across hybrid-sharding groups (each
  // rank's shard).
  double replicated_bytes() const { return replicated_bytes_; }
  // Time the compute stream spent waiting for gathers inside tasks. Where a gather the compute
  // waits for ends, the compute work done beside its chain (gathers back to back, each issued as
  // the previous ended, since the chain's first was issued) is recorded in `contention`
  // (record_work_beside): from the chain's start the gathers ran at the network's pace, not the
  // compute's, and the wait ends with the chain, so faster kernels would only wait longer. The
  // reduce-scatters, on their own stream, neither start nor break a chain; a gather that ends at
  // its fetch floor (fetch_bytes_per_s: DeepSpeed 2021's coordinator, not a link) ends its chain
  // and records nothing: no faster link would shorten it.
  Picoseconds waited() const { return waited_; }
  // Of waited(): the waits that ended as a collective ended at its fetch floor
  // (fetch_bytes_per_s: DeepSpeed 2021's coordinator), not as the network delivered it: no
  // faster link or kernel shortens them, only a faster fetch path.
  Picoseconds fetch_paced_waited() const { return fetch_paced_waited_; }
  // The activation offload's copy streams; null without offload.
  const OffloadStreams* offload() const { return offload_.get(); }

 private:
  // One module's stretch of compute, optionally after a gather of `gather_bytes` and before a
  // reduce-scatter of `reduce_bytes`; `layer` the chunk layer a forward or (not recomputing)
  // backward segment computes, for the offload; `prefetch` whether the next gather may be issued
  // while it computes.
  struct Segment {
    Picoseconds duration;
    bool gather = false;
    bool reduce = false;
    bool gathered = false;
    bool forward = false;
    int layer = -1;
    double gather_bytes = 0, reduce_bytes = 0;
    double expert_gather_bytes = 0, expert_reduce_bytes = 0;
    bool prefetch = true;
    bool wait_reduced = false;  // its task ends once every reduce-scatter issued is done
    bool across_replicas = true;  // its reduction goes on across hybrid-sharding groups
    // Its expert all-to-alls run outside the compute: all_to_alls_[first_all_to_all, ...end),
    // from its start.
    uint32_t first_all_to_all = 0, all_to_alls_end = 0;
  };
  // One reduce-scatter's bytes: the dense share's and the routed experts'.
  struct Reduction {
    double bytes = 0, expert_bytes = 0;
    bool across_replicas = true;
  };

  void issue_gathers_up_to(size_t segment);
  // `network_paced`: it ended as the network delivered it, not later at its fetch floor.
  void gather_done(size_t segment, bool network_paced);
  void start_segment();
  void start_compute();
  // Computes the running segment from where it stands to its next all-to-all or its end.
  void compute_piece();
  void piece_done();
  void segment_done();
  void next_segment();
  // The collective `op` of `dense` bytes over the shard's ranks and, when `expert` > 0, beside it
  // of `expert` bytes over the expert data-parallel group; `done` when both are.
  void dense_and_experts(CollectiveOp op, double dense, double expert, std::function<void()> done);
  void queue_reduction(const Reduction& bytes);
  void release_deferred();
  void next_reduction();
  // `at_floor`: it ended at its fetch floor, not as the network delivered it.
  void reduce_scattered(double bytes, bool across_replicas, bool at_floor);
  void reduction_done();
  // Whether the running collective (synchronize: gathers and reduce-scatters take turns) leaves
  // the process group free.
  bool group_free() const;
  // The earliest a collective of `bytes` may complete at the fetch rate.
  Picoseconds fetch_floor(double bytes) const;

  const Zero3Work work_;
  Simulation* sim_;
  DataParallelCollective collective_;
  CollectiveSmContention* contention_;  // the stage's compute stream
  ExpertAllToAll all_to_all_;
  std::vector<Segment> segments_;      // every task's, in schedule order
  std::vector<TaskSpan> all_to_alls_;  // every segment's run outside the compute, in order
  size_t next_all_to_all_ = 0;         // of the running segment
  Picoseconds segment_done_;           // of the running segment's time alone
  std::vector<size_t> task_begin_;     // first segment of each task, and the end
  size_t current_ = 0, task_end_ = 0;  // running segment, end of the running task
  bool waiting_ = false;               // current_ waits for its gather
  bool waiting_reduced_ = false;       // the task computed, waits on its reduce-scatters
  Picoseconds wait_start_, waited_;    // of the current wait, and in all
  Picoseconds fetch_paced_waited_;     // of waited_, the waits a fetch floor ended
  bool released_at_floor_ = false;     // the last collective to end did so at its fetch floor
  size_t gather_issued_ = 0;           // segments before this have their gather issued
  bool gather_in_flight_ = false;
  // When the last gather ended as the network delivered it (none yet, or at its fetch floor:
  // nothing), and the compute work done (contention's work_done) when the chain of gathers in
  // flight began.
  std::optional<Picoseconds> gather_end_;
  Picoseconds chain_start_work_;
  std::deque<Reduction> reductions_queued_;  // each reduce-scatter waiting its turn
  int reductions_in_flight_ = 0;
  Reduction deferred_;  // synchronize: the last module's gradients, held in the bucket
  std::function<void()> task_done_, drained_;
  double gathered_bytes_ = 0, reduced_bytes_ = 0, replicated_bytes_ = 0;
  double expert_gathered_bytes_ = 0, expert_reduced_bytes_ = 0;
  std::unique_ptr<OffloadStreams> offload_;
};

}  // namespace clustersim
