// The pool_placement text of a mix's row.
#include "sim/sweep/pool_placement.h"

#include <algorithm>

namespace clustersim {
namespace {

// "2 replicas take 80 of 128 micro-batches" ("1 replica takes"; "(at most 23 each)" after it
// when its replicas do not take as many each; no micro-batches when unsimulated).
std::string replicas_part(int replicas, const PoolStepResult* step, size_t pool) {
  std::string text = std::to_string(replicas) + (replicas == 1 ? " replica" : " replicas");
  if (!step) return text;
  int64_t total = 0;
  for (int64_t n : step->pool_micro_batches) total += n;
  const int64_t share = step->pool_micro_batches[pool];
  const int busiest = step->micro_batches[pool];
  text += (replicas == 1 ? " takes " : " take ") + std::to_string(share) + " of " +
          std::to_string(total) + " micro-batches";
  if (share != int64_t{busiest} * replicas) {
    text += " (at most " + std::to_string(busiest) + " each)";
  }
  return text;
}

// "stages 3-4 (layers 13+12)" for stages first..last, counted from 0 ("stage 3" when one; no
// layers when unsimulated).
std::string stages_part(int first, int last, const PipelineAcrossPoolsResult* stages) {
  std::string text = first == last ? "stage " + std::to_string(first + 1)
                                   : "stages " + std::to_string(first + 1) + "-" +
                                         std::to_string(last + 1);
  if (!stages) return text;
  std::string layers;
  for (int stage = first; stage <= last; ++stage) {
    layers += (layers.empty() ? "" : "+") + std::to_string(stages->stage_layers[stage]);
  }
  return text + " (layers " + layers + ")";
}

}  // namespace

std::string describe_pool_placement(const Configuration& c, const Evaluation& e) {
  if (!c.is_mix()) return "";
  const PoolMix& pools = *c.pools;
  std::vector<std::string> parts;
  if (c.parallelism.pool_placement() == schema::PIPELINE_ACROSS_POOLS) {
    const std::vector<const PoolShare*> of_stage = c.stage_pools();  // each pool's in a row
    const PipelineAcrossPoolsResult* stages = e.stages ? &*e.stages : nullptr;
    for (const PoolShare& pool : pools) {
      const auto first = std::find(of_stage.begin(), of_stage.end(), &pool);
      const auto count = std::count(first, of_stage.end(), &pool);
      const int at = static_cast<int>(first - of_stage.begin());
      parts.push_back(stages_part(at, at + static_cast<int>(count) - 1, stages));
    }
  } else {
    const PoolStepResult* step = e.pools ? &*e.pools : nullptr;
    for (size_t i = 0; i < pools.size(); ++i) {
      parts.push_back(replicas_part(*pool_replicas(pools[i], c.parallelism), step, i));
    }
  }
  std::string text;
  for (size_t i = 0; i < pools.size(); ++i) {
    text += (i == 0 ? "" : " + ") + pools[i].instance->name() + ": " + parts[i];
  }
  return text;
}

}  // namespace clustersim
