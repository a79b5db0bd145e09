// Per-stage memory: model states sharded over tensor, pipeline and data parallelism, activations
// held by the pipeline schedule, logits and runtime memory.
//
// Layers: as layers_on_stage (pipeline_schedule.h).
// Micro-batches in flight at the peak (m = global batch / (micro-batch x DP)):
//   GPipe: all m;  1F1B: min(p - r, m);  interleaved with v chunks (Megatron-LM's schedule):
//   min(2 (p - r - 1) + (v - 1) p + 1, m v) chunks of l/(p v) layers.
#include "sim/parallel/memory_model.h"

#include <algorithm>

#include "sim/parallel/activation_memory.h"
#include "sim/parallel/pipeline_schedule.h"
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
  for (int degree : {p.tensor_parallel(), p.pipeline_parallel(), p.data_parallel()}) {
    if (degree > 1) ++communicators;
  }
  return {
      (runtime.cuda_context_gib() + communicators * runtime.communicator_gib()) * kBytesPerGibibyte,
      runtime.allocator_overhead_fraction()};
}

MemoryEstimate estimate_stage_memory(const s::Model& model, const s::TrainingJob& job,
                                     const s::Parallelism& p, int stage, double capacity_bytes,
                                     const RuntimeMemory& runtime) {
  const s::Transformer& t = model.transformer();
  const int pp = p.pipeline_parallel(), tp = p.tensor_parallel(), dp = p.data_parallel();
  const int v = p.schedule() == s::INTERLEAVED_ONE_F_ONE_B ? p.virtual_stages() : 1;
  const int l = t.num_layers();
  const long micro_batches =
      job.global_batch_size() / (static_cast<long>(p.micro_batch_size()) * dp);

  MemoryEstimate e;
  e.stage = stage;
  e.capacity_bytes = capacity_bytes;
  e.layers = layers_on_stage(l, pp, stage);

  // Model states.
  const TransformerParameters params = transformer_parameters(t);
  double stage_params = static_cast<double>(params.per_layer) * e.layers;
  if (stage == 0) stage_params += static_cast<double>(params.embedding);
  if (stage == pp - 1) {
    stage_params += static_cast<double>(params.head);
    // A tied output projection needs its own copy of the embedding on the last stage.
    if (t.tied_embeddings() && pp > 1)
      stage_params += static_cast<double>(t.vocab_size()) * t.hidden_size();
  }
  stage_params /= tp;
  const StateBytesPerParameter bytes = state_bytes_per_parameter(job.precision(), job.optimizer());
  const int zero = p.distributed_optimizer() ? 1 : p.zero_stage();
  e.weights_bytes = stage_params * bytes.weights / (zero >= 3 ? dp : 1);
  e.gradients_bytes = stage_params * bytes.gradients / (zero >= 2 ? dp : 1);
  e.optimizer_bytes = stage_params * bytes.optimizer / (zero >= 1 ? dp : 1);

  // Activations of the micro-batches in flight.
  LayerActivationSpec spec;
  spec.sequence_length = job.sequence_length();
  spec.micro_batch_size = p.micro_batch_size();
  spec.tensor_parallel = tp;
  spec.sequence_parallel = p.sequence_parallel();
  spec.recompute = p.recompute();
  spec.flash_attention = !job.has_flash_attention() || job.flash_attention();
  const double per_layer = layer_activation_bytes(t, spec);
  if (p.schedule() == s::GPIPE) {
    e.in_flight_micro_batches = static_cast<int>(micro_batches);
    e.activations_bytes = per_layer * e.layers * static_cast<double>(micro_batches);
  } else if (v > 1) {
    const long chunks = std::min<long>(2L * (pp - stage - 1) + static_cast<long>(v - 1) * pp + 1,
                                       micro_batches * v);
    e.in_flight_micro_batches = static_cast<int>((chunks + v - 1) / v);
    e.activations_bytes =
        per_layer * (static_cast<double>(l) / (pp * v)) * static_cast<double>(chunks);
  } else {
    e.in_flight_micro_batches = static_cast<int>(std::min<long>(pp - stage, micro_batches));
    e.activations_bytes = per_layer * e.layers * e.in_flight_micro_batches;
  }
  // fp32 logits of the micro-batch whose loss is being computed, split over the vocabulary.
  if (stage == pp - 1) {
    e.logits_bytes = 4.0 * job.sequence_length() * p.micro_batch_size() * t.vocab_size() / tp;
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
