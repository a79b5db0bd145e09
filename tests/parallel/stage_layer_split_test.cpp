// Tests of the split of layers over stages of different speeds (sim/parallel/stage_layer_split.h)
// against the balanced closed form, per stage and per interleaved model chunk.
#include "sim/parallel/stage_layer_split.h"

#include <algorithm>
#include <catch2/catch.hpp>

namespace clustersim {
namespace {

// The largest stage time of a split.
double slowest(const std::vector<int>& split, const std::vector<StageSpeed>& stages) {
  double worst = 0;
  for (size_t s = 0; s < split.size(); ++s) {
    worst = std::max(worst, split[s] * stages[s].layer_s + stages[s].extra_s);
  }
  return worst;
}

// The balanced optimum: the least T (a multiple of 0.5 here) at which the stages together hold
// the layers, sum_s min(max_layers, floor((T - extra_s) / layer_s)) >= layers.
double balanced(int layers, const std::vector<StageSpeed>& stages) {
  for (double t = 0.5;; t += 0.5) {
    int held = 0;
    for (const StageSpeed& s : stages) {
      held += std::min(s.max_layers, static_cast<int>((t - s.extra_s) / s.layer_s));
    }
    if (held >= layers) return t;
  }
}

TEST_CASE("layers split by speed reach the balanced closed form") {
  // Two fast stages (1 s a layer) and a slow one (2 s): 8 layers, T = 4 (4 + 4 + 2 >= 8 at 4,
  // 3 + 3 + 1 < 8 at 3).
  const std::vector<StageSpeed> stages{{1, 0, 100}, {1, 0, 100}, {2, 0, 100}};
  const std::vector<int> split = *split_layers_by_speed(8, stages);
  CHECK(split == std::vector<int>{4, 3, 1});
  CHECK(slowest(split, stages) == balanced(8, stages));
  CHECK(balanced(8, stages) == 4);
  // The output layer of the last stage (1.5 s) moves a layer off it: 2 + 1.5 <= 4.
  const std::vector<StageSpeed> output{{1, 0, 100}, {1, 0, 100}, {1, 1.5, 100}};
  const std::vector<int> with_output = *split_layers_by_speed(10, output);
  CHECK(slowest(with_output, output) == balanced(10, output));
  CHECK(with_output.back() < with_output.front());
}

TEST_CASE("a stage takes no more layers than its GPU's memory holds") {
  // The first stage holds 2 layers at most: the others take the rest, T = 4 (2 + 4 + 2).
  const std::vector<StageSpeed> stages{{1, 0, 2}, {1, 0, 100}, {2, 0, 100}};
  const std::vector<int> split = *split_layers_by_speed(8, stages);
  CHECK(split[0] == 2);
  CHECK(split[0] + split[1] + split[2] == 8);
  CHECK(slowest(split, stages) == balanced(8, stages));
  // Too little room in all, or none for one layer: no split.
  CHECK_FALSE(split_layers_by_speed(8, {{1, 0, 3}, {1, 0, 4}}).has_value());
  CHECK_FALSE(split_layers_by_speed(8, {{1, 0, 0}, {1, 0, 100}}).has_value());
}

TEST_CASE("interleaved, each stage's layers by speed are balanced over its chunks") {
  // A fast stage (1 s a layer) and a slow one (2 s, the output layer's 1.5 s on its last chunk),
  // 12 layers: per stage the balanced T = 9 (9 + floor(7.5 / 2) = 12), 9 and 3 layers.
  const std::vector<StageSpeed> stages{{1, 0, 100}, {2, 1.5, 100}};
  const std::vector<int> per_stage = *split_layers_by_speed(12, stages);
  CHECK(slowest(per_stage, stages) == balanced(12, stages));
  REQUIRE(per_stage == std::vector<int>{9, 3});
  // Over 2 chunks each, in virtual-stage order: the fast stage's 9 as 5 + 4 (the earlier chunk
  // fuller); the slow stage's 3 as 2 + 1, its chunks ending at 4 s and 1 x 2 + 1.5 = 3.5 s
  // (1 + 2 would end at 2 and 5.5).
  CHECK(*split_layers_by_speed(12, stages, 2) == std::vector<int>{5, 2, 4, 1});
  // A stage's memory caps its chunks together: the fast stage holds 6, 3 + 3.
  CHECK(*split_layers_by_speed(12, {{1, 0, 6}, {2, 1.5, 100}}, 2) ==
        std::vector<int>{3, 3, 3, 3});
}

}  // namespace
}  // namespace clustersim
