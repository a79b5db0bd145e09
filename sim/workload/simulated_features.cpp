// The shape features the step and serving models do not simulate yet (see simulated_features.h).
#include "sim/workload/simulated_features.h"

namespace clustersim {

std::string unsimulated_feature(const schema::Transformer& t, Simulator simulator) {
  if (simulator == Simulator::kTrainingStep) return "";
  if (t.has_sliding_window()) return "sliding-window attention is not simulated in serving yet";
  // Serving (inference_shape.h) runs latent attention, dense first layers, shared experts and
  // any expert width; it does not load multi-token prediction layers.
  return "";
}

}  // namespace clustersim
