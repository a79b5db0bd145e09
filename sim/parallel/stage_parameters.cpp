// Per-GPU parameters of some layers, dense and routed experts apart. Counts are integers exact
// in doubles; each share is divided once, so a dense model's figures are those of one division.
#include "sim/parallel/stage_parameters.h"

#include "sim/parallel/expert_parallel.h"
#include "sim/workload/lora.h"

namespace clustersim {

LocalParameters local_parameters(const schema::Parallelism& p, const LayerParameters& in,
                                 double other_dense) {
  const double routed = in.routed;
  const double layers = in.all - routed;
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
  adapters.dense = lora_parameters_per_layer(t, job.lora(), job.separate_projections()) * layers /
                   p.tensor_parallel();
  return adapters;
}

}  // namespace clustersim
