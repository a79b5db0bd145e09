// A mix's data-parallel step as one timeline: a group per pool, its pipeline's tracks by stage,
// its wait and the all-reduce between pools, its optimizer after them.
#include "sim/parallel/pool_step_trace.h"

#include <map>

#include "sim/parallel/pipeline_simulation.h"
#include "sim/util/check.h"

namespace clustersim {
namespace {

// "aws.p4d.24xlarge (pool 2): replica 1 of 32, 8 micro-batches (the pool's 240 of 512)".
std::string pool_group(const PoolTrace& pool, size_t index, int64_t total) {
  return pool.instance + " (pool " + std::to_string(index + 1) + "): replica 1 of " +
         std::to_string(pool.replicas) + ", " + std::to_string(pool.micro_batches) +
         " micro-batches (the pool's " + std::to_string(pool.pool_micro_batches) + " of " +
         std::to_string(total) + ")";
}

}  // namespace

void draw_pool_step(const std::vector<PoolTrace>& pools, const std::vector<Picoseconds>& ready,
                    int limiting_pool, Picoseconds reduced, Timeline* timeline) {
  CLUSTERSIM_CHECK(ready.size() == pools.size(), "one ready time per pool");
  int64_t total = 0;
  for (const PoolTrace& pool : pools) total += pool.pool_micro_batches;
  const Picoseconds all_ready = ready[limiting_pool];
  for (size_t i = 0; i < pools.size(); ++i) {
    const PoolTrace& pool = pools[i];
    const std::string group = pool_group(pool, i, total);
    std::map<std::string, int> stage_of;
    for (size_t stage = 0; stage < pool.gradients_reduced.size(); ++stage) {
      stage_of.emplace(pipeline_stage_group(static_cast<int>(stage)), static_cast<int>(stage));
    }
    for (const TimelineSpan& span : pool.pipeline.spans()) {
      const auto stage = stage_of.find(span.group);
      CLUSTERSIM_CHECK(stage != stage_of.end(), "a pool's pipeline records its stages' spans");
      const Picoseconds gradients = pool.gradients_reduced[stage->second];
      // The stage's send of its last backward may start as its gradients are reduced: it belongs
      // to the passes, not to the optimizer's tail.
      const bool after_gradients = span.start >= gradients && !is_pipeline_send_track(span.track);
      const Picoseconds shift =
          after_gradients ? pool.optimizer_start[stage->second] - gradients : Picoseconds(0);
      timeline->add(group, span.group + " " + span.track, span.name, span.start + shift,
                    span.end + shift);
    }
    if (ready[i] < all_ready) {
      timeline->add(group, "between pools", "waiting for " + pools[limiting_pool].instance,
                    ready[i], all_ready);
    }
    if (all_ready < reduced) {
      timeline->add(group, "between pools", "all-reduce between pools", all_ready, reduced);
    }
  }
}

}  // namespace clustersim
