// Stage work of a transformer from its layers' kernel times, chunk by chunk.
#include "sim/parallel/transformer_stages.h"

#include <cmath>
#include <memory>
#include <utility>

#include "sim/parallel/activation_offload.h"
#include "sim/parallel/amax_reduction.h"
#include "sim/parallel/dualpipe_schedule.h"
#include "sim/parallel/layer_times.h"
#include "sim/parallel/memory_model.h"
#include "sim/parallel/muon_step.h"
#include "sim/parallel/optimizer_step.h"
#include "sim/parallel/output_weight_gradient_deferral.h"
#include "sim/parallel/pipeline_layout.h"
#include "sim/parallel/pipeline_schedule.h"
#include "sim/parallel/stage_groups.h"
#include "sim/parallel/stage_parameters.h"
#include "sim/parallel/transformer_kernels.h"
#include "sim/workload/compressed_sparse_attention.h"
#include "sim/workload/fp4_overrides.h"
#include "sim/workload/fp8_casts.h"
#include "sim/workload/moe_layer.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/transformer_dimensions.h"

namespace clustersim {
namespace {

namespace s = schema;

// Layers of a chunk of `layers` whose forward reruns before the backward.
int recomputed_layers(const s::Parallelism& p, int layers) {
  if (p.recompute() == s::RECOMPUTE_SELECTIVE || p.recompute_latent_up_projection() ||
      p.recompute_modules_size() > 0) {
    return layers;
  }
  if (p.recompute() != s::RECOMPUTE_FULL) return 0;
  return p.has_recompute_num_layers() ? std::min(p.recompute_num_layers(), layers) : layers;
}

PipelinePlan base_plan(const s::TrainingJob& job, const s::Parallelism& p, int chunks,
                       const s::Transformer& t) {
  PipelinePlan plan;
  plan.schedule = p.schedule();
  plan.stages = p.pipeline_parallel();
  plan.chunks = chunks;
  plan.micro_batches = static_cast<int>(micro_batches_per_replica(job, p));
  plan.runs = std::max(1, p.pipeline_runs());
  plan.tensor_parallel = p.tensor_parallel();
  plan.context_parallel = p.context_parallel();
  plan.data_parallel = p.data_parallel();
  if (p.data_parallel_shard() > 0 && p.zero_stage() >= 3) {
    plan.data_parallel_shard = p.data_parallel_shard();
  }
  plan.activation_bytes = 2.0 * job.sequence_length() * p.micro_batch_size() * t.hidden_size();
  plan.overlap_gradient_reduce = !p.has_overlap_gradient_reduce() || p.overlap_gradient_reduce();
  plan.overlap_parameter_gather = !p.has_overlap_parameter_gather() || p.overlap_parameter_gather();
  plan.overlap_pipeline_communication =
      !p.has_overlap_pipeline_communication() || p.overlap_pipeline_communication();
  plan.shard_gradients = p.distributed_optimizer() || p.zero_stage() >= 1;
  plan.deepspeed_exchange = p.deepspeed_pipeline_engine();
  // DeepSpeed's BF16 optimizer all-reduces its fp32 gradients whole, then steps its own shard.
  plan.all_reduce_gradients = p.deepspeed_pipeline_engine() && job.precision() == s::BF16;
  // The first and the last stage each hold the tied word embedding (its 1/TP vocabulary share)
  // and all-reduce its gradient in the type of the data-parallel reduction (DeepSpeed's BF16
  // optimizer: its fp32 _hp_grad, pipe/engine.py _exec_reduce_tied_grads, v0.6.4).
  if (t.tied_embeddings() && p.pipeline_parallel() > 1 && p.zero_stage() < 3) {
    plan.tied_embedding_gradient_bytes = gradient_reduce_bytes(job.precision(), p) *
                                         static_cast<double>(t.vocab_size()) * t.hidden_size() /
                                         p.tensor_parallel();
  }
  plan.rank_order = p.rank_order();
  plan.experts = expert_layout(p);
  plan.overlap_expert_communication = p.overlap_expert_communication();
  return plan;
}

// How many forwards and backwards of each model chunk stage `r` runs in combined steps.
struct CombinedTasks {
  std::vector<int64_t> forwards, backwards;
};

CombinedTasks combined_tasks(const PipelinePlan& plan, int r) {
  CombinedTasks n{std::vector<int64_t>(plan.chunks, 0), std::vector<int64_t>(plan.chunks, 0)};
  if (!plan.overlap_expert_communication) return n;
  for (const PipelineTask& t :
       stage_schedule(plan.schedule, plan.stages, plan.chunks, plan.micro_batches, r, true,
                      plan.runs)) {
    if (t.combined) ++(t.forward ? n.forwards : n.backwards)[t.chunk];
  }
  return n;
}

// Builds stage `r`'s work chunk by chunk and adds its time shares to `out`.
class StageBuilder {
 public:
  // `amax_group`: the stage's amax reduction group under delayed scaling, else null.
  StageBuilder(const s::Model& model, const s::TrainingJob& job, const s::Parallelism& p,
               const ComputeModel& compute, const TransformerKernels& kernels,
               const PipelineLayout& layout, GroupCollectives* amax_group)
      : model_(model),
        t_(model.transformer()),
        job_(job),
        p_(p),
        compute_(compute),
        kernels_(kernels),
        layout_(layout),
        amax_group_(amax_group),
        params_(transformer_parameters(model.transformer())),
        first_sixteen_bit_layer_(first_sixteen_bit_layer(model.transformer(), job)) {}

  void add_stage(int r, TransformerPlan* out) const {
    PipelinePlan& plan = out->plan;
    const int v = layout_.chunks();
    const bool last_stage = r == plan.stages - 1;
    const double ranks = static_cast<double>(p_.data_parallel()) * p_.context_parallel();
    StageWork w;
    PassTimes step;  // over the step
    Picoseconds amax_step(0);  // the amax all-reduces over the step
    LocalParameters local;
    int buckets = 0;
    LayerParameters stage_layers;
    NewtonSchulzTime muon;
    const CombinedTasks combined = combined_tasks(plan, r);
    for (int c = 0; c < v; ++c) {
      const int n = layout_.layers[r][c];
      const int first = layout_.first_layer(r, c);
      const int experts = moe_layers_in(t_, first, n);
      const bool output = layout_.holds_output(r, c);
      PassTimes f, b;
      Picoseconds weight_gradient(0);
      AmaxBytes amaxes;
      for (int layer = first; layer < first + n; ++layer) {
        f += kernels_of(layer).forward;
        b += kernels_of(layer).backward;
        weight_gradient += kernels_of(layer).weight_gradient;
        amaxes += kernels_.amax[static_cast<int>(layer_kind(t_, layer))];
        const NewtonSchulzTime& orthogonalize =
            routes_to_experts(layer_kind(t_, layer)) ? kernels_.muon_experts : kernels_.muon_dense;
        muon.dense += orthogonalize.dense;
        muon.expert += orthogonalize.expert;
      }
      b += recompute_time(first, n);
      out->recomputed_layers += p_.recompute() == s::RECOMPUTE_FULL ? recomputed_layers(p_, n) : 0;
      const int mtp = output ? t_.multi_token_prediction_layers() : 0;
      // DeepSpeed gathers its partitioned stage-boundary tensors (engine.py): the received input
      // before a forward; the freed output and the received gradient before a backward.
      if (r > 0 || c > 0) f.tensor_comm += kernels_.pipe_gather;
      if (!output) b.tensor_comm += kernels_.pipe_gather + kernels_.pipe_gather;
      if (output) {
        f += kernels_.output.forward;
        b += kernels_.output.backward;
        weight_gradient += kernels_.output_weight_gradient;
        if (mtp > 0) {
          f += mtp * kernels_.mtp.forward;
          b += mtp * kernels_.mtp.backward;
          weight_gradient += Picoseconds(mtp * kernels_.mtp.weight_gradient.count());
        }
      }
      double other = 0;
      if (layout_.holds_embedding(r, c)) other += static_cast<double>(params_.embedding);
      if (output) other += static_cast<double>(params_.head);
      LayerParameters chunk_layers = layer_parameters(t_, first, n);
      stage_layers += chunk_layers;
      if (mtp > 0) {
        const MultiTokenPredictionParameters modules =
            multi_token_prediction_parameters(t_, params_);
        chunk_layers += modules.layers;
        other += modules.other;
      }
      const LocalParameters chunk = local_parameters(p_, chunk_layers, other);
      local.dense += chunk.dense;
      local.expert += chunk.expert;
      const double trained = trainable_parameters(t_, job_, p_, chunk, n).total();
      const double accumulated =
          gradient_accumulation_bytes(job_.precision(), p_.deepspeed_pipeline_engine());
      b.compute += compute_.memory_bound(accumulated * trained);
      // Each pass ends with its blocking amax all-reduce, before its output leaves.
      const Picoseconds amax_f = amax_reduction(amaxes.forward);
      const Picoseconds amax_b = amax_reduction(amaxes.backward);
      w.chunk_forward.push_back(f.total() + amax_f);
      w.chunk_backward.push_back(b.total() + amax_b);
      if (is_dualpipe(plan.schedule)) w.chunk_weight_gradient.push_back(weight_gradient);
      if (experts > 0) add_all_to_all_spans(c, first, n, output, &w);
      // DualPipe's chunks are its two directions, half of the micro-batches each.
      const int runs_through =
          plan.schedule == s::DUALPIPE ? plan.micro_batches / 2 : plan.micro_batches;
      step += runs_through * f;
      step += runs_through * b;
      amax_step += Picoseconds(runs_through * (amax_f + amax_b).count());
      if (plan.overlap_expert_communication) {
        // What a combined step hides of each pass's all-to-alls.
        const int64_t hidden_f = experts * kernels_.combined_forward_saved.count();
        const int64_t hidden_b = experts * kernels_.combined_backward_saved.count();
        w.combined_forward.push_back(f.total() + amax_f - Picoseconds(hidden_f));
        w.combined_backward.push_back(b.total() + amax_b - Picoseconds(hidden_b));
        step.expert_comm = step.expert_comm - Picoseconds(combined.forwards[c] * hidden_f +
                                                          combined.backwards[c] * hidden_b);
      }
      // Megatron-Core's buckets, at most one per layer: finer ones move the overlap by less than
      // a layer's backward and would only cost events.
      const int filled = static_cast<int>(
          std::ceil(trained / megatron_bucket_parameters(static_cast<int>(ranks))));
      buckets += std::max(1, std::min(filled, n));
    }
    local.layers = local_parameters(p_, stage_layers, 0).layers;
    out->compute_s.push_back(step.compute.seconds());
    out->tensor_comm_s.push_back(step.tensor_comm.seconds());
    out->context_comm_s.push_back(step.context_comm.seconds());
    out->expert_comm_s.push_back(step.expert_comm.seconds());
    out->expert_compute_s.push_back(step.expert_compute.seconds());
    out->amax_comm_s.push_back(amax_step.seconds());
    finish_stage(r, local, trainable_parameters(t_, job_, p_, local, layout_.stage_layers(r)),
                 buckets, muon, &w, plan);
    w.gpu_sms = compute_.gpu().streaming_multiprocessors();
    if (last_stage) {
      w.deferred_output_micro_batches = deferred_output_micro_batches(p_, plan.micro_batches);
      w.output_weight_gradient = kernels_.output_weight_gradient;
    }
    plan.work.push_back(std::move(w));
  }

 private:
  // The blocking all-reduce of `bytes` of amaxes over the amax group; 0 without one.
  Picoseconds amax_reduction(double bytes) const {
    if (amax_group_ == nullptr || bytes <= 0) return Picoseconds(0);
    return amax_group_->time(CollectiveOp::kAllReduce, bytes);
  }

  // The kernels of 0-based layer `layer`: of its kind, in 16 bits (fp4_overrides'
  // sixteen_bit_last_layers), within the window or not, of its compress ratio.
  const LayerTimes& kernels_of(int layer) const {
    const LayerKind kind = layer_kind(t_, layer);
    if (layer >= first_sixteen_bit_layer_) return kernels_.sixteen_bit_layers[static_cast<int>(kind)];
    const int ratio = compress_ratio(t_, layer);
    if (ratio > 0) return kernels_.compressed.at({kind, ratio});
    if (!attends_in_window(t_, layer)) return kernels_.layers[static_cast<int>(kind)];
    return kind == LayerKind::kExperts ? kernels_.experts_windowed : kernels_.dense_windowed;
  }

  // The forwards rerun before the backward of the chunk of `n` layers from `first`: its first
  // layers' (recomputed_layers), each of its own kind.
  PassTimes recompute_time(int first, int n) const {
    PassTimes rerun;
    const int recomputed = recomputed_layers(p_, n);
    for (int layer = first; layer < first + recomputed; ++layer)
      rerun += kernels_of(layer).recompute;
    return rerun;
  }

  // Where the expert all-to-alls of model chunk `c` (`n` layers from `first`) run in its forward
  // (layers in order, then the output layer) and backward (the output layer's, the recomputed
  // forwards, then the layers in reverse), for traces.
  void add_all_to_all_spans(int c, int first, int n, bool output, StageWork* w) const {
    std::vector<TaskSpan> forward, backward;
    const auto add = [](const std::vector<TaskSpan>& spans, Picoseconds at,
                        std::vector<TaskSpan>* out) {
      for (const TaskSpan& s : spans) out->push_back({at + s.start, s.length, s.name, s.bytes});
    };
    Picoseconds at;
    for (int layer = first; layer < first + n; ++layer) {
      add(kernels_of(layer).forward_all_to_alls, at, &forward);
      at += kernels_of(layer).forward.total();
    }
    at = Picoseconds();
    if (output) {
      at = kernels_.output.backward.total() +
           Picoseconds(t_.multi_token_prediction_layers() * kernels_.mtp.backward.total().count());
    }
    const bool rerun = expert_layers_rerun(p_);
    for (int layer = first; layer < first + recomputed_layers(p_, n); ++layer) {
      if (rerun) add(kernels_of(layer).forward_all_to_alls, at, &backward);
      at += kernels_of(layer).recompute.total();
    }
    for (int layer = first + n - 1; layer >= first; --layer) {
      add(kernels_of(layer).backward_all_to_alls, at, &backward);
      at += kernels_of(layer).backward.total();
    }
    const int v = layout_.chunks();
    w->chunk_forward_all_to_alls.resize(v);
    w->chunk_backward_all_to_alls.resize(v);
    w->chunk_forward_all_to_alls[c] = std::move(forward);
    w->chunk_backward_all_to_alls[c] = std::move(backward);
  }

  // Stage r's expert layers and the all-to-alls of one (they time theirs alike), for ZeRO-3's
  // layer-by-layer tasks (Zero3ExpertAllToAlls).
  void add_zero3_all_to_alls(int r, Zero3ExpertAllToAlls* out) const {
    for (int c = 0; c < layout_.chunks(); ++c) {
      const int first = layout_.first_layer(r, c);
      for (int layer = first; layer < first + layout_.layers[r][c]; ++layer) {
        const LayerTimes& k = kernels_of(layer);
        if (k.forward_all_to_alls.empty() && k.backward_all_to_alls.empty()) continue;
        if (out->layers++ > 0) continue;
        out->forward = k.forward.total();
        out->recompute = k.recompute.total();
        out->backward = k.backward.total();
        out->forward_spans = k.forward_all_to_alls;
        if (expert_layers_rerun(p_)) out->recompute_spans = k.forward_all_to_alls;
        out->backward_spans = k.backward_all_to_alls;
      }
    }
  }

  // Gradients, optimizer and parameter gather of a stage of `local` parameters per GPU, of which
  // it trains `trained`, and under Muon the Newton-Schulz work of its layers `muon`.
  void finish_stage(int r, const LocalParameters& local, const LocalParameters& trained,
                    int buckets, const NewtonSchulzTime& muon, StageWork* w,
                    const PipelinePlan& plan) const {
    const double linear = local.layers;
    const bool narrow = narrow_gemms(job_.precision());
    const s::Fp8Recipe recipe = gemm_recipe(job_);
    const bool narrow_gather = narrow && fp8_weights_gathered_in_fp8(recipe, job_.fp8_parameters());
    const StateBytesPerParameter bytes =
        state_bytes_per_parameter(job_.precision(), job_.optimizer());
    // Bytes per linear parameter a narrow gather saves on the 16-bit one.
    const double saved = narrow_gather ? bytes.weights - narrow_weight_bytes(recipe) : 0;
    const double reduce = gradient_reduce_bytes(job_.precision(), p_);
    w->gradient_bytes = reduce * trained.dense;
    w->expert_gradient_bytes = reduce * trained.expert;
    w->gradient_buckets = buckets;
    if (p_.has_optimizer_bucket_mib()) {
      const double bucket_bytes = p_.optimizer_bucket_mib() * 1024 * 1024;
      w->optimizer_buckets =
          std::max(1, static_cast<int>(std::ceil(w->gradient_bytes / bucket_bytes)));
      w->gradient_buckets = w->optimizer_buckets;
    }
    // A sharded optimizer steps the rank's dense shard, the one the memory model holds
    // (optimizer_state_shards: within its group under hybrid sharding, whose groups all repeat
    // the update), and the experts' of the expert DP; Muon's layer-wise one too, after its share
    // of the Newton-Schulz iterations.
    const double ranks = optimizer_state_shards(p_);
    const double per_parameter = optimizer_bytes_per_parameter(job_.optimizer(), job_.precision());
    const double expert_ranks = plan.experts.expert_data_parallel();
    const bool muon_step = job_.optimizer() == s::MUON;
    w->optimizer = compute_.memory_bound(plan.shard_gradients || muon_step
                                             ? per_parameter * trained.dense / ranks +
                                                   per_parameter * trained.expert / expert_ranks
                                             : per_parameter * trained.total());
    // The passes over the whole gradient buffer (zeroing, NaN check, scaling): on the compute
    // stream, at the step's start and before each bucket's reduction; charged with the step.
    const GradientBufferPassBytes passes =
        gradient_buffer_pass_bytes(job_.precision(), p_, plan.experts.expert_data_parallel());
    w->optimizer += compute_.memory_bound(passes.dense * trained.dense +
                                          passes.expert * trained.expert);
    // Transformer Engine casts the GEMM weights to FP8 (FP4) once per step. MXFP8 re-quantizes them
    // after their 16-bit gather, on the compute stream before the next forward: counted here,
    // before the gather, it ends the step at the same time (the gather starts when the
    // optimizer ends and the stage's end waits for both).
    if (narrow) {
      // torchao's scale precompute reads the rank's FSDP shard of the weights, within its group
      // under hybrid sharding (fp8_parameters needs fsdp2).
      const double cast =
          recipe == s::TORCHAO_TENSORWISE ? linear / model_state_shards(p_) : linear;
      // Transposes made at each use: one per micro-batch (its backward), summed here.
      const double uses = job_.fp8_weight_transpose_per_use() ? plan.micro_batches : 1;
      w->optimizer += compute_.memory_bound(
          uses * fp8_weight_cast_bytes(cast, recipe, compute_.fp8_gemm_any_layout(),
                                       job_.fp8_parameters(), job_.has_lora()));
    }
    if (muon_step) {
      w->optimizer += Picoseconds(static_cast<int64_t>(muon.dense.count() / ranks)) +
                      Picoseconds(static_cast<int64_t>(muon.expert.count() / expert_ranks));
    }
    // ZeRO-3 gathers the weights before every pass instead of after the step.
    const bool zero3 = p_.zero_stage() >= 3;
    if ((plan.shard_gradients || muon_step) && !zero3) {
      w->parameter_gather_bytes =
          bytes.weights * trained.dense - saved * (trained.layers - trained.expert);
      w->expert_parameter_gather_bytes = bytes.weights * trained.expert - saved * trained.expert;
    }
    const int v = layout_.chunks();
    Picoseconds forward(0), backward(0);
    for (int c = 0; c < v; ++c) {
      forward += w->chunk_forward[c];
      backward += w->chunk_backward[c];
    }
    w->forward = Picoseconds(forward.count() / v);
    w->backward = Picoseconds(backward.count() / v);
    if (!zero3) return;
    // Weights are gathered in their own type and gradients reduce-scattered in it too (DeepSpeed's
    // communication_data_type and FSDP's reduce_dtype default to it) unless
    // gradient_reduce_in_fp32 says which. LoRA gathers the frozen base with the adapters and
    // reduces the adapters' gradients only. ZeRO-3 runs every chunk of a stage alike: the stage's
    // work spread evenly over its chunks.
    w->chunk_forward.clear();
    w->chunk_backward.clear();
    w->chunk_forward_all_to_alls.clear();
    w->chunk_backward_all_to_alls.clear();
    const int layers = layout_.stage_layers(r) / v;
    const double gathered = local.total() + (job_.has_lora() ? trained.total() : 0);
    const double zero3_reduce = p_.has_gradient_reduce_in_fp32() ? reduce : bytes.weights;
    // FSDP2 of expert layers (configuration_checks.cpp allows no other): the routed experts apart,
    // over their expert data-parallel group, and not at all where each GPU holds its experts
    // whole (AutoModel's MoE parallelizer leaves them out of every FSDP module then).
    w->zero3 = zero3_work(layers, (gathered - local.expert) / v, bytes.weights,
                          (trained.total() - trained.expert) / v, zero3_reduce);
    const bool hybrid_fsdp = p_.shard_optimizer_across_replicas();
    if (local.expert > 0 && plan.experts.expert_data_parallel() > 1) {
      const double units = static_cast<double>(w->zero3.units) * v;
      const double expert_reduce =
          p_.fsdp2_expert_reduce_in_weight_type() ? bytes.weights : zero3_reduce;
      // Hybrid-FSDP holds a group's experts whole: nothing gathered, their gradients
      // reduce-scattered over the expert data-parallel group in the step's last backward.
      if (!hybrid_fsdp) w->zero3.unit_expert_gather_bytes = bytes.weights * local.expert / units;
      w->zero3.unit_expert_gradient_bytes = expert_reduce * trained.expert / units;
    }
    add_zero3_all_to_alls(r, &w->zero3.expert_all_to_alls);
    if (p_.fsdp2()) make_fsdp2(&w->zero3);
    w->zero3.keep_forward_gather = p_.fsdp2_keep_forward_gather();
    w->zero3.defer_gradient_sync = p_.fsdp2_defer_gradient_sync();
    w->zero3.reduce_after_backward = w->zero3.defer_gradient_sync && plan.stages > 1;
    if (p_.recompute() == s::RECOMPUTE_FULL) {
      Picoseconds rerun(0);
      for (int c = 0; c < v; ++c) {
        rerun += recompute_time(layout_.first_layer(r, c), layout_.layers[r][c]).total();
      }
      w->zero3.recompute = Picoseconds(rerun.count() / v);
    }
    if (p_.data_parallel_shard() > 0) {
      w->zero3.replicas = p_.data_parallel() / p_.data_parallel_shard();
      w->zero3.shard_ranks = p_.data_parallel_shard() * p_.context_parallel();
      w->zero3.optimizer_across_replicas = hybrid_fsdp;
    }
    // Hybrid-FSDP's updated shards all-gathered across the groups after the step: each group's
    // shard of the dense weights (the collective's whole buffer over the ranks holding it) and
    // the experts whole over their expert data-parallel group, in the weights' type.
    if (hybrid_fsdp) {
      w->parameter_gather_bytes = bytes.weights * (gathered - local.expert) / w->zero3.shard_ranks;
      w->expert_parameter_gather_bytes = bytes.weights * local.expert;
    }
    if (p_.zero3_synchronous_fetch()) {
      // DeepSpeed fetches each linear layer's weights as one module (the norms' and biases' few
      // parameters stay gathered: stage3_param_persistence_threshold).
      std::vector<double> shares;
      double total = 0;
      for (const auto& [k, n] : linear_weight_shapes(t_)) total += k * n;
      for (const auto& [k, n] : linear_weight_shapes(t_)) shares.push_back(k * n / total);
      make_fetch_synchronous(&w->zero3, std::move(shares));
    }
    if (p_.activation_offload_layers() > 0) {
      w->zero3.offload = {p_.activation_offload_layers(),
                          estimate_stage_memory(model_, job_, p_, r, 0, RuntimeMemory{})
                              .layer_activations_bytes,
                          host_link_bytes_per_s(compute_.gpu())};
    }
    // The fused grouped MLP's FC1 output of each expert layer of the chunk, on the same copy
    // streams (each expert layer one offloaded layer of their windows).
    if (offloads_fused_expert_mlp(p_)) {
      const MemoryEstimate m = estimate_stage_memory(model_, job_, p_, r, 0, RuntimeMemory{});
      const int layers = static_cast<int>(std::lround(m.chunk_expert_layers));
      if (layers > 0) {
        w->zero3.offload = {layers, m.offloaded_module_bytes,
                            host_link_bytes_per_s(compute_.gpu())};
      }
    }
  }

  const s::Model& model_;
  const s::Transformer& t_;
  const s::TrainingJob& job_;
  const s::Parallelism& p_;
  const ComputeModel& compute_;
  const TransformerKernels& kernels_;
  const PipelineLayout& layout_;
  GroupCollectives* amax_group_;
  TransformerParameters params_;
  int first_sixteen_bit_layer_;  // fp4_overrides' sixteen_bit_last_layers from here
};

}  // namespace

TransformerPlan transformer_plan(const s::Model& model, const s::TrainingJob& job,
                                 const s::Parallelism& p, const Topology& topology,
                                 const ComputeModel& compute) {
  const s::Transformer& t = model.transformer();
  const PipelineLayout layout = pipeline_layout(t.num_layers(), p);
  TransformerPlan out;
  out.plan = base_plan(job, p, layout.chunks(), t);
  const StageGroups groups(topology, p, out.plan, t, job.expert_routing().consecutive_experts());
  LayerGroups layer_groups = groups.groups();
  layer_groups.expert_combine_floor =
      expert_combine_floor(t, job, p, compute, groups.expert_in_one_domain());
  layer_groups.expert_routing_map_bytes = expert_routing_map_bytes(t, job, p);
  out.plan.expert_rail_shares = groups.rail_shares();
  out.tensor_crossing_link = groups.tensor_crossing_link();
  const TransformerKernels kernels = time_transformer_kernels(t, job, p, compute, layer_groups);
  std::unique_ptr<GroupCollectives> amax_group;
  if (reduces_amax(job)) {
    std::vector<int> amax_gpus = amax_reduction_group(out.plan);
    if (amax_gpus.size() > 1) {
      amax_group = std::make_unique<GroupCollectives>(topology, std::move(amax_gpus));
    }
  }
  const StageBuilder builder(model, job, p, compute, kernels, layout, amax_group.get());
  for (int r = 0; r < p.pipeline_parallel(); ++r) builder.add_stage(r, &out);
  return out;
}

}  // namespace clustersim
