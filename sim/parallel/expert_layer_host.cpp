// The host's exposed time in an eager expert layer's passes.
#include "sim/parallel/expert_layer_host.h"

#include <algorithm>

namespace clustersim {

ExpertLayerHost expert_layer_host(const schema::Gpu& gpu, int64_t local_experts,
                                  bool static_splits) {
  const Picoseconds issue = Picoseconds::from_microseconds(gpu.expert_layer_issue_us());
  if (static_splits) return {Picoseconds(), issue};  // nothing to copy: no sync
  return {Picoseconds::from_microseconds(gpu.expert_layer_sync_us_per_expert() *
                                         static_cast<double>(local_experts)),
          issue};
}

Picoseconds forward_host_exposed(Picoseconds gpu_time, const ExpertLayerHost& host) {
  return std::max(host.sync, host.issue - gpu_time);
}

Picoseconds backward_host_exposed(Picoseconds gpu_time, const ExpertLayerHost& host) {
  return std::max(Picoseconds(), host.issue - gpu_time);
}

void add_expert_layer_host(const ExpertLayerHost& host, bool forward_rerun, LayerTimes* layer) {
  // The wait comes before the pass's all-to-alls (a forward's at the dispatcher's
  // synchronisation).
  const auto wait = [](Picoseconds exposed, PassTimes* pass, PassShares* shares,
                       std::vector<TaskSpan>* all_to_alls) {
    pass->compute += exposed;
    shares->host_wait += exposed;
    if (all_to_alls == nullptr) return;
    for (TaskSpan& span : *all_to_alls) span.start += exposed;
  };
  wait(forward_host_exposed(layer->forward.total(), host), &layer->forward,
       &layer->forward_shares, &layer->forward_all_to_alls);
  wait(backward_host_exposed(layer->backward.total(), host), &layer->backward,
       &layer->backward_shares, &layer->backward_all_to_alls);
  if (forward_rerun) {
    wait(forward_host_exposed(layer->recompute.total(), host), &layer->recompute,
         &layer->recompute_shares, nullptr);
  }
}

}  // namespace clustersim
