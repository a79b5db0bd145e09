// Stage work of a transformer from its layers' kernel times, chunk by chunk.
#include "sim/parallel/transformer_stages.h"

#include <cmath>
#include <memory>

#include "sim/parallel/layer_times.h"
#include "sim/parallel/memory_model.h"
#include "sim/parallel/optimizer_step.h"
#include "sim/parallel/pipeline_layout.h"
#include "sim/workload/fp8_casts.h"
#include "sim/workload/parameter_count.h"

namespace clustersim {
namespace {

namespace s = schema;

// One layer's times (FP8 casts included) and the output layer's.
struct Kernels {
  LayerTimes layer, output;
};

bool narrow_gemms(s::Precision precision) { return precision == s::FP8 || precision == s::FP4; }

// The groups of the first tensor- and context-parallel ranks: every group is alike.
class Groups {
 public:
  Groups(const Topology& topology, const s::Parallelism& p) {
    const int tp = p.tensor_parallel(), cp = p.context_parallel();
    if (tp > 1) tensor_ = std::make_unique<GroupCollectives>(topology, topology.first_gpus(tp));
    if (cp > 1) {
      std::vector<int> ring;
      for (int c = 0; c < cp; ++c) ring.push_back(c * tp);
      context_ = std::make_unique<GroupCollectives>(topology, ring);
    }
    groups_ = {tensor_.get(), context_.get(), p.context_parallel_comm()};
  }
  const LayerGroups& groups() const { return groups_; }

 private:
  std::unique_ptr<GroupCollectives> tensor_, context_;
  LayerGroups groups_;
};

Kernels time_kernels(const s::Transformer& t, const s::TrainingJob& job, const s::Parallelism& p,
                     const ComputeModel& compute, const LayerGroups& groups) {
  const LayerShape shape{job.sequence_length(),
                         p.micro_batch_size(),
                         p.tensor_parallel(),
                         p.sequence_parallel(),
                         !job.has_flash_attention() || job.flash_attention(),
                         p.context_parallel(),
                         p.context_parallel_comm(),
                         narrow_gemms(job.precision())};
  // Chunked overlap needs sequence parallelism's all-gathers and reduce-scatters.
  const int tp = p.tensor_parallel();
  const int overlap_ranks =
      p.overlap_tensor_communication() && p.sequence_parallel() && tp > 1 ? tp : 0;
  const std::vector<LayerOp> ops = layer_forward_ops(t, shape);
  Kernels k{time_layer(ops, compute, groups, p.recompute(), overlap_ranks),
            time_layer(output_forward_ops(t, shape), compute, groups, s::RECOMPUTE_NONE)};
  if (job.precision() == s::FP8) {
    const Fp8CastBytes casts = fp8_cast_bytes(ops, job.fp8_recipe(), tp);
    k.layer.forward.compute += compute.memory_bound(casts.forward);
    k.layer.backward.compute += compute.memory_bound(casts.backward);
    if (p.recompute() == s::RECOMPUTE_FULL) {
      k.layer.recompute.compute += compute.memory_bound(casts.forward);
    }
  }
  return k;
}

// Layers of a chunk of `layers` whose forward reruns before the backward.
int recomputed_layers(const s::Parallelism& p, int layers) {
  if (p.recompute() == s::RECOMPUTE_SELECTIVE) return layers;
  if (p.recompute() != s::RECOMPUTE_FULL) return 0;
  return p.has_recompute_num_layers() ? std::min(p.recompute_num_layers(), layers) : layers;
}

PipelinePlan base_plan(const s::TrainingJob& job, const s::Parallelism& p, int chunks,
                       const s::Transformer& t) {
  PipelinePlan plan;
  plan.schedule = p.schedule();
  plan.stages = p.pipeline_parallel();
  plan.chunks = chunks;
  plan.micro_batches = job.global_batch_size() / (p.micro_batch_size() * p.data_parallel());
  plan.tensor_parallel = p.tensor_parallel();
  plan.context_parallel = p.context_parallel();
  plan.data_parallel = p.data_parallel();
  plan.activation_bytes = 2.0 * job.sequence_length() * p.micro_batch_size() * t.hidden_size();
  plan.overlap_gradient_reduce = !p.has_overlap_gradient_reduce() || p.overlap_gradient_reduce();
  plan.overlap_parameter_gather = !p.has_overlap_parameter_gather() || p.overlap_parameter_gather();
  plan.overlap_pipeline_communication =
      !p.has_overlap_pipeline_communication() || p.overlap_pipeline_communication();
  plan.shard_gradients = p.distributed_optimizer() || p.zero_stage() >= 1;
  plan.rank_order = p.rank_order();
  return plan;
}

// Builds stage `r`'s work chunk by chunk and adds its time shares to `out`.
class StageBuilder {
 public:
  StageBuilder(const s::Model& model, const s::TrainingJob& job, const s::Parallelism& p,
               const ComputeModel& compute, const Kernels& kernels, const PipelineLayout& layout)
      : job_(job),
        p_(p),
        compute_(compute),
        kernels_(kernels),
        layout_(layout),
        params_(transformer_parameters(model.transformer())) {}

  void add_stage(int r, TransformerPlan* out) const {
    PipelinePlan& plan = out->plan;
    const int v = layout_.chunks(), tp = p_.tensor_parallel();
    const bool last_stage = r == plan.stages - 1;
    const double ranks = static_cast<double>(p_.data_parallel()) * p_.context_parallel();
    StageWork w;
    PassTimes step;  // over the step
    double local = 0;
    int buckets = 0;
    for (int c = 0; c < v; ++c) {
      const int n = layout_.layers[r][c];
      const bool output = last_stage && c == v - 1;
      PassTimes f = n * kernels_.layer.forward;
      PassTimes b = n * kernels_.layer.backward;
      b += recomputed_layers(p_, n) * kernels_.layer.recompute;
      out->recomputed_layers +=
          p_.recompute() == s::RECOMPUTE_FULL ? recomputed_layers(p_, n) : 0;
      if (output) {
        f += kernels_.output.forward;
        b += kernels_.output.backward;
      }
      double chunk = static_cast<double>(params_.per_layer) * n;
      if (r == 0 && c == 0) chunk += static_cast<double>(params_.embedding);
      if (output) chunk += static_cast<double>(params_.head);
      chunk /= tp;
      local += chunk;
      b.compute += compute_.memory_bound(gradient_accumulation_bytes(job_.precision()) * chunk);
      w.chunk_forward.push_back(f.total());
      w.chunk_backward.push_back(b.total());
      step += plan.micro_batches * f;
      step += plan.micro_batches * b;
      // Megatron-Core's buckets, at most one per layer: finer ones move the overlap by less than
      // a layer's backward and would only cost events.
      const int filled = static_cast<int>(
          std::ceil(chunk / megatron_bucket_parameters(static_cast<int>(ranks))));
      buckets += std::max(1, std::min(filled, n));
    }
    out->compute_s.push_back(step.compute.seconds());
    out->tensor_comm_s.push_back(step.tensor_comm.seconds());
    out->context_comm_s.push_back(step.context_comm.seconds());
    finish_stage(r, local, buckets, &w, plan);
    plan.work.push_back(std::move(w));
  }

 private:
  // Gradients, optimizer and parameter gather of a stage of `local` parameters per GPU.
  void finish_stage(int r, double local, int buckets, StageWork* w,
                    const PipelinePlan& plan) const {
    const double ranks = static_cast<double>(p_.data_parallel()) * p_.context_parallel();
    const double linear = static_cast<double>(params_.per_layer) * layout_.stage_layers(r) /
                          p_.tensor_parallel();
    const bool fp8 = job_.precision() == s::FP8, fp8_weights = fp8 && job_.fp8_parameters();
    const StateBytesPerParameter bytes =
        state_bytes_per_parameter(job_.precision(), job_.optimizer());
    w->gradient_bytes = gradient_reduce_bytes(job_.precision(), p_) * local;
    w->gradient_buckets = buckets;
    w->optimizer = compute_.memory_bound(
        optimizer_bytes_per_parameter(job_.optimizer(), job_.precision()) * local /
        (plan.shard_gradients ? ranks : 1));
    // Transformer Engine casts the GEMM weights to FP8 once per step.
    if (fp8) {
      w->optimizer += compute_.memory_bound(
          fp8_weight_cast_bytes(linear, job_.fp8_recipe(), job_.fp8_parameters()));
    }
    // ZeRO-3 gathers the weights before every pass instead of after the step.
    const bool zero3 = p_.zero_stage() >= 3;
    w->parameter_gather_bytes =
        plan.shard_gradients && !zero3 ? bytes.weights * local - (fp8_weights ? linear : 0) : 0;
    const int v = layout_.chunks();
    Picoseconds forward(0), backward(0);
    for (int c = 0; c < v; ++c) {
      forward += w->chunk_forward[c];
      backward += w->chunk_backward[c];
    }
    w->forward = Picoseconds(forward.count() / v);
    w->backward = Picoseconds(backward.count() / v);
    if (!zero3) return;
    // Weights are gathered and gradients reduce-scattered in the weights' own type (DeepSpeed's
    // communication_data_type and FSDP's reduce_dtype default to it). ZeRO-3 runs every chunk of
    // a stage alike: the stage's work spread evenly over its chunks.
    w->chunk_forward.clear();
    w->chunk_backward.clear();
    const int layers = layout_.stage_layers(r) / v;
    w->zero3 = zero3_work(layers, local / v, bytes.weights, bytes.weights);
    if (p_.recompute() == s::RECOMPUTE_FULL) {
      w->zero3.recompute = Picoseconds(layers * kernels_.layer.recompute.total().count());
    }
    if (p_.zero3_synchronous_fetch()) make_fetch_synchronous(&w->zero3);
  }

  const s::TrainingJob& job_;
  const s::Parallelism& p_;
  const ComputeModel& compute_;
  const Kernels& kernels_;
  const PipelineLayout& layout_;
  TransformerParameters params_;
};

}  // namespace

TransformerPlan transformer_plan(const s::Model& model, const s::TrainingJob& job,
                                 const s::Parallelism& p, const Topology& topology,
                                 const ComputeModel& compute) {
  const s::Transformer& t = model.transformer();
  const PipelineLayout layout = pipeline_layout(t.num_layers(), p);
  const Groups groups(topology, p);
  const Kernels kernels = time_kernels(t, job, p, compute, groups.groups());
  TransformerPlan out;
  out.plan = base_plan(job, p, layout.chunks(), t);
  const StageBuilder builder(model, job, p, compute, kernels, layout);
  for (int r = 0; r < p.pipeline_parallel(); ++r) builder.add_stage(r, &out);
  return out;
}

}  // namespace clustersim
