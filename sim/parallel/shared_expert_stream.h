// Shared experts on a CUDA stream of their own beside an expert layer's routed path
// (parallelism.shared_experts_side_stream: NeMo AutoModel's MoE.forward runs them on
// _shared_experts_stream, launched before the dispatch, joined before the layer's output; autograd
// runs their backward kernels on that stream too). Beside compute-bound routed kernels they gain
// nothing (both want every SM); what they fill is the routed path's idle GPU: the host's exposed
// wait after the dispatcher's synchronisation (expert_layer_host.h), where they run at full speed,
// and the all-to-alls, whose kernels hold a share s of the SMs, where they run at 1 - s of it (the
// contention of expert_comm_overlap.h). So a pass with shared-expert kernels S, host wait W and
// all-to-alls A takes
//   min(S, W) + min(S - min(S, W), (1 - s) A)
// less than with the shared experts after the routed ones on one stream.
#pragma once

#include "sim/parallel/layer_times.h"

namespace clustersim {

// `layer` (an expert layer's times, its host wait already added: add_expert_layer_host) with each
// pass's compute shortened by what its shared experts run in its host wait and beside its
// all-to-alls, the all-to-alls' kernels taking `sm_share` of the SMs
// (expert_communication_sm_share). The recomputed forward too (its shares are zero when it reruns
// nothing). Requires: 0 <= sm_share < 1.
void overlap_shared_experts(double sm_share, LayerTimes* layer);

}  // namespace clustersim
