// Per-GPU parameters of some layers, dense and routed experts apart. Counts are integers exact
// in doubles; each share is divided once, so a dense model's figures are those of one division.
#include "sim/parallel/stage_parameters.h"

#include "sim/parallel/expert_parallel.h"

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

}  // namespace clustersim
