// How many transformer layers each pipeline stage (and, interleaved, each of its model chunks)
// takes when the stages run on GPUs of different speeds and memories (a pipeline across the pools
// of a mix): the layers are dealt one at a time to the stage that would then finish its share
// soonest, each stage within the layers its GPU's memory holds, then over its chunks alike.
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
// max_s(n_s layer_s + extra_s), the bound on a pipeline's throughput. With `chunks` model chunks
// per stage (the interleaved schedule) the result is per chunk in virtual-stage order (chunk c of
// stage r the (c x stages + r)-th count): each stage's layers dealt the same way over its chunks,
// extra_s on its last (the output layer's), ties to the earlier chunk, so that no chunk outlasts
// the stage's others by more than a layer: one slow chunk paces an interleaved schedule's whole
// ring of chunks even when its stage's total is short. Null when the stages cannot hold `layers`
// (a stage without room for one layer, or too little room in all).
// Requires: layers >= stages.size() >= 1; layer_s > 0; chunks >= 1.
std::optional<std::vector<int>> split_layers_by_speed(int layers,
                                                      const std::vector<StageSpeed>& stages,
                                                      int chunks = 1);

}  // namespace clustersim
