// Serves a list of requests with identical replicas behind a load balancer, on the engine: each
// request goes, when it arrives, to the replica with the fewest requests waiting or running (the
// lowest index among equals), and every replica runs its scheduler (replica.h). Deterministic.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/serve/iteration_model.h"
#include "sim/serve/replica.h"
#include "sim/serve/traffic.h"

namespace clustersim {

struct ServingOutcome {
  std::vector<RequestRecord> records;  // per request, in the requests' order
  Picoseconds end;                     // when the last event ran
  double busy_fraction = 0;            // mean over replicas of iterating time / end
  double kv_fraction = 0;              // mean over replicas of the KV cache in use
  int64_t iterations = 0;
  int64_t preemptions = 0;
};

// Requires: requests in arrival order; replicas >= 1; settings that let the longest request fit
// (else it would wait forever: the caller checks the memory first).
ServingOutcome simulate_serving(const std::vector<Request>& requests, const IterationModel& model,
                                const ReplicaSettings& settings, int replicas);

}  // namespace clustersim
