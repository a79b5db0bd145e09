// Per-GPU parameters of some layers, dense and routed experts apart. Counts are integers exact
// in doubles; each share is divided once, so a dense model's figures are those of one division.
#include "sim/parallel/stage_parameters.h"

#include "sim/parallel/expert_parallel.h"
#include "sim/workload/lora.h"
#include "sim/workload/parameter_count.h"

namespace clustersim {

LocalParameters local_parameters(const schema::Transformer& t, const schema::Parallelism& p,
                                 int dense_layers, int expert_layers, double other_dense) {
  const TransformerParameters params = transformer_parameters(t);
  const double routed = static_cast<double>(params.routed_experts_per_layer) * expert_layers;
  const double layers = static_cast<double>(params.dense_per_layer) * dense_layers +
                        (static_cast<double>(params.per_layer) * expert_layers - routed);
  const ExpertLayout experts = expert_layout(p);
  const double tp = p.tensor_parallel();
  LocalParameters local;
  local.dense = (layers + other_dense) / tp;
  local.expert = routed / (experts.expert_tensor_parallel * experts.expert_parallel);
  local.layers = layers / tp + local.expert;
  return local;
}

LocalParameters trainable_parameters(const schema::Transformer& t, const schema::TrainingJob& job,
                                     const schema::Parallelism& p, const LocalParameters& local,
                                     int layers) {
  if (!job.has_lora()) return local;
  LocalParameters adapters;
  adapters.dense = lora_parameters_per_layer(t, job.lora()) * layers / p.tensor_parallel();
  return adapters;
}

}  // namespace clustersim
