// Evaluates every deployment of a serving scenario in parallel (oneTBB, one evaluator per
// thread) and hands the rows on in configuration order, a chunk at a time; the rows, their order
// and every number are the same for any thread count. Structural problems prune a deployment
// (no row); a replica that does not fit gets an OOM row without simulation.
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
  int threads = 0;        // 0: every core
  int64_t chunk = 64;     // deployments between two hand-overs
  // Also search each deployment's highest rate within the SLO (open-loop traffic).
  bool max_rate = false;
};

// Counted as a training sweep's (sweep_runner.h): configurations are the deployments evaluated,
// simulated those that fit.
using ServingSweepCounts = SweepCounts;

// Called after each chunk with its rows in configuration order; false stops the sweep.
using ServingChunkDone =
    std::function<bool(std::vector<ResultRow>& rows, const ServingSweepCounts& counts)>;

// Returns the counts; on a replica cluster that cannot be built, `*error` is set and the sweep
// stops. Requires: a scenario that loaded without errors, with traffic.
ServingSweepCounts run_serving_sweep(const Catalog& catalog, const LoadedServingScenario& scenario,
                                     const ServingPrices& prices,
                                     const ServingSweepOptions& options,
                                     const ServingChunkDone& chunk_done, std::string* error);

}  // namespace clustersim
