// Greedy split of layers over stages of different speeds and memories.
#include "sim/parallel/stage_layer_split.h"

#include "sim/util/check.h"

namespace clustersim {

std::optional<std::vector<int>> split_layers_by_speed(int layers,
                                                      const std::vector<StageSpeed>& stages,
                                                      int chunks) {
  const int count = static_cast<int>(stages.size());
  CLUSTERSIM_CHECK(count >= 1 && layers >= count, "fewer layers than pipeline stages");
  CLUSTERSIM_CHECK(chunks >= 1, "a stage has at least one model chunk");
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
  if (chunks == 1) return split;
  // Each stage's layers over its chunks, the output layer on the last: one at a time to the
  // chunk that would end soonest, ties to the earlier.
  std::vector<int> per_chunk(static_cast<size_t>(count) * chunks, 0);
  for (int s = 0; s < count; ++s) {
    for (int dealt = 0; dealt < split[s]; ++dealt) {
      int best = 0;
      double best_end = 0;
      for (int c = 0; c < chunks; ++c) {
        const double extra = c == chunks - 1 ? stages[s].extra_s : 0;
        const double end = (per_chunk[c * count + s] + 1) * stages[s].layer_s + extra;
        if (c == 0 || end < best_end) {
          best = c;
          best_end = end;
        }
      }
      ++per_chunk[best * count + s];
    }
  }
  return per_chunk;
}

}  // namespace clustersim
