// Kernel and collective times of a layer, the tensor-parallel overlap of Transformer Engine's
// userbuffers (and the asynchronous backward collectives without them), and the attention core
// under context parallelism (context_attention.h).
#include "sim/parallel/layer_times.h"

#include <algorithm>
#include <string_view>

#include "sim/parallel/context_attention.h"
#include "sim/parallel/tensor_comm_overlap.h"
#include "sim/util/check.h"

namespace clustersim {
namespace {

namespace s = schema;
using K = LayerOp::Kind;

bool is_tensor_collective(K k) {
  return k == K::kTensorAllReduce || k == K::kTensorAllGather || k == K::kTensorReduceScatter;
}

CollectiveOp tensor_op(K kind) {
  return kind == K::kTensorAllGather       ? CollectiveOp::kAllGather
         : kind == K::kTensorReduceScatter ? CollectiveOp::kReduceScatter
                                           : CollectiveOp::kAllReduce;
}

// The collective a tensor-parallel collective's backward runs.
K mirrored(K kind) {
  return kind == K::kTensorAllGather       ? K::kTensorReduceScatter
         : kind == K::kTensorReduceScatter ? K::kTensorAllGather
                                           : kind;
}

// Chunks of a pipelined GEMM + reduce-scatter: Transformer Engine's default num_splits for the
// "pipeline" method (transformer_engine/pytorch/module/base.py initialize_ub).
constexpr int kPipelinedChunks = 4;

// Whether the all-gather or reduce-scatter `ops[i]` feeds or drains a GEMM it can overlap.
bool beside_gemm(const std::vector<LayerOp>& ops, size_t i) {
  if (ops[i].kind == K::kTensorAllGather) {
    return i + 1 < ops.size() && ops[i + 1].kind == K::kMatmul;
  }
  return ops[i].kind == K::kTensorReduceScatter && i > 0 && ops[i - 1].kind == K::kMatmul;
}

bool is_attention_core(const LayerOp& op) {
  return op.kind == K::kAttention || op.kind == K::kContextAllGather ||
         op.kind == K::kContextAllToAll || op.name == "scores" || op.name == "softmax" ||
         op.name == "attention dropout" || op.name == "values";
}

// The up projections of multi-head latent attention (layer_ops.cpp's latent_attention).
bool is_latent_up_projection(const LayerOp& op) {
  return op.kind == K::kMatmul && (op.name == "q up" || op.name == "kv up");
}

// Whether selective recomputation reruns `op`'s forward.
bool reruns(const LayerOp& op, s::Recompute recompute, const RecomputedParts& parts) {
  using R = LayerOp::Recomputable;
  const R r = op.recomputable;
  return (recompute == s::RECOMPUTE_SELECTIVE && is_attention_core(op)) ||
         (parts.latent_up && (is_latent_up_projection(op) || r == R::kLatentUp)) ||
         (parts.expert_layer && (r == R::kExpertLayer || r == R::kExpertActivation)) ||
         (parts.expert_activation && r == R::kExpertActivation) ||
         (parts.expert_norm && r == R::kExpertNorm);
}

// Forward and backward times of the matmul `ops[i]` and, when `overlap.ranks` > 1, of the
// tensor-parallel collective beside it (tensor_comm_overlap.h): an all-gather in front of it runs
// in a ring exchange with its forward and its data-gradient reduce-scatter beside its weight
// gradient; a reduce-scatter after it is pipelined with its forward and its data gradient's
// all-gather runs in a ring exchange with that GEMM (Transformer Engine's userbuffers methods for
// qkv/fc1 and proj/fc2, transformer_engine/pytorch/module/base.py initialize_ub).
struct MatmulTimes {
  Picoseconds forward, forward_comm, backward, backward_comm;
  Picoseconds data_gradient, weight_gradient;  // the backward's two GEMMs alone
};

// The rate matmul `op` runs at: TF32, 16 bits, MXFP8 inside an FP4 step, or the job's precision.
GemmFormat gemm_format(const LayerOp& op) {
  return op.tf32          ? GemmFormat::kTf32
         : op.sixteen_bit ? GemmFormat::kSixteenBit
         : op.mxfp8       ? GemmFormat::kMxfp8
                          : GemmFormat::kJob;
}

// An m x n x k GEMM of matmul `op`: `count` kernels of one matrix each, or one kernel of `count`
// (LayerOp::kernel_per_matrix).
Picoseconds op_matmul(const LayerOp& op, const ComputeModel& compute, int64_t m, int64_t n,
                      int64_t k) {
  if (!op.kernel_per_matrix) return compute.matmul(m, n, k, op.count, gemm_format(op));
  return Picoseconds(op.count * compute.matmul(m, n, k, 1, gemm_format(op)).count());
}

MatmulTimes time_matmul(const std::vector<LayerOp>& ops, size_t i, const ComputeModel& compute,
                        GroupCollectives* tp, const TensorOverlap& overlap) {
  const int overlap_ranks = overlap.ranks;
  const LayerOp& op = ops[i];
  const GemmFormat format = gemm_format(op);
  const Picoseconds data_gradient = op_matmul(op, compute, op.m, op.k, op.n);
  const Picoseconds weight_gradient = weight_gradient_time(op, compute);
  MatmulTimes t{op_matmul(op, compute, op.m, op.n, op.k), {}, data_gradient + weight_gradient, {},
                data_gradient, weight_gradient};
  if (op.backward_runs) t.backward = Picoseconds(*op.backward_runs * t.forward.count());
  if (overlap_ranks < 2) return t;
  const int64_t rows = op.m / overlap_ranks;
  if (i > 0 && ops[i - 1].kind == K::kTensorAllGather) {
    const OverlappedTime f = ring_exchange_overlap(
        compute.matmul(rows, op.n, op.k, op.count, format),
        tp->time(CollectiveOp::kAllGather, ops[i - 1].bytes), overlap_ranks);
    t.forward = f.compute;
    t.forward_comm = f.exposed;
    t.backward_comm = bulk_overlap_exposed(
        tp->time(CollectiveOp::kReduceScatter, 2 * ops[i].m * ops[i].k), weight_gradient);
  }
  if (i + 1 < ops.size() && ops[i + 1].kind == K::kTensorReduceScatter) {
    const int reserved = op.name == "attention out" ? overlap.attention_out_sms
                         : op.name == "mlp down"      ? overlap.mlp_down_sms
                                                      : 0;
    const OverlappedTime f = pipelined_overlap(
        on_sms_left(compute.matmul(op.m / kPipelinedChunks, op.n, op.k, op.count, format),
                    compute.gpu().streaming_multiprocessors(), reserved),
        tp->time(CollectiveOp::kReduceScatter, ops[i + 1].bytes), kPipelinedChunks);
    const OverlappedTime b = ring_exchange_overlap(
        compute.matmul(rows, op.k, op.n, op.count, format),
        tp->time(CollectiveOp::kAllGather, ops[i + 1].bytes), overlap_ranks);
    t.forward = f.compute;
    t.forward_comm = f.exposed;
    t.backward = b.compute + weight_gradient;
    t.backward_comm = b.exposed;
  }
  return t;
}

// The forward and backward of one op: compute, tensor-parallel and context-parallel parts.
struct OpTimes {
  PassTimes forward, backward;
};

OpTimes time_op(const std::vector<LayerOp>& ops, size_t i, const ComputeModel& compute,
                const LayerGroups& groups, const TensorOverlap& overlap) {
  const LayerOp& op = ops[i];
  OpTimes t;
  switch (op.kind) {
    case K::kMatmul: {
      const MatmulTimes m = time_matmul(ops, i, compute, groups.tensor, overlap);
      t.forward = {m.forward, m.forward_comm, {}, {}, op.expert ? m.forward : Picoseconds(0)};
      t.backward = {m.backward, m.backward_comm, {}, {}, op.expert ? m.backward : Picoseconds(0)};
      return t;
    }
    case K::kAttention: {
      const AttentionTimes a = attention_times(op, compute, groups.context, groups.context_comm);
      t.forward = {a.forward, {}, a.forward_exposed, {}, {}};
      t.backward = {a.backward, {}, a.backward_exposed, {}, {}};
      return t;
    }
    case K::kMemory:
      t.forward.compute = compute.memory_bound(op.bytes, op.fp32_flops_per_byte);
      t.backward.compute =
          compute.memory_bound(op.backward_bytes.value_or(2 * op.bytes), op.fp32_flops_per_byte);
      if (op.expert) {
        t.forward.expert_compute = t.forward.compute;
        t.backward.expert_compute = t.backward.compute;
      }
      return t;
    case K::kContextAllGather:
      CLUSTERSIM_CHECK(groups.context != nullptr, "a context-parallel collective without a group");
      t.forward.context_comm = groups.context->time(CollectiveOp::kAllGather, op.bytes);
      t.backward.context_comm = groups.context->time(CollectiveOp::kReduceScatter, op.bytes);
      return t;
    case K::kExpertAllToAll:
      CLUSTERSIM_CHECK(groups.expert != nullptr, "an expert all-to-all without a group");
      t.forward.expert_comm = t.backward.expert_comm =
          groups.expert_rail == nullptr
              ? groups.expert->time(CollectiveOp::kAllToAll, op.bytes)
              : std::max(groups.expert_rail->time(CollectiveOp::kAllToAll,
                                                  op.bytes * groups.expert_rail_share),
                         groups.expert_domain->time(CollectiveOp::kAllToAll, op.bytes));
      return t;
    case K::kExpertAllGather:
    case K::kExpertReduceScatter: {
      CLUSTERSIM_CHECK(groups.expert_tensor != nullptr, "an expert collective without a group");
      const bool gather = op.kind == K::kExpertAllGather;
      t.forward.tensor_comm = groups.expert_tensor->time(
          gather ? CollectiveOp::kAllGather : CollectiveOp::kReduceScatter, op.bytes);
      t.backward.tensor_comm = groups.expert_tensor->time(
          gather ? CollectiveOp::kReduceScatter : CollectiveOp::kAllGather, op.bytes);
      return t;
    }
    case K::kContextAllToAll:
      CLUSTERSIM_CHECK(groups.context != nullptr, "a context-parallel collective without a group");
      t.forward.context_comm = t.backward.context_comm =
          groups.context->time(CollectiveOp::kAllToAll, op.bytes);
      return t;
    default:
      CLUSTERSIM_CHECK(groups.tensor != nullptr,
                       "tensor-parallel collectives without a group to time them");
      // The backward mirrors the forward: an all-gather's gradient is reduce-scattered, a
      // reduce-scatter's all-gathered (LayerOp::backward_bytes).
      t.forward.tensor_comm = groups.tensor->time(tensor_op(op.kind), op.bytes);
      t.backward.tensor_comm =
          groups.tensor->time(tensor_op(mirrored(op.kind)), op.backward_bytes.value_or(op.bytes));
      if (op.kind == K::kTensorAllGather && overlap.ranks < 2 && i + 1 < ops.size() &&
          ops[i + 1].kind == K::kMatmul) {
        // Without userbuffers the backward of the GEMM this all-gather feeds launches its
        // collectives asynchronously: the data gradient's reduce-scatter beside the weight
        // gradient and, when the weight has one, the re-gather of the input it needs beside the
        // data gradient (Transformer Engine's LayerNormLinear and Linear backward,
        // gather_along_first_dim and reduce_scatter_along_first_dim with async_op=True, v2.14
        // module/layernorm_linear.py; Megatron-Core's
        // LinearWithGradAccumulationAndAsyncCommunication the same).
        const MatmulTimes m = time_matmul(ops, i + 1, compute, groups.tensor, {});
        t.backward.tensor_comm = bulk_overlap_exposed(t.backward.tensor_comm, m.weight_gradient);
        if (!ops[i + 1].frozen) {
          t.backward.tensor_comm += bulk_overlap_exposed(
              groups.tensor->time(CollectiveOp::kAllGather, op.bytes), m.data_gradient);
        }
      }
      return t;
  }
}

// Adds the pass `o` of `op`, after `all_to_alls` expert all-to-alls of its layer, to `phases`.
void add_phases(const LayerOp& op, int all_to_alls, const PassTimes& o, ExpertPassPhases* phases) {
  if (op.kind == K::kExpertAllToAll) {
    (all_to_alls == 0 ? phases->dispatch : phases->combine) += o.expert_comm;
  } else {
    (all_to_alls == 1 ? phases->experts : phases->pre_dispatch) += o.compute;
  }
}

}  // namespace

PassTimes& PassTimes::operator+=(const PassTimes& o) {
  compute += o.compute;
  tensor_comm += o.tensor_comm;
  context_comm += o.context_comm;
  expert_comm += o.expert_comm;
  expert_compute += o.expert_compute;
  return *this;
}

PassTimes operator*(int64_t times, const PassTimes& t) {
  return {Picoseconds(times * t.compute.count()), Picoseconds(times * t.tensor_comm.count()),
          Picoseconds(times * t.context_comm.count()), Picoseconds(times * t.expert_comm.count()),
          Picoseconds(times * t.expert_compute.count())};
}

Picoseconds GroupCollectives::time(CollectiveOp op, double bytes) {
  auto [it, inserted] = cache_.try_emplace({static_cast<int>(op), bytes});
  if (!inserted) return it->second;
  std::vector<Collective> collectives;
  collectives.reserve(1 + beside_.size());
  collectives.push_back({op, gpus_, bytes, CollectiveAlgorithm::kAuto, dispatcher_kernels_});
  for (const std::vector<int>& group : beside_) {
    collectives.push_back({op, group, bytes, CollectiveAlgorithm::kAuto, dispatcher_kernels_});
  }
  it->second = concurrent_collectives_time(topology_, collectives);
  return it->second;
}

Picoseconds weight_gradient_time(const LayerOp& op, const ComputeModel& compute) {
  return op.frozen ? Picoseconds(0) : op_matmul(op, compute, op.k, op.n, op.m);
}

bool backward_reads(const LayerOp& op) {
  if (op.kind == K::kTensorAllReduce || op.kind == K::kTensorReduceScatter) return false;
  if (op.name == "norm1" || op.name == "norm2" || op.name == "norm" || op.name == "residual add") {
    return false;
  }
  const auto starts = [&](std::string_view prefix) { return op.name.rfind(prefix, 0) == 0; };
  const auto ends = [&](std::string_view suffix) {
    return op.name.size() >= suffix.size() &&
           op.name.compare(op.name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  // An output projection's adapter keeps x . A for its B's weight gradient.
  return !(starts("attention out") || starts("mlp down")) || ends(" adapter A");
}

TensorOverlap tensor_overlap(const s::Parallelism& p) {
  // Chunked overlap needs sequence parallelism's all-gathers and reduce-scatters.
  const int tp = p.tensor_parallel();
  if (!p.overlap_tensor_communication() || !p.sequence_parallel() || tp < 2) return {};
  return {tp, p.tensor_overlap_attention_out_sms(), p.tensor_overlap_mlp_down_sms()};
}

RecomputedParts recomputed_parts(const s::Parallelism& p) {
  RecomputedParts parts;
  parts.backward_reads_only = p.compiled_recompute();
  parts.latent_up = p.recompute_latent_up_projection();
  for (int module : p.recompute_modules()) {
    parts.expert_layer |= module == s::RECOMPUTE_MOE;
    parts.expert_activation |= module == s::RECOMPUTE_MOE_ACT;
    parts.expert_norm |= module == s::RECOMPUTE_LAYERNORM;
  }
  return parts;
}

LayerTimes time_layer(const std::vector<LayerOp>& ops, const ComputeModel& compute,
                      const LayerGroups& groups, s::Recompute recompute,
                      const TensorOverlap& overlap, const RecomputedParts& parts) {
  LayerTimes t;
  int all_to_alls = 0;                 // before ops[i]
  std::vector<TaskSpan> backward_a2a;  // {backward of the ops up to it, its length, -, bytes}
  for (size_t i = 0; i < ops.size(); ++i) {
    const LayerOp& op = ops[i];
    if (is_tensor_collective(op.kind) && overlap.ranks > 1 && op.kind != K::kTensorAllReduce) {
      CLUSTERSIM_CHECK(beside_gemm(ops, i), "an overlapped collective without its GEMM");
      continue;  // timed with its GEMM
    }
    OpTimes o = time_op(ops, i, compute, groups, overlap);
    if (op.kind == K::kExpertAllToAll) {
      const bool dispatch = all_to_alls == 0;
      // The combine kernel runs the forward's combine and the backward of the dispatch.
      Picoseconds& combine = dispatch ? o.backward.expert_comm : o.forward.expert_comm;
      combine = std::max(combine, groups.expert_combine_floor);
      if (dispatch && groups.expert_routing_map_bytes > 0) {
        o.forward.expert_comm +=
            groups.expert->time(CollectiveOp::kAllGather, groups.expert_routing_map_bytes);
      }
      t.forward_all_to_alls.push_back(
          {t.forward.total(), o.forward.expert_comm, dispatch ? "dispatch" : "combine", op.bytes});
      backward_a2a.push_back(
          {t.backward.total() + o.backward.total(), o.backward.expert_comm, "", op.bytes});
    }
    t.forward += o.forward;
    t.backward += o.backward;
    if (op.kind == K::kMatmul && !op.backward_runs) {
      t.weight_gradient += weight_gradient_time(op, compute);
    }
    if (op.shared_expert) {
      t.forward_shares.shared_experts += o.forward.compute;
      t.backward_shares.shared_experts += o.backward.compute;
    }
    add_phases(op, all_to_alls, o.forward, &t.forward_phases);
    add_phases(op, all_to_alls, o.backward, &t.backward_phases);
    all_to_alls += op.kind == K::kExpertAllToAll ? 1 : 0;
    const bool full =
        recompute == s::RECOMPUTE_FULL && (!parts.backward_reads_only || backward_reads(op));
    if (full || reruns(op, recompute, parts)) {
      t.recompute += o.forward;
      if (op.shared_expert) t.recompute_shares.shared_experts += o.forward.compute;
    }
  }
  // The backward runs from the last op: an op ends (backward) where the ops before it begin.
  for (size_t a = backward_a2a.size(); a-- > 0;) {
    const TaskSpan& through = backward_a2a[a];
    t.backward_all_to_alls.push_back({t.backward.total() - through.start, through.length,
                                      a == 0 ? "dispatch (backward)" : "combine (backward)",
                                      through.bytes});
  }
  return t;
}

}  // namespace clustersim
