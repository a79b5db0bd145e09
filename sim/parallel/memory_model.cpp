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
#include "sim/parallel/pipeline_layout.h"
#include "sim/util/units.h"
#include "sim/workload/cnn_ops.h"
#include "sim/workload/parameter_count.h"

namespace clustersim {

namespace s = schema;

StateBytesPerParameter state_bytes_per_parameter(s::Precision precision, s::Optimizer optimizer) {
  const bool full_precision = precision == s::FP32 || precision == s::TF32;
  const double weights = full_precision ? 4 : 2;
  const double master = full_precision ? 0 : 4;  // fp32 copy of 16/8-bit weights
  const double moments = optimizer == s::ADAM ? 8 : optimizer == s::SGD_MOMENTUM ? 4 : 0;
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

double gradient_buffer_bytes(const s::Parallelism& p) {
  return p.has_gradient_reduce_in_fp32() && !p.gradient_reduce_in_fp32() ? 2 : 4;
}

double gradient_reduce_bytes(s::Precision precision, const s::Parallelism& p) {
  if (p.has_gradient_reduce_in_fp32()) return p.gradient_reduce_in_fp32() ? 4 : 2;
  return precision == s::FP16 ? 2 : 4;
}

namespace {

// Model states of `stage_params` parameters on one GPU (already split over tensor parallelism),
// `linear_params` of them weights of FP8 GEMMs.
void add_model_states(const s::TrainingJob& job, const s::Parallelism& p, double stage_params,
                      double linear_params, MemoryEstimate* e) {
  const StateBytesPerParameter bytes = state_bytes_per_parameter(job.precision(), job.optimizer());
  const int zero = p.distributed_optimizer() ? 1 : p.zero_stage();
  const double shards = static_cast<double>(p.data_parallel()) * p.context_parallel();
  const bool fp8 = job.precision() == s::FP8;
  // FP8 weights replace the 16-bit ones of the GEMMs; else TE keeps an FP8 copy and its
  // transpose of each (1 + 1 bytes), refreshed once per step.
  const bool fp8_weights = fp8 && job.fp8_parameters();
  const double weights = stage_params * bytes.weights - (fp8_weights ? linear_params : 0);
  e->weights_bytes = weights / (zero >= 3 ? shards : 1);
  e->gradients_bytes =
      stage_params * gradient_buffer_bytes(p) / (zero >= 2 ? shards : 1);
  e->optimizer_bytes = stage_params * bytes.optimizer / (zero >= 1 ? shards : 1);
  if (fp8) e->weight_cache_bytes = linear_params * (fp8_weights ? 1 : 2);
}

// Activations of the micro-batches in flight on the stage (memory_model.h's schedule rules).
void add_activations(const s::Model& model, const s::TrainingJob& job, const s::Parallelism& p,
                     const PipelineLayout& layout, MemoryEstimate* e) {
  const s::Transformer& t = model.transformer();
  const int pp = p.pipeline_parallel(), v = layout.chunks(), stage = e->stage;
  const long micro_batches = job.global_batch_size() /
                             (static_cast<long>(p.micro_batch_size()) * p.data_parallel());
  LayerActivationSpec spec;
  spec.sequence_length = job.sequence_length();
  spec.micro_batch_size = p.micro_batch_size();
  spec.tensor_parallel = p.tensor_parallel();
  spec.sequence_parallel = p.sequence_parallel();
  spec.recompute = p.recompute();
  spec.flash_attention = !job.has_flash_attention() || job.flash_attention();
  spec.context_parallel = p.context_parallel();
  spec.narrow_gemm_inputs = job.precision() == s::FP8 || job.precision() == s::FP4;
  const double per_layer = layer_activation_bytes(t, spec);
  // Fully recomputed layers keep their input only; with recompute_num_layers, the others of each
  // chunk keep everything.
  double chunk_bytes = per_layer * e->layers / v;
  if (p.recompute() == s::RECOMPUTE_FULL && p.has_recompute_num_layers()) {
    spec.recompute = s::RECOMPUTE_NONE;
    const double kept = layer_activation_bytes(t, spec);
    const double chunk_layers = static_cast<double>(e->layers) / v;
    const double recomputed = std::min<double>(p.recompute_num_layers(), chunk_layers);
    chunk_bytes = per_layer * recomputed + kept * (chunk_layers - recomputed);
  }
  long chunks_in_flight = 0;
  if (p.schedule() == s::GPIPE) {
    chunks_in_flight = micro_batches;
  } else if (v > 1) {
    chunks_in_flight = std::min<long>(2L * (pp - stage - 1) + static_cast<long>(v - 1) * pp + 1,
                                      micro_batches * v);
  } else {
    chunks_in_flight = std::min<long>(pp - stage, micro_batches);
  }
  e->in_flight_micro_batches = static_cast<int>((chunks_in_flight + v - 1) / v);
  e->activations_bytes = chunk_bytes * static_cast<double>(chunks_in_flight);
}

}  // namespace

MemoryEstimate estimate_stage_memory(const s::Model& model, const s::TrainingJob& job,
                                     const s::Parallelism& p, int stage, double capacity_bytes,
                                     const RuntimeMemory& runtime) {
  const s::Transformer& t = model.transformer();
  const int pp = p.pipeline_parallel(), tp = p.tensor_parallel();
  const PipelineLayout layout = pipeline_layout(t.num_layers(), p);
  MemoryEstimate e;
  e.stage = stage;
  e.capacity_bytes = capacity_bytes;
  e.layers = layout.stage_layers(stage);

  const TransformerParameters params = transformer_parameters(t);
  const double linear_params = static_cast<double>(params.per_layer) * e.layers;
  double stage_params = linear_params;
  if (stage == 0) stage_params += static_cast<double>(params.embedding);
  if (stage == pp - 1) {
    stage_params += static_cast<double>(params.head);
    // A tied output projection needs its own copy of the embedding on the last stage.
    if (t.tied_embeddings() && pp > 1)
      stage_params += static_cast<double>(t.vocab_size()) * t.hidden_size();
  }
  add_model_states(job, p, stage_params / tp, linear_params / tp, &e);
  add_activations(model, job, p, layout, &e);
  // fp32 logits of the micro-batch whose loss is being computed, split over the vocabulary.
  if (stage == pp - 1) {
    e.logits_bytes = 4.0 * job.sequence_length() / p.context_parallel() * p.micro_batch_size() *
                     t.vocab_size() / tp;
  }
  const double tensors = e.model_state_bytes() + e.activations_bytes + e.logits_bytes;
  e.runtime_bytes = runtime.fixed_bytes + runtime.fragmentation_fraction * tensors;
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
  const StateBytesPerParameter bytes = state_bytes_per_parameter(job.precision(), job.optimizer());
  const int zero = p.distributed_optimizer() ? 1 : p.zero_stage();
  const int dp = p.data_parallel();
  e.weights_bytes = params * bytes.weights / (zero >= 3 ? dp : 1);
  e.gradients_bytes = params * bytes.gradients / (zero >= 2 ? dp : 1);
  e.optimizer_bytes = params * bytes.optimizer / (zero >= 1 ? dp : 1);
  e.activations_bytes = cnn_activation_bytes(model.cnn(), p.micro_batch_size());
  e.runtime_bytes = runtime.fixed_bytes +
                    runtime.fragmentation_fraction * (e.model_state_bytes() + e.activations_bytes);
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
