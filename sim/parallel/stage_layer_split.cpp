// Greedy split of layers over stages of different speeds and memories.
#include "sim/parallel/stage_layer_split.h"

#include "sim/util/check.h"

namespace clustersim {

std::optional<std::vector<int>> split_layers_by_speed(int layers,
                                                      const std::vector<StageSpeed>& stages) {
  const int count = static_cast<int>(stages.size());
  CLUSTERSIM_CHECK(count >= 1 && layers >= count, "fewer layers than pipeline stages");
  std::vector<int> split(count, 1);
  for (const StageSpeed& stage : stages) {
    if (stage.max_layers < 1) return std::nullopt;
  }
  for (int dealt = count; dealt < layers; ++dealt) {
    int best = -1;
    double best_end = 0;
    for (int s = 0; s < count; ++s) {
      if (split[s] >= stages[s].max_layers) continue;
      const double end = (split[s] + 1) * stages[s].layer_s + stages[s].extra_s;
      if (best < 0 || end < best_end) {
        best = s;
        best_end = end;
      }
    }
    if (best < 0) return std::nullopt;
    ++split[best];
  }
  return split;
}

}  // namespace clustersim
