// Times of one transformer layer's kernels (workload/layer_ops.h) inside a training step, on one
// tensor- and context-parallel rank: compute from the compute model, tensor-, context- and
// expert-parallel collectives on an idle network of the cluster (the first group of each: every
// group is alike). Routed experts' grouped GEMMs are timed as batched GEMMs of one expert's shape:
// DeepGEMM's grouped contiguous-layout kernels reach the rate of a dense GEMM of the per-group
// shape (the reference data's kernels.csv, H800 FP8: 4 groups of 8192 x 4096 x 7168 at 1297
// TFLOP/s, one 4096 x 4096 x 7168 GEMM at 1304), so no constant of their own.
//
// Backward of a matmul (m x k).(k x n) is its data gradient (m x n).(n x k) and weight gradient
// (k x m).(m x n), the latter absent for a frozen weight (LoRA's base), or its forward
// LayerOp::backward_runs times; of fused attention, its backward kernel; of a memory-bound kernel,
// twice its bytes or its backward_bytes; its collectives mirror the forward's (an all-gather's a
// reduce-scatter and back, of the op's backward_bytes where it has them).
// Recomputation reruns the whole layer forward (full) or the attention core (selective) and the
// parts recompute_modules name before the backward.
#pragma once

#include <map>
#include <utility>
#include <vector>

#include "sim/hw/compute_model.h"
#include "sim/io/schema/parallelism.pb.h"
#include "sim/net/collective.h"
#include "sim/net/topology.h"
#include "sim/parallel/expert_comm_overlap.h"
#include "sim/parallel/task_span.h"
#include "sim/workload/layer_ops.h"

namespace clustersim {

struct PassTimes {
  Picoseconds compute;       // kernels on the compute stream
  Picoseconds tensor_comm;   // tensor-parallel collectives on the critical path
  Picoseconds context_comm;  // context-parallel exchange on the critical path
  Picoseconds expert_comm;   // expert-parallel dispatch and combine all-to-alls
  Picoseconds expert_compute;  // routed experts' kernels: a part of `compute`, not added again
  Picoseconds total() const { return compute + tensor_comm + context_comm + expert_comm; }
  PassTimes& operator+=(const PassTimes& o);
};
PassTimes operator*(int64_t times, const PassTimes& t);

// Parts of one pass's compute that another stream's kernels may share the GPU with.
struct PassShares {
  Picoseconds shared_experts;  // the shared experts' kernels
  Picoseconds host_wait;       // the GPU idle while the host catches up
};

struct LayerTimes {
  PassTimes forward, backward, recompute;
  // The expert all-to-alls of each pass from the pass's start, in the order they run (the
  // backward runs the layer's ops in reverse: its combine's first).
  std::vector<TaskSpan> forward_all_to_alls, backward_all_to_alls;
  // A layer with expert all-to-alls: each pass's compute outside and between them, and the
  // all-to-alls (expert_comm_overlap.h); zero otherwise.
  ExpertPassPhases forward_phases, backward_phases;
  // Of each pass's compute: its shared experts' kernels (LayerOp::shared_expert) and the host's
  // exposed wait (expert_layer_host.h add_expert_layer_host); zero where it has none.
  PassShares forward_shares, backward_shares, recompute_shares;
  // Of the backward's compute: its weight-gradient GEMMs alone, which a zero-bubble schedule
  // (DualPipe's) may run apart from the rest, the input gradient (dualpipe_schedule.h).
  Picoseconds weight_gradient;
};

// Times collectives over one group of GPUs, each alone on an idle network or, with `beside`,
// while each of those groups runs the same collective at the same time on the same network (the
// stage's other expert-parallel groups dispatching their tokens: shared NICs and switches slow
// them all; the last to finish sets the time), cached by kind and size. Not thread-safe.
class GroupCollectives {
 public:
  // Requires: `gpus` and each group of `beside` distinct GPUs of `topology`, which outlives this;
  // the groups disjoint. `dispatcher_kernels`: its all-to-alls are the flex dispatcher's
  // (Collective::dispatcher_kernels).
  GroupCollectives(const Topology& topology, std::vector<int> gpus,
                   std::vector<std::vector<int>> beside = {}, bool dispatcher_kernels = false)
      : topology_(topology),
        gpus_(std::move(gpus)),
        beside_(std::move(beside)),
        dispatcher_kernels_(dispatcher_kernels) {}
  Picoseconds time(CollectiveOp op, double bytes);
  const std::vector<int>& gpus() const { return gpus_; }
  const Topology& topology() const { return topology_; }

 private:
  const Topology& topology_;
  std::vector<int> gpus_;
  std::vector<std::vector<int>> beside_;
  bool dispatcher_kernels_;
  std::map<std::pair<int, double>, Picoseconds> cache_;
};

// The parallel groups a layer's collectives run on.
struct LayerGroups {
  GroupCollectives* tensor = nullptr;   // null when tensor parallel is 1
  GroupCollectives* context = nullptr;  // null when context parallel is 1
  schema::ContextParallelComm context_comm = schema::P2P;
  GroupCollectives* expert = nullptr;         // null when expert parallel is 1
  GroupCollectives* expert_tensor = nullptr;  // null when expert tensor parallel is 1
  // A dispatcher deduplicating per NVLink domain over an expert-parallel group that spans
  // domains (expert_dispatch.h): its rail (the group's GPUs at one place in each domain) and its
  // GPUs in one domain, each beside the stage's others, and the rail's bytes per all-to-all
  // byte; null otherwise (`expert` times the all-to-alls).
  GroupCollectives* expert_rail = nullptr;
  GroupCollectives* expert_domain = nullptr;
  double expert_rail_share = 0;
  // HybridEP's combine inside one NVLink domain (expert_dispatch.h): the least a combine kernel
  // takes, the forward's combine and the backward of the dispatch; 0: none.
  Picoseconds expert_combine_floor{};
  // HybridEP's routing-map all-gather on `expert` before each forward dispatch
  // (routing_map_gather_bytes, expert_dispatch.h); 0: none.
  double expert_routing_map_bytes = 0;
};

// What selective recomputation reruns besides the attention core of RECOMPUTE_SELECTIVE: the
// latent attention's up projections ("q up", "kv up"; parallelism.recompute_latent_up_projection)
// and the modules of parallelism.recompute_modules (LayerOp::recomputable): an expert layer's
// kernels, its routed experts' activation, the norm in front of it.
// `backward_reads_only`: under RECOMPUTE_FULL, only the ops backward_reads (a compiled layer's
// recomputation, parallelism.compiled_recompute) rerun, not the whole layer.
struct RecomputedParts {
  bool latent_up = false;
  bool expert_layer = false, expert_activation = false, expert_norm = false;
  bool backward_reads_only = false;
};
RecomputedParts recomputed_parts(const schema::Parallelism& p);

// Whether the backward of a dense layer reads what `op` (of layer_ops.h, with_lora's adapters)
// makes: false for the norms, the residual adds, the tensor-parallel reductions after the blocks,
// the output projections ("attention out", "mlp down") and their adapters' ops but the first GEMM
// (" adapter A"); true for the others.
bool backward_reads(const LayerOp& op);

// The weight-gradient GEMM of matmul `op` alone, (k x m).(m x n); 0 for a frozen weight.
Picoseconds weight_gradient_time(const LayerOp& op, const ComputeModel& compute);

// Userbuffers' overlap of the tensor-parallel collectives (tensor_comm_overlap.h): `ranks` > 1
// under sequence parallelism, the all-gathers and reduce-scatters run in chunks beside the GEMMs
// they feed or drain; the SMs the reduce-scatter kernels reserve beside the forward GEMM of the
// attention's output projection ("attention out", Transformer Engine's proj_fprop) and of the
// MLP's down projection ("mlp down", fc2_fprop), whose chunks run on the GPU's other SMs
// (parallelism.proto tensor_overlap_attention_out_sms, tensor_overlap_mlp_down_sms).
struct TensorOverlap {
  int ranks = 0;
  int attention_out_sms = 0;
  int mlp_down_sms = 0;
};
TensorOverlap tensor_overlap(const schema::Parallelism& p);

// Requires: `groups` has a group for every kind of collective in `ops`.
LayerTimes time_layer(const std::vector<LayerOp>& ops, const ComputeModel& compute,
                      const LayerGroups& groups, schema::Recompute recompute,
                      const TensorOverlap& overlap = {}, const RecomputedParts& parts = {});

}  // namespace clustersim
