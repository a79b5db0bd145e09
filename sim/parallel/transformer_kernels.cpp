// A transformer's kernel times per layer kind for one training step (transformer_kernels.h).
#include "sim/parallel/transformer_kernels.h"

#include <array>

#include "sim/parallel/expert_comm_overlap.h"
#include "sim/parallel/expert_dispatch.h"
#include "sim/parallel/expert_layer_host.h"
#include "sim/parallel/shared_expert_stream.h"
#include "sim/parallel/stage_groups.h"
#include "sim/workload/compressed_sparse_attention.h"
#include "sim/workload/fp4_overrides.h"
#include "sim/workload/fp8_casts.h"
#include "sim/workload/lora.h"
#include "sim/workload/moe_layer.h"

namespace clustersim {

namespace s = schema;

namespace {

// How much shorter an expert layer's pass `pass` (before the host's wait, `host_exposed`: the
// forward's or the backward's) is in a combined step that exposes `combined_comm` of its
// all-to-alls: with the host, G + wait(G) - (G' + wait(G')), G' = G less the all-to-alls hidden.
Picoseconds combined_saving(const PassTimes& pass, Picoseconds combined_comm,
                            const ExpertLayerHost& host,
                            Picoseconds (*host_exposed)(Picoseconds, const ExpertLayerHost&)) {
  const Picoseconds alone = pass.total();
  const Picoseconds combined = alone - (pass.expert_comm - combined_comm);
  return alone + host_exposed(alone, host) - (combined + host_exposed(combined, host));
}

// The tokens a rank dispatches per micro-batch: its sequence-parallel shard of the micro-batch.
int64_t dispatched_tokens(const s::TrainingJob& job, const s::Parallelism& p) {
  const int shards = p.context_parallel() * (p.sequence_parallel() ? p.tensor_parallel() : 1);
  return int64_t{p.micro_batch_size()} * job.sequence_length() / shards;
}

// The kernels of a layer of `kind` in `job`, its GEMMs in 16 bits when `sixteen_bit`, else with
// the job's fp4_overrides.
std::vector<LayerOp> layer_kind_ops(const s::Transformer& t, const s::TrainingJob& job,
                                    const LayerShape& shape, LayerKind kind, bool sixteen_bit) {
  std::vector<LayerOp> ops = layer_forward_ops(t, shape, kind);
  if (job.has_lora()) {
    ops = with_lora(job.lora(), std::move(ops),
                    shape.sequence_parallel ? shape.tensor_parallel : 1);
  }
  if (sixteen_bit) {
    ops = with_sixteen_bit_gemms(std::move(ops));
  } else if (job.has_fp4_overrides()) {
    ops = with_fp4_overrides(job.fp4_overrides(), std::move(ops));
  }
  return ops;
}

// A layer of `kind`, its GEMMs in 16 bits when `sixteen_bit` (then no FP8 casts).
LayerTimes time_layer_kind(const s::Transformer& t, const s::TrainingJob& job,
                           const s::Parallelism& p, const ComputeModel& compute,
                           const LayerGroups& groups, const LayerShape& shape, LayerKind kind,
                           bool sixteen_bit = false) {
  const int tp = p.tensor_parallel();
  const std::vector<LayerOp> ops = layer_kind_ops(t, job, shape, kind, sixteen_bit);
  LayerTimes layer =
      time_layer(ops, compute, groups, p.recompute(), tensor_overlap(p), recomputed_parts(p));
  if (narrow_gemms(job.precision())) {
    // The casts of `of`'s narrow GEMM (and FP8 attention) inputs under the job's recipes.
    const auto casts_of = [&](const std::vector<LayerOp>& of) {
      return fp8_cast_bytes(of, gemm_recipe(job), compute.fp8_gemm_any_layout(), tp,
                            job.fp4_unfused_hadamard_cast(), job.fp8_parameters(),
                            attention_recipe(job));
    };
    const Fp8CastBytes casts = casts_of(ops);
    layer.forward.compute += compute.memory_bound(casts.forward);
    // torchao's transposed copies of saved inputs (read 1, write 1 byte an element), less those a
    // compiled backward's rerun casts write (below).
    double transposed = casts.saved_input_transposes;
    const bool full = p.recompute() == s::RECOMPUTE_FULL;
    if (full && !p.compiled_recompute()) {
      layer.recompute.compute += compute.memory_bound(casts.forward);
    } else if (full || recomputed_parts(p).expert_layer) {
      // A rerun expert layer, or what a compiled layer's backward reads, casts its GEMMs' inputs
      // again.
      std::vector<LayerOp> rerun;
      for (const LayerOp& op : ops) {
        if (full ? backward_reads(op)
                 : op.recomputable == LayerOp::Recomputable::kExpertLayer ||
                       op.recomputable == LayerOp::Recomputable::kExpertActivation) {
          rerun.push_back(op);
        }
      }
      const Fp8CastBytes rerun_casts = casts_of(rerun);
      const double fused = full ? rerun_casts.saved_input_transposes : 0;
      layer.recompute.compute += compute.memory_bound(rerun_casts.forward + fused);
      transposed -= fused;
    }
    layer.backward.compute += compute.memory_bound(casts.backward + 2 * transposed);
  }
  return layer;
}

// The host's wait in an expert layer's passes (expert_layer_host.h) and, with
// shared_experts_side_stream, what its shared experts hide beside the routed path
// (shared_expert_stream.h).
void add_expert_layer_waits(const ExpertLayerHost& host, const s::Parallelism& p,
                            const s::Gpu& gpu, LayerTimes* layer) {
  add_expert_layer_host(host, expert_layers_rerun(p), layer);
  if (p.shared_experts_side_stream()) {
    overlap_shared_experts(expert_communication_sm_share(p, gpu), layer);
  }
}

// One pass of a multi-token-prediction module: its own kernels, its layers (those of `layers` by
// kind, or timed again in 16 bits: multi_token_prediction_sixteen_bit under FP8 or FP4, whose
// all-gathers then move 16-bit elements too) and the output layer `output`.
LayerTimes time_multi_token_prediction(const s::Transformer& t, const s::TrainingJob& job,
                                       const s::Parallelism& p, const ComputeModel& compute,
                                       const LayerGroups& groups, LayerShape shape,
                                       const ExpertLayerHost& host,
                                       const std::array<LayerTimes, kLayerKinds>& layers,
                                       const LayerTimes& output) {
  const bool sixteen_bit = t.multi_token_prediction_sixteen_bit() && narrow_gemms(job.precision());
  if (sixteen_bit) shape.gemm_input_bytes = shape.gathered_gradient_bytes = 2;
  std::vector<LayerOp> ops = multi_token_prediction_ops(t, shape);
  if (sixteen_bit) ops = with_sixteen_bit_gemms(std::move(ops));
  LayerTimes pass = time_layer(ops, compute, groups, s::RECOMPUTE_NONE);
  for (LayerKind kind : multi_token_prediction_layer_kinds(t)) {
    LayerTimes layer = layers[static_cast<int>(kind)];
    if (sixteen_bit) {
      layer = time_layer_kind(t, job, p, compute, groups, shape, kind, true);
      if (routes_to_experts(kind)) {
        add_expert_layer_waits(host, p, compute.gpu(), &layer);
      }
    }
    pass.forward += layer.forward;
    pass.backward += layer.backward;
  }
  pass.forward += output.forward;
  pass.backward += output.backward;
  return pass;
}

}  // namespace

bool narrow_gemms(s::Precision precision) { return precision == s::FP8 || precision == s::FP4; }

Picoseconds expert_combine_floor(const s::Transformer& t, const s::TrainingJob& job,
                                 const s::Parallelism& p, const ComputeModel& compute,
                                 bool in_one_domain) {
  if (!p.has_expert_combine_sms() || !in_one_domain || !t.has_moe()) return {};
  const double copies = deduplicated_copies(t, job.expert_routing().consecutive_experts(),
                                            expert_layout(p).expert_parallel);
  return combine_reduction_floor(dispatched_tokens(job, p), copies,
                                 compute.gpu().expert_combine_us_per_source(),
                                 p.expert_combine_sms());
}

double expert_routing_map_bytes(const s::Transformer& t, const s::TrainingJob& job,
                                const s::Parallelism& p) {
  const int ranks = expert_layout(p).expert_parallel;
  if (!p.has_expert_combine_sms() || !t.has_moe() || ranks < 2) return 0;
  return routing_map_gather_bytes(dispatched_tokens(job, p), t.moe().num_experts(), ranks);
}

bool expert_layers_rerun(const s::Parallelism& p) {
  return p.recompute() == s::RECOMPUTE_FULL || recomputed_parts(p).expert_layer;
}

TransformerKernels time_transformer_kernels(const s::Transformer& t, const s::TrainingJob& job,
                                            const s::Parallelism& p, const ComputeModel& compute,
                                            const LayerGroups& groups) {
  const ExpertLayout experts = expert_layout(p);
  LayerShape shape{
      job.sequence_length(),
      p.micro_batch_size(),
      p.tensor_parallel(),
      p.sequence_parallel(),
      !job.has_flash_attention() || job.flash_attention(),
      p.context_parallel(),
      p.context_parallel_comm(),
      gemm_input_bytes(job),
      experts.expert_parallel,
      experts.expert_tensor_parallel,
      t.has_moe() ? expert_load(t, job.expert_routing(), experts.expert_parallel) : ExpertLoad{}};
  shape.gathered_gradient_bytes = gathered_gradient_bytes(job);
  shape.fused_expert_mlp = p.fused_expert_mlp();
  shape.expert_paged_stash = p.expert_paged_stash();
  shape.sparse_key_block = sparse_key_block_of(compute.gpu().architecture());
  shape.fp8_attention = job.fp8_attention();
  shape.fp8_activation_input_store = job.fp8_activation_input_store();
  shape.attention_library = job.attention_library();
  shape.repeated_kv = job.attention_repeats_kv();
  shape.separate_projections = job.separate_projections();
  shape.mamba_fused_norm_projection = job.mamba_fused_norm_projection();
  shape.fp32_router_probabilities = p.expert_dispatcher() == schema::EXPERT_NODE_DEDUPLICATED;
  shape.weightless_router = job.expert_routing().consecutive_experts();
  if (t.has_moe() && p.expert_dispatcher() == s::EXPERT_NODE_DEDUPLICATED) {
    shape.expert_load.dispatched =
        deduplicated_copies(t, job.expert_routing().consecutive_experts(),
                            experts.expert_parallel) /
        t.moe().experts_per_token();
  }
  TransformerKernels k;
  // Eager expert layers wait on the host (expert_layer_host.h); a full-iteration graph does not.
  const ExpertLayerHost host =
      p.cuda_graphed_expert_layers() || !t.has_moe()
          ? ExpertLayerHost{}
          : expert_layer_host(compute.gpu(),
                              p.single_launch_grouped_experts()
                                  ? 1
                                  : t.moe().num_experts() / experts.expert_parallel,
                              job.expert_routing().pad_to_capacity());
  std::array<bool, kLayerKinds> present{};  // in the layers or the multi-token-prediction ones
  for (int layer = 0; layer < t.num_layers(); ++layer) {
    present[static_cast<int>(layer_kind(t, layer))] = true;
  }
  if (t.multi_token_prediction_layers() > 0) {
    for (LayerKind kind : multi_token_prediction_layer_kinds(t)) {
      present[static_cast<int>(kind)] = true;
    }
  }
  for (int i = 0; i < kLayerKinds; ++i) {
    if (!present[i]) continue;
    const auto kind = static_cast<LayerKind>(i);
    LayerTimes& layer = k.layers[i];
    layer = time_layer_kind(t, job, p, compute, groups, shape, kind);
    if (reduces_amax(job)) k.amax[i] = amax_bytes(layer_kind_ops(t, job, shape, kind, false));
    if (!routes_to_experts(kind)) continue;
    const Picoseconds exposed =
        combined_exposed_all_to_all(layer.forward_phases, layer.backward_phases,
                                    expert_communication_sm_share(p, compute.gpu()));
    const Picoseconds forward_comm(exposed.count() / 2);
    k.combined_forward_saved =
        combined_saving(layer.forward, forward_comm, host, forward_host_exposed);
    k.combined_backward_saved =
        combined_saving(layer.backward, exposed - forward_comm, host, backward_host_exposed);
    add_expert_layer_waits(host, p, compute.gpu(), &layer);
  }
  if (first_sixteen_bit_layer(t, job) < t.num_layers()) {
    // The last layers in 16 bits (fp4_overrides.sixteen_bit_last_layers), their all-gathers too.
    LayerShape sixteen = shape;
    sixteen.gemm_input_bytes = sixteen.gathered_gradient_bytes = 2;
    std::array<bool, kLayerKinds> timed{};
    for (int layer = first_sixteen_bit_layer(t, job); layer < t.num_layers(); ++layer) {
      const LayerKind kind = layer_kind(t, layer);
      if (timed[static_cast<int>(kind)]) continue;
      timed[static_cast<int>(kind)] = true;
      LayerTimes& times = k.sixteen_bit_layers[static_cast<int>(kind)];
      times = time_layer_kind(t, job, p, compute, groups, sixteen, kind, true);
      if (routes_to_experts(kind)) add_expert_layer_waits(host, p, compute.gpu(), &times);
    }
  }
  for (int layer = 0; layer < t.num_layers(); ++layer) {
    const std::pair<LayerKind, int> key{layer_kind(t, layer), compress_ratio(t, layer)};
    if (key.second == 0 || k.compressed.count(key) > 0) continue;
    LayerShape compressed = shape;
    compressed.compress_ratio = key.second;
    LayerTimes& times = k.compressed[key];
    times = time_layer_kind(t, job, p, compute, groups, compressed, key.first);
    if (routes_to_experts(key.first)) add_expert_layer_waits(host, p, compute.gpu(), &times);
  }
  LayerShape windowed = shape;
  windowed.sliding_window = true;
  const int layers = t.num_layers();
  if (windowed_layers_in(t, 0, layers, LayerKind::kDense) > 0) {
    k.dense_windowed = time_layer_kind(t, job, p, compute, groups, windowed, LayerKind::kDense);
  }
  if (windowed_layers_in(t, 0, layers, LayerKind::kExperts) > 0) {
    k.experts_windowed = time_layer_kind(t, job, p, compute, groups, windowed, LayerKind::kExperts);
    add_expert_layer_waits(host, p, compute.gpu(), &k.experts_windowed);
  }
  std::vector<LayerOp> output =
      output_forward_ops(t, shape, job.fp8_output_layer(), cross_entropy_kernel(job));
  if (job.has_lora()) {
    output = with_lora(job.lora(), std::move(output), 1);  // frozen: no adapter
  }
  k.output = time_layer(output, compute, groups, s::RECOMPUTE_NONE);
  for (const LayerOp& op : output) {
    if (op.kind == LayerOp::Kind::kMatmul) {
      k.output_weight_gradient = weight_gradient_time(op, compute);
    }
  }
  if (job.fp8_output_layer()) {
    // The MXFP8 logit GEMMs cast their input and the logits' gradient as a layer's GEMMs do.
    const Fp8CastBytes casts = fp8_cast_bytes(output, gemm_recipe(job),
                                              compute.fp8_gemm_any_layout(), p.tensor_parallel());
    k.output.forward.compute += compute.memory_bound(casts.forward);
    k.output.backward.compute += compute.memory_bound(casts.backward);
  }
  if (job.optimizer() == s::MUON) {
    const int tp = p.tensor_parallel();
    if (moe_layer_count(t) < layers) {
      k.muon_dense =
          newton_schulz_time(layer_forward_ops(t, shape, LayerKind::kDense), t, tp, compute);
    }
    if (moe_layer_count(t) > 0) {
      k.muon_experts =
          newton_schulz_time(layer_forward_ops(t, shape, LayerKind::kExperts), t, tp, compute);
    }
  }
  if (t.multi_token_prediction_layers() > 0) {
    k.mtp =
        time_multi_token_prediction(t, job, p, compute, groups, shape, host, k.layers, k.output);
  }
  if (p.deepspeed_pipeline_engine() && groups.tensor) {
    const double boundary_bytes = 2.0 * job.sequence_length() * p.micro_batch_size() *
                                  t.hidden_size() / p.context_parallel();
    k.pipe_gather = groups.tensor->time(CollectiveOp::kAllGather, boundary_bytes);
  }
  return k;
}

}  // namespace clustersim
