// How many transformer layers each pipeline stage takes when the stages run on GPUs of different
// speeds and memories (a pipeline across the pools of a mix): the layers are dealt one at a time
// to the stage that would then finish its share soonest, each stage within the layers its GPU's
// memory holds.
#pragma once

#include <optional>
#include <vector>

namespace clustersim {

// One stage's speed and room: `layer_s` for one layer (forward and backward of a micro-batch on
// its GPU), `extra_s` besides its layers (the output layer of the last stage), `max_layers` the
// most layers that fit in its GPU's memory.
struct StageSpeed {
  double layer_s = 0;
  double extra_s = 0;
  int max_layers = 0;
};

// Layers per stage: every stage gets one, then each further layer goes to the stage whose
// n x layer_s + extra_s would be the smallest after taking it (ties to the earlier stage), among
// those below max_layers. Dealing equal jobs greedily minimises the largest stage time
// max_s(n_s layer_s + extra_s). Null when the stages cannot hold `layers` (a stage without room
// for one layer, or too little room in all).
// Requires: layers >= stages.size() >= 1; layer_s > 0.
std::optional<std::vector<int>> split_layers_by_speed(int layers,
                                                      const std::vector<StageSpeed>& stages);

}  // namespace clustersim
