// Stage work from layer kernels, then the pipeline on the engine, then the step's metrics.
//
// Backward of a matmul (m x k).(k x n) is its data gradient (m x n).(n x k) and weight gradient
// (k x m).(m x n); of attention, twice its FLOPs; of a memory-bound kernel, twice its bytes; its
// tensor-parallel collectives mirror the forward's. Recomputation reruns the whole layer forward
// (full) or the attention core (selective) before the backward. The optimizer step is memory-bound:
// 60 bytes per local parameter for FP16 Adam, 46 for BF16 (optimizer_bytes_per_parameter).
#include "sim/parallel/step_model.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "sim/net/collective.h"
#include "sim/parallel/memory_model.h"
#include "sim/parallel/pipeline_simulation.h"
#include "sim/parallel/tensor_comm_overlap.h"
#include "sim/util/check.h"
#include "sim/workload/cnn_ops.h"
#include "sim/workload/layer_ops.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/transformer_flops.h"

namespace clustersim {
namespace {

namespace s = schema;
using Kind = LayerOp::Kind;

struct LayerTimes {
  Picoseconds forward, forward_comm;  // compute kernels; tensor-parallel collectives
  Picoseconds backward, backward_comm;
  Picoseconds recompute, recompute_comm;
};

// Times tensor-parallel collectives on GPUs 0..t-1 of the topology (every tensor-parallel group
// is alike and keeps to its own node's links), caching per kind and size.
class TensorCollectives {
 public:
  TensorCollectives(const Topology& topology, int ranks) : topology_(topology), ranks_(ranks) {}
  Picoseconds time(Kind kind, double bytes) {
    const CollectiveOp op = kind == Kind::kTensorAllGather       ? CollectiveOp::kAllGather
                            : kind == Kind::kTensorReduceScatter ? CollectiveOp::kReduceScatter
                                                                 : CollectiveOp::kAllReduce;
    auto [it, inserted] = cache_.try_emplace({static_cast<int>(op), bytes});
    if (inserted) {
      it->second = collective_time(
          topology_, {op, topology_.first_gpus(ranks_), bytes, CollectiveAlgorithm::kAuto});
    }
    return it->second;
  }

 private:
  const Topology& topology_;
  int ranks_;
  std::map<std::pair<int, double>, Picoseconds> cache_;
};

// Bytes per gradient element in the data-parallel reduction: Megatron-LM reduces FP16 gradients
// in FP16 and forces FP32 reduction with BF16 ("bfloat16 requires gradient accumulation and
// all-reduce to be done in fp32", megatron/training/arguments.py).
double gradient_reduce_bytes(s::Precision precision) { return precision == s::FP16 ? 2 : 4; }

// Bytes per parameter that adding one micro-batch's weight gradients into the step's gradient
// buffer moves, in its own kernel after the backward. FP16 (Megatron-LM 2021, local DDP): the
// backward hook runs main_grad.add_(grad) on 16-bit buffers: read 2 + 2, write 2. BF16
// (Megatron-Core, gradient_accumulation_fusion on by default): the weight-gradient GEMM adds into
// the fp32 buffer in its epilogue, under its compute: no pass of its own.
double gradient_accumulation_bytes(s::Precision precision) { return precision == s::FP16 ? 6 : 0; }

bool is_collective(Kind k) {
  return k == Kind::kTensorAllReduce || k == Kind::kTensorAllGather ||
         k == Kind::kTensorReduceScatter;
}

// Chunks of a pipelined GEMM + reduce-scatter: Transformer Engine's default num_splits for the
// "pipeline" method (transformer_engine/pytorch/module/base.py initialize_ub).
constexpr int kPipelinedChunks = 4;

// Whether the all-gather or reduce-scatter `ops[i]` feeds or drains a GEMM it can overlap.
bool beside_gemm(const std::vector<LayerOp>& ops, size_t i) {
  if (ops[i].kind == Kind::kTensorAllGather) {
    return i + 1 < ops.size() && ops[i + 1].kind == Kind::kMatmul;
  }
  return ops[i].kind == Kind::kTensorReduceScatter && i > 0 && ops[i - 1].kind == Kind::kMatmul;
}

bool is_attention_core(const LayerOp& op) {
  return op.kind == Kind::kAttention || op.name == "scores" || op.name == "softmax" ||
         op.name == "attention dropout" || op.name == "values";
}

// Forward and backward times of the matmul `ops[i]` and, when `overlap_ranks` > 1, of the
// tensor-parallel collective beside it (tensor_comm_overlap.h): an all-gather in front of it runs
// in a ring exchange with its forward and its data-gradient reduce-scatter beside its weight
// gradient; a reduce-scatter after it is pipelined with its forward and its data gradient's
// all-gather runs in a ring exchange with that GEMM (Transformer Engine's userbuffers methods for
// qkv/fc1 and proj/fc2, transformer_engine/pytorch/module/base.py initialize_ub).
struct MatmulTimes {
  Picoseconds forward, forward_comm, backward, backward_comm;
};

MatmulTimes time_matmul(const std::vector<LayerOp>& ops, size_t i, const ComputeModel& compute,
                        TensorCollectives* tp, int overlap_ranks) {
  const LayerOp& op = ops[i];
  const Picoseconds data_gradient = compute.matmul(op.m, op.k, op.n, op.count);
  const Picoseconds weight_gradient = compute.matmul(op.k, op.n, op.m, op.count);
  MatmulTimes t{
      compute.matmul(op.m, op.n, op.k, op.count), {}, data_gradient + weight_gradient, {}};
  if (overlap_ranks < 2) return t;
  const int64_t rows = op.m / overlap_ranks;
  if (i > 0 && ops[i - 1].kind == Kind::kTensorAllGather) {
    const OverlappedTime f =
        ring_exchange_overlap(compute.matmul(rows, op.n, op.k, op.count),
                              tp->time(Kind::kTensorAllGather, ops[i - 1].bytes), overlap_ranks);
    t.forward = f.compute;
    t.forward_comm = f.exposed;
    t.backward_comm = bulk_overlap_exposed(tp->time(Kind::kTensorReduceScatter, ops[i - 1].bytes),
                                           weight_gradient);
  }
  if (i + 1 < ops.size() && ops[i + 1].kind == Kind::kTensorReduceScatter) {
    const OverlappedTime f =
        pipelined_overlap(compute.matmul(op.m / kPipelinedChunks, op.n, op.k, op.count),
                          tp->time(Kind::kTensorReduceScatter, ops[i + 1].bytes), kPipelinedChunks);
    const OverlappedTime b =
        ring_exchange_overlap(compute.matmul(rows, op.k, op.n, op.count),
                              tp->time(Kind::kTensorAllGather, ops[i + 1].bytes), overlap_ranks);
    t.forward = f.compute;
    t.forward_comm = f.exposed;
    t.backward = b.compute + weight_gradient;
    t.backward_comm = b.exposed;
  }
  return t;
}

// `tp` times the tensor-parallel collectives; null when `ops` has none. `overlap_ranks` > 1: the
// all-gathers and reduce-scatters are timed with their GEMMs (time_matmul).
LayerTimes time_ops(const std::vector<LayerOp>& ops, const ComputeModel& compute,
                    TensorCollectives* tp, s::Recompute recompute, int overlap_ranks = 0) {
  LayerTimes t;
  for (size_t i = 0; i < ops.size(); ++i) {
    const LayerOp& op = ops[i];
    const bool comm = is_collective(op.kind);
    if (comm && overlap_ranks > 1 && op.kind != Kind::kTensorAllReduce) {
      CLUSTERSIM_CHECK(beside_gemm(ops, i), "an overlapped collective without its GEMM");
      continue;  // timed with its GEMM
    }
    Picoseconds fwd, bwd, fwd_comm, bwd_comm;
    switch (op.kind) {
      case Kind::kMatmul: {
        const MatmulTimes m = time_matmul(ops, i, compute, tp, overlap_ranks);
        fwd = m.forward;
        bwd = m.backward;
        fwd_comm = m.forward_comm;
        bwd_comm = m.backward_comm;
        break;
      }
      case Kind::kAttention:
        fwd = compute.fused_attention(op.flops);
        bwd = compute.fused_attention(2 * op.flops);
        break;
      case Kind::kMemory:
        fwd = compute.memory_bound(op.bytes);
        bwd = compute.memory_bound(2 * op.bytes);
        break;
      default:
        CLUSTERSIM_CHECK(tp != nullptr, "tensor-parallel collectives without a group to time them");
        fwd_comm = bwd_comm = tp->time(op.kind, op.bytes);
        break;
    }
    t.forward += fwd;
    t.forward_comm += fwd_comm;
    t.backward += bwd;
    t.backward_comm += bwd_comm;
    if (recompute == s::RECOMPUTE_FULL ||
        (recompute == s::RECOMPUTE_SELECTIVE && is_attention_core(op))) {
      t.recompute += fwd;
      t.recompute_comm += fwd_comm;
    }
  }
  return t;
}

// Bytes the optimizer step reads and writes per local parameter, pass by pass as Megatron-LM's
// mixed-precision optimizer runs them (megatron/optimizer/optimizer.py, Float16OptimizerWith
// Float16Params.step):
//   FP16 only: 16-bit gradients copied to fp32 (read 2, write 4) and unscaled with the inf check
//              (read 4, write 4); BF16 accumulates and reduces in fp32 without loss scaling;
//   gradient norm (read 4) and clipping (read 4, write 4);
//   the update on fp32 state: Adam reads gradient, weight and two moments and writes weight and
//              moments (28), SGD with momentum 20, plain SGD 12;
//   16/8-bit precisions: fp32 master weights copied to the model's weights (read 4, write 2).
double optimizer_bytes_per_parameter(s::Optimizer optimizer, s::Precision precision) {
  const double update = optimizer == s::ADAM ? 28 : optimizer == s::SGD_MOMENTUM ? 20 : 12;
  const bool master_copy = precision != s::FP32 && precision != s::TF32;
  return update + 12 + (precision == s::FP16 ? 6 + 8 : 0) + (master_copy ? 6 : 0);
}

const char* largest(const StepResult& r) {
  const std::pair<double, const char*> parts[] = {
      {r.compute_s, "compute"},
      {r.tensor_comm_s, "tensor-parallel communication"},
      {r.bubble_s, "pipeline bubble"},
      {r.data_comm_s, "data-parallel communication"},
      {r.optimizer_s, "optimizer"}};
  return std::max_element(std::begin(parts), std::end(parts))->second;
}

// Runs `plan` on an idle network of `topology` and fills the step time and the breakdown of the
// stage that finishes last, given each stage's kernel and tensor-parallel time over the step.
StepResult run_pipeline(const PipelinePlan& plan, const Topology& topology, Timeline* timeline,
                        const std::vector<double>& compute_s,
                        const std::vector<double>& tensor_comm_s) {
  const PipelineTimeline stages = simulate_pipeline(plan, topology, timeline);
  StepResult r;
  r.step_s = stages.step.seconds();
  for (size_t i = 0; i < stages.stages.size(); ++i) {
    if (stages.stages[i].end > stages.stages[r.critical_stage].end) {
      r.critical_stage = static_cast<int>(i);
    }
  }
  const StageTimeline& c = stages.stages[r.critical_stage];
  r.compute_s = compute_s[r.critical_stage];
  r.tensor_comm_s = tensor_comm_s[r.critical_stage];
  // Clamped: rounding of the per-layer ZeRO-3 segments leaves a few femtoseconds either way.
  r.bubble_s = std::max(0.0, c.last_backward_end.seconds() - r.compute_s - r.tensor_comm_s -
                                 c.parameter_wait.seconds());
  r.data_comm_s =
      (c.gradients_reduced - c.last_backward_end).seconds() + c.parameter_wait.seconds();
  r.optimizer_s = (c.end - c.gradients_reduced).seconds();
  r.limiting = largest(r);
  return r;
}

StepResult simulate_transformer_step(const s::Model& model, const s::TrainingJob& job,
                                     const s::Parallelism& p, const Topology& topology,
                                     const ComputeModel& compute, Timeline* timeline) {
  const s::Transformer& t = model.transformer();
  const int tp = p.tensor_parallel(), pp = p.pipeline_parallel(), dp = p.data_parallel();
  const int v = p.schedule() == s::INTERLEAVED_ONE_F_ONE_B ? p.virtual_stages() : 1;
  const int l = t.num_layers();
  const LayerShape shape{job.sequence_length(), p.micro_batch_size(), tp, p.sequence_parallel(),
                         !job.has_flash_attention() || job.flash_attention()};
  TensorCollectives collectives(topology, tp);
  // Chunked overlap needs sequence parallelism's all-gathers and reduce-scatters.
  const int overlap_ranks =
      p.overlap_tensor_communication() && p.sequence_parallel() && tp > 1 ? tp : 0;
  const LayerTimes layer =
      time_ops(layer_forward_ops(t, shape), compute, &collectives, p.recompute(), overlap_ranks);
  const LayerTimes output =
      time_ops(output_forward_ops(t, shape), compute, &collectives, s::RECOMPUTE_NONE);

  PipelinePlan plan;
  plan.schedule = p.schedule();
  plan.stages = pp;
  plan.chunks = v;
  plan.micro_batches = job.global_batch_size() / (p.micro_batch_size() * dp);
  plan.tensor_parallel = tp;
  plan.data_parallel = dp;
  plan.activation_bytes = 2.0 * job.sequence_length() * p.micro_batch_size() * t.hidden_size();
  plan.overlap_gradient_reduce = !p.has_overlap_gradient_reduce() || p.overlap_gradient_reduce();
  plan.overlap_parameter_gather = !p.has_overlap_parameter_gather() || p.overlap_parameter_gather();
  plan.overlap_pipeline_communication =
      !p.has_overlap_pipeline_communication() || p.overlap_pipeline_communication();
  plan.shard_gradients = p.distributed_optimizer() || p.zero_stage() >= 1;
  plan.rank_order = p.rank_order();
  const TransformerParameters params = transformer_parameters(t);
  std::vector<double> compute_s(pp), tensor_comm_s(pp);  // per stage, over the step
  for (int r = 0; r < pp; ++r) {
    const int layers = v > 1 ? l / (pp * v) : layers_on_stage(l, pp, r);
    const bool last = r == pp - 1;
    StageWork w;
    w.forward = Picoseconds(layers * (layer.forward + layer.forward_comm).count() +
                            (last ? (output.forward + output.forward_comm).count() / v : 0));
    w.backward = Picoseconds(
        layers * (layer.backward + layer.backward_comm + layer.recompute + layer.recompute_comm)
                     .count() +
        (last ? (output.backward + output.backward_comm).count() / v : 0));
    compute_s[r] = plan.micro_batches * v *
                   (layers * (layer.forward + layer.backward + layer.recompute).seconds() +
                    (last ? (output.forward + output.backward).seconds() / v : 0));
    tensor_comm_s[r] = plan.micro_batches * v * layers *
                       (layer.forward_comm + layer.backward_comm + layer.recompute_comm).seconds();
    double stage_params = static_cast<double>(params.per_layer) * layers * v;
    if (r == 0) stage_params += static_cast<double>(params.embedding);
    if (last) stage_params += static_cast<double>(params.head);
    const double local = stage_params / tp;
    // Each backward of a chunk accumulates that chunk's gradients.
    const Picoseconds accumulate =
        compute.memory_bound(gradient_accumulation_bytes(job.precision()) * local / v);
    w.backward += accumulate;
    compute_s[r] += plan.micro_batches * v * accumulate.seconds();
    w.gradient_bytes = gradient_reduce_bytes(job.precision()) * local;
    w.gradient_buckets = std::max(1, layers * v);
    w.optimizer =
        compute.memory_bound(optimizer_bytes_per_parameter(job.optimizer(), job.precision()) *
                             local / (plan.shard_gradients ? dp : 1));
    // ZeRO-3 gathers the weights before every pass instead of after the step.
    const bool zero3 = p.zero_stage() >= 3;
    w.parameter_gather_bytes = plan.shard_gradients && !zero3 ? 2 * local : 0;
    if (zero3) {
      // Weights are gathered and gradients reduce-scattered in the weights' own type (DeepSpeed's
      // communication_data_type and FSDP's reduce_dtype default to it).
      const double weight_bytes =
          state_bytes_per_parameter(job.precision(), job.optimizer()).weights;
      w.zero3 = zero3_work(layers, local / v, weight_bytes, weight_bytes);
      if (p.recompute() == s::RECOMPUTE_FULL) {
        w.zero3.recompute = Picoseconds(layers * (layer.recompute + layer.recompute_comm).count());
      }
      if (p.zero3_synchronous_fetch()) make_fetch_synchronous(&w.zero3);
    }
    plan.work.push_back(w);
  }

  StepResult r = run_pipeline(plan, topology, timeline, compute_s, tensor_comm_s);
  const double tokens = static_cast<double>(job.global_batch_size()) * job.sequence_length();
  r.tokens_per_s = tokens / r.step_s;
  r.samples_per_s = job.global_batch_size() / r.step_s;
  const TransformerFlops flops = transformer_flops(t, job.sequence_length());
  double hardware_per_token = flops.model_per_token();
  if (p.recompute() == s::RECOMPUTE_FULL)
    hardware_per_token = flops.with_full_recompute_per_token();
  if (p.recompute() == s::RECOMPUTE_SELECTIVE) {
    hardware_per_token += flops.num_layers * flops.attention_forward_per_token;
  }
  const double peak = compute.peak_flops() * tp * pp * dp * r.step_s;
  r.mfu = flops.model_per_token() * tokens / peak;
  r.hfu = hardware_per_token * tokens / peak;
  return r;
}

// PyTorch DDP's default gradient bucket: bucket_cap_mb = 25 (torch.nn.parallel.
// DistributedDataParallel).
constexpr double kDdpBucketBytes = 25.0 * 1024 * 1024;

// A CNN trains data-parallel: one stage, its kernels from the layer list, gradients all-reduced
// in DDP buckets overlapped with the last backward.
StepResult simulate_cnn_step(const s::Model& model, const s::TrainingJob& job,
                             const s::Parallelism& p, const Topology& topology,
                             const ComputeModel& compute, Timeline* timeline) {
  const std::vector<LayerOp> ops = cnn_forward_ops(model.cnn(), p.micro_batch_size());
  const LayerTimes times = time_ops(ops, compute, nullptr, s::RECOMPUTE_NONE);
  double forward_flops = 0;
  for (const LayerOp& op : ops) {
    if (op.kind == Kind::kMatmul) forward_flops += 2.0 * op.m * op.n * op.k * op.count;
  }
  const double params = static_cast<double>(parameter_count(model));
  PipelinePlan plan;
  plan.micro_batches = job.global_batch_size() / (p.micro_batch_size() * p.data_parallel());
  plan.data_parallel = p.data_parallel();
  plan.overlap_gradient_reduce = !p.has_overlap_gradient_reduce() || p.overlap_gradient_reduce();
  StageWork w;
  w.forward = times.forward;
  w.backward = times.backward;
  w.gradient_bytes = 4 * params;
  w.gradient_buckets = std::max(1, static_cast<int>(std::ceil(w.gradient_bytes / kDdpBucketBytes)));
  w.optimizer = compute.memory_bound(
      optimizer_bytes_per_parameter(job.optimizer(), job.precision()) * params);
  plan.work.push_back(w);
  const double compute_s = (times.forward + times.backward).seconds() * plan.micro_batches;
  StepResult r = run_pipeline(plan, topology, timeline, {compute_s}, {0.0});
  r.samples_per_s = job.global_batch_size() / r.step_s;
  r.tokens_per_s = r.samples_per_s;
  r.mfu = r.hfu = 3 * forward_flops / p.micro_batch_size() * job.global_batch_size() /
                  (compute.peak_flops() * p.data_parallel() * r.step_s);
  return r;
}

}  // namespace

StepResult simulate_step(const s::Model& model, const s::TrainingJob& job, const s::Parallelism& p,
                         const Topology& topology, const ComputeModel& compute,
                         Timeline* timeline) {
  if (model.has_cnn()) return simulate_cnn_step(model, job, p, topology, compute, timeline);
  return simulate_transformer_step(model, job, p, topology, compute, timeline);
}

}  // namespace clustersim
