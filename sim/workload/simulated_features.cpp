// The shape features the step and serving models do not simulate yet (see simulated_features.h).
#include "sim/workload/simulated_features.h"

namespace clustersim {

std::string unsimulated_feature(const schema::Transformer& t, Simulator simulator) {
  if (simulator == Simulator::kTrainingStep) return "";
  if (t.has_sliding_window()) return "sliding-window attention is not simulated in serving yet";
  // The training step runs sliding-window and latent attention, multi-token prediction, dense
  // first layers, shared experts and any expert width (workload/layer_ops.h); serving's per-token
  // costs (inference_shape.h) do not yet.
  if (t.has_latent_attention()) {
    return "multi-head latent attention is not simulated in serving yet";
  }
  if (t.multi_token_prediction_layers() > 0) {
    return "multi-token prediction is not simulated in serving yet";
  }
  if (t.has_moe()) {
    const schema::MixtureOfExperts& moe = t.moe();
    if (moe.first_dense_layers() > 0) {
      return "dense first layers before the experts (moe.first_dense_layers) are not simulated "
             "in serving yet";
    }
    if (moe.num_shared_experts() > 0) return "shared experts are not simulated in serving yet";
    if (moe.has_expert_ffn_hidden_size() && moe.expert_ffn_hidden_size() != t.ffn_hidden_size()) {
      return "an expert width other than ffn_hidden_size is not simulated in serving yet";
    }
  }
  return "";
}

}  // namespace clustersim
