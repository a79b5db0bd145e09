// The part of an expert layer's passes that its side-stream shared experts hide.
#include "sim/parallel/shared_expert_stream.h"

#include <algorithm>
#include <cmath>

#include "sim/util/check.h"

namespace clustersim {

void overlap_shared_experts(double sm_share, LayerTimes* layer) {
  CLUSTERSIM_CHECK(sm_share >= 0 && sm_share < 1, "the all-to-alls' SM share out of [0, 1)");
  const auto overlap = [sm_share](const PassShares& shares, PassTimes* pass) {
    const Picoseconds in_wait = std::min(shares.shared_experts, shares.host_wait);
    const Picoseconds free_beside_all_to_alls(
        std::llround((1 - sm_share) * static_cast<double>(pass->expert_comm.count())));
    const Picoseconds beside =
        std::min(shares.shared_experts - in_wait, free_beside_all_to_alls);
    pass->compute = pass->compute - (in_wait + beside);
  };
  overlap(layer->forward_shares, &layer->forward);
  overlap(layer->backward_shares, &layer->backward);
  overlap(layer->recompute_shares, &layer->recompute);
}

}  // namespace clustersim
