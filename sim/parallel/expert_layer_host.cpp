// The host's exposed time in an eager expert layer's passes.
#include "sim/parallel/expert_layer_host.h"

#include <algorithm>

namespace clustersim {

ExpertLayerHost expert_layer_host(const schema::Gpu& gpu, int64_t local_experts) {
  return {Picoseconds::from_microseconds(gpu.expert_layer_sync_us_per_expert() *
                                         static_cast<double>(local_experts)),
          Picoseconds::from_microseconds(gpu.expert_layer_issue_us())};
}

Picoseconds host_exposed(Picoseconds gpu_time, const ExpertLayerHost& host) {
  return std::max(host.sync, host.issue - gpu_time);
}

void add_expert_layer_host(const ExpertLayerHost& host, bool full_recompute, LayerTimes* layer) {
  layer->forward.compute += host_exposed(layer->forward.total(), host);
  layer->backward.compute += host_exposed(layer->backward.total(), host);
  if (full_recompute) layer->recompute.compute += host_exposed(layer->recompute.total(), host);
}

}  // namespace clustersim
