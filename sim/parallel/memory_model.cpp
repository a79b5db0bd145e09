// Per-stage memory: model states sharded over tensor, pipeline and data parallelism, activations
// held by the pipeline schedule, logits and runtime memory.
//
// Layers: as pipeline_layout (pipeline_layout.h).
// Micro-batches in flight at the peak (m = global batch / (micro-batch x DP)):
//   GPipe: all m;  1F1B: min(p - r, m);  interleaved with v chunks (Megatron-LM's schedule):
//   min(2 (p - r - 1) + (v - 1) p + 1, m v) chunks of the stage's layers / v.
#include "sim/parallel/memory_model.h"

#include <algorithm>

#include "sim/parallel/activation_memory.h"
#include "sim/parallel/activation_offload.h"
#include "sim/parallel/dualpipe_schedule.h"
#include "sim/parallel/expert_parallel.h"
#include "sim/parallel/output_weight_gradient_deferral.h"
#include "sim/parallel/pipeline_layout.h"
#include "sim/parallel/pipeline_schedule.h"
#include "sim/parallel/stage_parameters.h"
#include "sim/util/units.h"
#include "sim/workload/cnn_ops.h"
#include "sim/workload/expert_load.h"
#include "sim/workload/fp8_casts.h"
#include "sim/workload/layer_ops.h"
#include "sim/workload/mamba_layer.h"
#include "sim/workload/moe_layer.h"
#include "sim/workload/parameter_count.h"

namespace clustersim {

namespace s = schema;

StateBytesPerParameter state_bytes_per_parameter(s::Precision precision, s::Optimizer optimizer) {
  const bool full_precision = precision == s::FP32 || precision == s::TF32;
  const double weights = full_precision ? 4 : 2;
  const double master = full_precision ? 0 : 4;  // fp32 copy of 16/8-bit weights
  const double moments = optimizer == s::ADAM                                   ? 8
                         : optimizer == s::SGD_MOMENTUM || optimizer == s::MUON ? 4
                                                                                : 0;
  return {weights, 4, master + moments};
}

RuntimeMemory runtime_memory(const s::Runtime& runtime, const s::Parallelism& p) {
  int communicators = 0;
  for (int degree :
       {p.tensor_parallel(), p.context_parallel(), p.pipeline_parallel(), p.data_parallel()}) {
    if (degree > 1) ++communicators;
  }
  return {
      (runtime.cuda_context_gib() + communicators * runtime.communicator_gib()) * kBytesPerGibibyte,
      runtime.allocator_overhead_fraction()};
}

int data_parallel_shard_ranks(const s::Parallelism& p) {
  const int zero = p.distributed_optimizer() ? 1 : p.zero_stage();
  return p.data_parallel_shard() > 0 && zero >= 3 ? p.data_parallel_shard() : p.data_parallel();
}

double model_state_shards(const s::Parallelism& p) {
  return static_cast<double>(data_parallel_shard_ranks(p)) * p.context_parallel();
}

double optimizer_state_shards(const s::Parallelism& p) {
  const int zero = p.distributed_optimizer() ? 1 : p.zero_stage();
  const bool hybrid_fsdp = p.shard_optimizer_across_replicas() && zero >= 3;
  return hybrid_fsdp ? static_cast<double>(p.data_parallel()) * p.context_parallel()
                     : model_state_shards(p);
}

double gradient_buffer_bytes(const s::Parallelism& p, s::Precision precision) {
  if (p.deepspeed_pipeline_engine() && precision == s::BF16) return 4 + 2;
  return p.has_gradient_reduce_in_fp32() && !p.gradient_reduce_in_fp32() ? 2 : 4;
}

double gradient_reduce_bytes(s::Precision precision, const s::Parallelism& p) {
  if (p.has_gradient_reduce_in_fp32()) return p.gradient_reduce_in_fp32() ? 4 : 2;
  return precision == s::FP16 ? 2 : 4;
}

namespace {

// Per parameter as `job` keeps its states: under sixteen_bit_states the 16-bit weights, gradients
// and optimizer moments (full precision's moments, which have no master copy, at 16 bits), and
// where the weights themselves are FP8 (fp8_parameters) the optimizer's 16-bit copy of them;
// under bf16_optimizer_moments mixed precision's with the moments at half their fp32 bytes.
StateBytesPerParameter job_state_bytes(const s::TrainingJob& job) {
  StateBytesPerParameter mixed = state_bytes_per_parameter(job.precision(), job.optimizer());
  const double moments = state_bytes_per_parameter(s::FP32, job.optimizer()).optimizer;
  if (job.bf16_optimizer_moments()) mixed.optimizer -= moments / 2;
  if (!job.sixteen_bit_states()) return mixed;
  const double master = job.precision() == s::FP8 && job.fp8_parameters() ? mixed.weights : 0;
  return {mixed.weights, mixed.weights, moments * mixed.weights / 4 + master};
}

// Model states of a stage's `local` parameters on one GPU, of which it trains `trained`: the dense
// ones sharded over data x context parallelism, the routed experts' over their expert
// data-parallel group. Only trained parameters have gradients and optimizer states; LoRA's
// adapters (lora.h) add their 16-bit weights to the frozen base's. FSDP2 (parallelism.fsdp2)
// holds the unsharded weights of two of the `layers` layers besides: the one computing and the one
// prefetched; all of them when the forward's gather is kept for the backward, and with deferred
// synchronization every gradient unsharded too (routed experts only where they are sharded:
// expert data parallel > 1).
void add_model_states(const s::TrainingJob& job, const s::Parallelism& p,
                      const LocalParameters& local, const LocalParameters& trained, int layers,
                      bool fp8_gemm_any_layout, MemoryEstimate* e) {
  const StateBytesPerParameter bytes = job_state_bytes(job);
  const int zero = p.distributed_optimizer() ? 1 : p.zero_stage();
  // Muon's layer-wise optimizer shards its states by whole weights (muon_step.h).
  const bool shard_states = zero >= 1 || job.optimizer() == s::MUON;
  // Hybrid sharding (data_parallel_shard) shards within each group only.
  const double shards = model_state_shards(p);
  // Hybrid-FSDP (shard_optimizer_across_replicas) shards the optimizer states across the groups
  // too, and holds each group's experts whole (one replica of each per group: configuration
  // checks), their optimizer states sharded over the expert data-parallel group.
  const bool hybrid_fsdp = p.shard_optimizer_across_replicas() && zero >= 3;
  const double optimizer_shards = optimizer_state_shards(p);
  const double optimizer_expert_shards = expert_layout(p).expert_data_parallel();
  const double expert_shards = hybrid_fsdp ? 1 : optimizer_expert_shards;
  const bool narrow = job.precision() == s::FP8 || job.precision() == s::FP4;
  // FP8 (FP4) weights replace the 16-bit ones of the GEMMs; else TE keeps a narrow copy of each,
  // refreshed once per step. Beside it, the transpose (the column-wise copy) where the recipe or
  // the GPU needs one (fp8_copies: block-scaled recipes always, per-tensor FP8 only where the
  // GPU's FP8 GEMMs take one layout: TE's Float8Quantizer creates no transpose where non-TN FP8
  // GEMMs are supported, NVIDIA/TransformerEngine @ ad3f651f transformer_engine/pytorch/csrc/
  // quantizer.cpp Float8Quantizer::create_tensor). The fp32 master copies stay in the optimizer
  // states either way.
  const bool narrow_weights = narrow && job.fp8_parameters();
  const double copy = narrow_weight_bytes(gemm_recipe(job));
  const double saved = narrow_weights ? bytes.weights - copy : 0;  // per linear parameter
  const double dense_linear = local.layers - local.expert;
  const double weights = local.dense * bytes.weights - saved * dense_linear;
  const double expert_weights = local.expert * bytes.weights - saved * local.expert;
  // Divided per share only where a share exists, so a dense model's figures stay one division.
  auto sharded_over = [&](double dense, double expert, bool shard, double dense_shards,
                          double expert_shard_count) {
    const double d = dense / (shard ? dense_shards : 1);
    return local.expert > 0 ? d + expert / (shard ? expert_shard_count : 1) : d;
  };
  auto sharded = [&](double dense, double expert, bool shard) {
    return sharded_over(dense, expert, shard, shards, expert_shards);
  };
  const double adapters = job.has_lora() ? trained.dense * bytes.weights : 0;
  e->weights_bytes = sharded(weights + adapters, expert_weights, zero >= 3);
  // The routed experts are gathered only where they are sharded (expert data parallel > 1).
  const double gathered_experts = expert_shards > 1 ? local.expert : 0;
  const bool fsdp2 = zero >= 3 && p.fsdp2() && shards > 1 && layers > 0;
  if (fsdp2 && p.fsdp2_keep_forward_gather()) {
    // At the end of a forward every module is still gathered, embedding and head included.
    e->per_step_state_bytes = weights + adapters + (expert_shards > 1 ? expert_weights : 0);
  } else if (fsdp2) {
    const double gathered_layers = local.layers - local.expert + gathered_experts;
    e->per_step_state_bytes = 2.0 * (gathered_layers * bytes.weights + adapters) / layers;
  }
  e->weights_bytes += e->per_step_state_bytes;
  const double gradient =
      job.sixteen_bit_states() ? bytes.gradients : gradient_buffer_bytes(p, job.precision());
  e->gradients_bytes = sharded(trained.dense * gradient, trained.expert * gradient, zero >= 2);
  // Deferred synchronization accumulates every gradient unsharded, in the reduce type, beside the
  // shards.
  if (fsdp2 && p.fsdp2_defer_gradient_sync()) {
    const double unsharded = trained.dense + (expert_shards > 1 ? trained.expert : 0);
    const double unsharded_bytes = unsharded * gradient_reduce_bytes(job.precision(), p);
    e->gradients_bytes += unsharded_bytes;
    e->per_step_state_bytes += unsharded_bytes;
  }
  e->optimizer_bytes =
      sharded_over(trained.dense * bytes.optimizer, trained.expert * bytes.optimizer, shard_states,
                   optimizer_shards, optimizer_expert_shards);
  // Under ZeRO-3 the copies are kept only if asked (keep_fp8_transpose_cache); else they live as
  // long as the layer's gathered weights, which are not counted either.
  // Transposes made at each use (fp8_weight_transpose_per_use) are freed after it: transient, one
  // layer's at a time, not counted.
  const bool cached = (zero < 3 || p.keep_fp8_transpose_cache()) &&
                      !(narrow_weights && job.fp8_weight_transpose_per_use());
  if (narrow && cached) {
    const int copies = fp8_copies(gemm_recipe(job), fp8_gemm_any_layout) - (narrow_weights ? 1 : 0);
    e->weight_cache_bytes = local.layers * copy * copies;
  }
}

// MoE layers of a stage, over its chunks.
int stage_moe_layers(const s::Transformer& t, const PipelineLayout& layout, int stage) {
  int experts = 0;
  for (int c = 0; c < layout.chunks(); ++c) {
    experts += moe_layers_in(t, layout.first_layer(stage, c), layout.layers[stage][c]);
  }
  return experts;
}

// What a layer saves for its backward under `job` and `p`, for layer_activation_bytes; `load` the
// routed experts' load per rank (a MoE model; else empty).
LayerActivationSpec activation_spec(const s::Transformer& t, const s::TrainingJob& job,
                                    const s::Parallelism& p, ExpertLoad* load) {
  LayerActivationSpec spec;
  spec.sequence_length = job.sequence_length();
  spec.micro_batch_size = p.micro_batch_size();
  spec.tensor_parallel = p.tensor_parallel();
  spec.sequence_parallel = p.sequence_parallel();
  spec.recompute = p.recompute();
  spec.recompute_latent_up = p.recompute_latent_up_projection();
  for (int module : p.recompute_modules()) {
    spec.recompute_experts |= module == s::RECOMPUTE_MOE;
    spec.recompute_expert_activation |= module == s::RECOMPUTE_MOE_ACT;
  }
  spec.flash_attention = !job.has_flash_attention() || job.flash_attention();
  spec.context_parallel = p.context_parallel();
  spec.gemm_inputs = saved_gemm_inputs(job);
  spec.activation_input_bytes = job.fp8_activation_input_store() ? 1 : 2;
  spec.expert_tensor_parallel = expert_layout(p).expert_tensor_parallel;
  *load = t.has_moe() ? expert_load(t, job.expert_routing(), expert_layout(p).expert_parallel)
                      : ExpertLoad{};
  spec.expert_rows = load->busiest_rank;
  return spec;
}

// The mean bytes a layer of `stage` (`layers` of them, `experts` MoE) saves per micro-batch: a MoE
// model's stage its layers' mean (chunks alike), a dense model's its layer. Leaves `spec` at the
// last layer kind evaluated.
double mean_layer_bytes(const s::Transformer& t, const PipelineLayout& layout, int stage,
                        int layers, int experts, LayerActivationSpec* spec) {
  if (t.has_hybrid_layer_pattern()) {
    // Each of the stage's layers of its own block; their mean.
    spec->hybrid = true;
    double sum = 0;
    for (int c = 0; c < layout.chunks(); ++c) {
      const int first = layout.first_layer(stage, c);
      for (int layer = first; layer < first + layout.layers[stage][c]; ++layer) {
        spec->block = hybrid_block(t, layer);
        sum += layer_activation_bytes(t, *spec);
      }
    }
    return sum / layers;
  }
  spec->experts = false;
  const double dense = layer_activation_bytes(t, *spec);
  if (experts == 0) return dense;
  spec->experts = true;
  const double moe = layer_activation_bytes(t, *spec);
  return (dense * (layers - experts) + moe * experts) / layers;
}

// Activations of the micro-batches in flight on the stage (memory_model.h's schedule rules).
void add_activations(const s::Model& model, const s::TrainingJob& job, const s::Parallelism& p,
                     const PipelineLayout& layout, MemoryEstimate* e) {
  const s::Transformer& t = model.transformer();
  const int pp = p.pipeline_parallel(), v = layout.chunks(), stage = e->stage;
  // Of one pipeline run (parallelism.pipeline_runs): each fills and drains the pipeline.
  const long micro_batches = micro_batches_per_replica(job, p) / std::max(1, p.pipeline_runs());
  ExpertLoad load;
  LayerActivationSpec spec = activation_spec(t, job, p, &load);
  const int experts = stage_moe_layers(t, layout, stage);
  auto mean_layer = [&] { return mean_layer_bytes(t, layout, stage, e->layers, experts, &spec); };
  const double per_layer = mean_layer();
  e->layer_activations_bytes = per_layer;
  // Fully recomputed layers keep their input only; with recompute_num_layers, the others of each
  // chunk keep everything.
  double chunk_bytes = per_layer * e->layers / v;
  if (p.recompute() == s::RECOMPUTE_FULL && p.has_recompute_num_layers()) {
    spec.recompute = s::RECOMPUTE_NONE;
    const double kept = mean_layer();
    const double chunk_layers = static_cast<double>(e->layers) / v;
    const double recomputed = std::min<double>(p.recompute_num_layers(), chunk_layers);
    chunk_bytes = per_layer * recomputed + kept * (chunk_layers - recomputed);
  }
  // Offloaded layers' tensors leave the GPU between their forward and backward, all but one
  // layer's: at the turn from forward to backward the last offloaded layer waits for its copy out
  // beside every kept layer, and the first copied back arrives during the last layer's backward
  // (activation_offload.h's windows).
  if (p.activation_offload_layers() > 0) {
    e->offloaded_activations_bytes = per_layer * p.activation_offload_layers();
    chunk_bytes -= per_layer * (p.activation_offload_layers() - 1);
  }
  // The fused grouped MLP's FC1 output of every expert layer alike, each expert layer an
  // offloaded layer of those windows.
  if (offloads_fused_expert_mlp(p) && experts > 0) {
    e->offloaded_module_bytes = expert_activation_input_bytes(t, spec);
    e->chunk_expert_layers = static_cast<double>(experts) / v;
    e->offloaded_activations_bytes = e->offloaded_module_bytes * e->chunk_expert_layers;
    chunk_bytes -= e->offloaded_module_bytes * std::max(0.0, e->chunk_expert_layers - 1);
  }
  long chunks_in_flight = 0;
  if (is_dualpipe(p.schedule())) {
    chunks_in_flight =
        dualpipe_chunks_in_flight(p.schedule(), pp, static_cast<int>(micro_batches), stage);
  } else if (p.schedule() == s::GPIPE) {
    chunks_in_flight = micro_batches;
  } else if (v > 1) {
    chunks_in_flight = std::min<long>(2L * (pp - stage - 1) + static_cast<long>(v - 1) * pp + 1,
                                      micro_batches * v);
  } else {
    chunks_in_flight = std::min<long>(pp - stage, micro_batches);
  }
  e->in_flight_micro_batches = static_cast<int>((chunks_in_flight + v - 1) / v);
  e->activations_bytes = chunk_bytes * static_cast<double>(chunks_in_flight);
  if (layout.stage_holds_output(stage) && t.multi_token_prediction_layers() > 0) {
    // The multi-token-prediction passes' activations: a last-chunk layer's each, a hybrid
    // model's its module pattern's layers (shared modules store every pass's); their GEMM inputs
    // in 16 bits where the modules run so.
    spec.recompute = p.recompute();
    if (t.multi_token_prediction_sixteen_bit()) spec.gemm_inputs = SavedGemmInputs{};
    double module = 0;
    if (t.has_hybrid_layer_pattern()) {
      for (HybridBlock block : multi_token_prediction_blocks(t)) {
        spec.block = block;
        module += layer_activation_bytes(t, spec);
      }
    } else {
      spec.experts = moe_layers_in(t, t.num_layers() - 1, 1) > 0;
      module = layer_activation_bytes(t, spec);
    }
    e->activations_bytes += module * t.multi_token_prediction_layers() * e->in_flight_micro_batches;
  }
  if (experts > 0) {
    // The all-to-all's send and receive buffers of the layer being dispatched (16-bit copies
    // of tokens, one per routed expert: those the rank sends, those the busiest receives),
    // beside the stored activations.
    const double shard = p.sequence_parallel() ? spec.tensor_parallel : 1;
    const double local_tokens = static_cast<double>(spec.sequence_length) * spec.micro_batch_size /
                                spec.context_parallel / shard;
    e->activations_bytes += 2.0 * local_tokens * t.moe().experts_per_token() * t.hidden_size() *
                            (load.sent + load.busiest_rank);
  }
}

}  // namespace

MemoryEstimate estimate_stage_memory(const s::Model& model, const s::TrainingJob& job,
                                     const s::Parallelism& p, int stage, double capacity_bytes,
                                     const RuntimeMemory& runtime) {
  const s::Transformer& t = model.transformer();
  const int tp = p.tensor_parallel();
  const PipelineLayout layout = pipeline_layout(t.num_layers(), p);
  MemoryEstimate e;
  e.stage = stage;
  e.capacity_bytes = capacity_bytes;
  e.layers = layout.stage_layers(stage);

  const TransformerParameters params = transformer_parameters(t);
  double other = 0;
  if (layout.stage_holds_embedding(stage)) other += static_cast<double>(params.embedding);
  if (layout.stage_holds_output(stage)) {
    other += static_cast<double>(params.head);
    // A tied output projection needs its own copy of the embedding on the last stage, and so do
    // multi-token-prediction modules, which embed the shifted tokens there (Megatron-Core's
    // gpt_model.py builds the embedding where pre_process or mtp_process): unless the stage holds
    // the embedding itself, as DualPipe's end stages do (both use that one: DeepSeek-V3,
    // arXiv:2412.19437 section 3.2.3, "Shared Embedding and Output Head for Multi-Token
    // Prediction" on the same PP rank).
    if ((t.tied_embeddings() || t.multi_token_prediction_layers() > 0) &&
        !layout.stage_holds_embedding(stage)) {
      other += static_cast<double>(t.vocab_size()) * t.hidden_size();
    }
  }
  LayerParameters layers;
  for (int c = 0; c < layout.chunks(); ++c) {
    layers += layer_parameters(t, layout.first_layer(stage, c), layout.layers[stage][c]);
  }
  if (layout.stage_holds_output(stage) && t.multi_token_prediction_layers() > 0) {
    const MultiTokenPredictionParameters mtp = multi_token_prediction_parameters(t, params);
    layers += mtp.layers;
    other += mtp.other;
  }
  const LocalParameters local = local_parameters(p, layers, other);
  add_model_states(job, p, local, trainable_parameters(t, job, p, local, e.layers), e.layers,
                   runtime.fp8_gemm_any_layout, &e);
  add_activations(model, job, p, layout, &e);
  // The logits of the micro-batch whose loss is being computed, split over the vocabulary, and
  // what the loss kernel keeps of them while it runs (cross_entropy_bytes): Megatron-Core's
  // vocabulary-parallel cross entropy an fp32 copy (language_module.py
  // compute_language_model_loss passes the 16-bit logits to tensor_parallel/cross_entropy.py,
  // whose forward takes vocab_parallel_logits.float()), 2 + 4 bytes an element; Transformer
  // Engine's none (it writes its gradient into the 16-bit logits), 2; PyTorch's the output
  // log_softmax saves for its backward, 2 + 2, or on an fp32 copy, 2 + 4 + 4.
  if (layout.stage_holds_output(stage)) {
    const double bytes_per_logit = cross_entropy_bytes(cross_entropy_kernel(job)).kept;
    e.logits_bytes = bytes_per_logit * job.sequence_length() / p.context_parallel() *
                     p.micro_batch_size() * t.vocab_size() / tp;
    // Every deferred micro-batch's tensors at once: the buffers fill in the first micro-batches'
    // backwards and empty only in the flush. Exact beside the peak's activations in flight when
    // fewer than the micro-batches are deferred (the buffers are full in the steady state); an
    // upper bound when all are (full only as the last backwards leave fewer in flight).
    const int micro_batches = static_cast<int>(micro_batches_per_replica(job, p));
    e.deferred_output_bytes =
        deferred_output_micro_batches(p, micro_batches) * deferred_output_bytes(t, job, p);
  }
  e.runtime_bytes = runtime.bytes(e.per_step_tensor_bytes());
  return e;
}

namespace {

// A CNN trains data-parallel only: every GPU holds the whole model and one micro-batch's
// activations.
MemoryEstimate estimate_cnn_memory(const s::Model& model, const s::TrainingJob& job,
                                   const s::Parallelism& p, double capacity_bytes,
                                   const RuntimeMemory& runtime) {
  MemoryEstimate e;
  e.capacity_bytes = capacity_bytes;
  e.in_flight_micro_batches = 1;
  const double params = static_cast<double>(parameter_count(model));
  const StateBytesPerParameter bytes = job_state_bytes(job);
  const int zero = p.distributed_optimizer() ? 1 : p.zero_stage();
  const int dp = p.data_parallel();
  e.weights_bytes = params * bytes.weights / (zero >= 3 ? dp : 1);
  e.gradients_bytes = params * bytes.gradients / (zero >= 2 ? dp : 1);
  e.optimizer_bytes = params * bytes.optimizer / (zero >= 1 ? dp : 1);
  e.activations_bytes = cnn_activation_bytes(model.cnn(), p.micro_batch_size());
  e.runtime_bytes = runtime.bytes(e.per_step_tensor_bytes());
  return e;
}

}  // namespace

MemoryEstimate estimate_memory(const s::Model& model, const s::TrainingJob& job,
                               const s::Parallelism& p, double capacity_bytes,
                               const RuntimeMemory& runtime) {
  if (model.has_cnn()) return estimate_cnn_memory(model, job, p, capacity_bytes, runtime);
  MemoryEstimate fullest;
  for (int stage = 0; stage < p.pipeline_parallel(); ++stage) {
    MemoryEstimate e = estimate_stage_memory(model, job, p, stage, capacity_bytes, runtime);
    if (stage == 0 || e.total_bytes() > fullest.total_bytes()) fullest = e;
  }
  return fullest;
}

}  // namespace clustersim
