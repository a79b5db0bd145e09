// Evaluates every deployment of a serving scenario in parallel (oneTBB, one evaluator per
// thread, each serving every traffic sample in turn) and hands the rows on in configuration order, a chunk at a time, by a training sweep's
// chunked loop (sweep_runner.h run_candidates): the rows, their order and every number are the
// same for any thread count and chunking, a sizing can start at a deployment (to resume) and an
// interruption stops it. Structural problems prune a deployment (no row); a replica that does not
// fit gets an OOM row without simulation.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "sim/serve/serving_cost.h"
#include "sim/serve/serving_rows.h"
#include "sim/sweep/sweep_runner.h"

namespace clustersim {

struct ServingSweepOptions {
  // Threads, chunks, the first deployment and the interruption, as a training sweep's (one shard).
  SweepOptions sweep;
  // Also search each deployment's highest rate within the SLO (open-loop traffic).
  bool max_rate = false;
  // Independent samples of the traffic each deployment serves (traffic_samples.h), 1 to
  // kMaxTrafficSamples.
  int samples = 1;
};

// Counted as a training sweep's (sweep_runner.h): configurations are the deployments evaluated,
// simulated those that fit.
using ServingSweepCounts = SweepCounts;

// Returns the counts (candidates: the deployments from options.sweep.first_index on); on a
// replica cluster that cannot be built, `*error` is set and the sweep stops. `chunk_done` gets
// each chunk's rows in configuration order and the next deployment's index; false stops the
// sweep. Requires: a scenario that loaded without errors, with traffic.
ServingSweepCounts run_serving_sweep(const Catalog& catalog, const LoadedServingScenario& scenario,
                                     const ServingPrices& prices,
                                     const ServingSweepOptions& options,
                                     const ChunkDone& chunk_done, std::string* error);

}  // namespace clustersim
