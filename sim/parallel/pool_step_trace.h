// The step of data-parallel pools (pool_step.h) drawn in one Timeline from the pipelines the step
// model simulated: a group per pool, named by its instance type, holding its busiest replica's
// pipeline (each stage's tracks as simulate_pipeline records them, "stage 0 compute", ...) and, on
// a track "between pools", its wait for the pool whose gradients are ready last and the all-reduce
// between the pools. What a stage does once its gradients are reduced among the pool's replicas
// (its optimizer step, its parameter gathers) is drawn where the step model starts it: after that
// all-reduce, or under ZeRO-3 after the pool's wait.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/engine/timeline.h"
#include "sim/util/units.h"

namespace clustersim {

struct PoolTrace {
  std::string instance;            // the pool's instance type
  int replicas = 1;                // its data-parallel replicas
  int micro_batches = 0;           // its busiest replica's, the one drawn
  int64_t pool_micro_batches = 0;  // all its replicas'
  Timeline pipeline;               // the busiest replica's, as simulate_pipeline records it
  // Per stage: its gradients reduced among the pool's replicas, its optimizer step started.
  std::vector<Picoseconds> gradients_reduced, optimizer_start;
};

// Adds every pool's spans to `timeline`, in pool order: `ready` when each pool's gradients are
// reduced among its replicas (every stage's), `limiting_pool` the last, `reduced` the end of the
// all-reduce between pools (the latest `ready` when there is none, under ZeRO-3).
// Requires: `ready` and `pools` of one size; each pipeline's groups its stages', each stage's
// times given.
void draw_pool_step(const std::vector<PoolTrace>& pools, const std::vector<Picoseconds>& ready,
                    int limiting_pool, Picoseconds reduced, Timeline* timeline);

}  // namespace clustersim
