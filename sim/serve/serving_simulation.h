// Serves a list of requests with identical replicas behind a load balancer, on the engine: each
// request goes, when it arrives, to the replica with the fewest requests waiting or running (the
// lowest index among equals), and every replica runs its scheduler (replica.h). Disaggregated: a
// prefill pool so balanced prefills each request, which then goes (its KV cache over
// kv_transfer.h's links) to the decode replica with the fewest requests waiting, running or on
// their way. Deterministic.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/serve/iteration_model.h"
#include "sim/serve/kv_transfer.h"
#include "sim/serve/replica.h"
#include "sim/serve/traffic.h"

namespace clustersim {

struct ServingOutcome {
  std::vector<RequestRecord> records;  // per request, in the requests' order
  Picoseconds end;                     // when the last event ran
  double busy_fraction = 0;            // mean over GPUs of iterating time / end
  double kv_fraction = 0;              // mean over GPUs of the KV cache in use
  double peak_kv_committed = 0;        // continuous: the most of one replica's KV cache held or
                                       // promised at once (Replica::peak_committed_fraction)
  int64_t iterations = 0;
  int64_t preemptions = 0;
  // Disaggregated: KV-cache bytes over every GPU, and decode iterations that ran prompt tokens
  // (a preempted request's recomputation).
  double kv_bytes_sent = 0, kv_bytes_received = 0;
  int64_t decode_prompt_iterations = 0;
};

// A pool of a disaggregated deployment. Borrowed; the model outlives the simulation.
struct ServingPoolSpec {
  const IterationModel* model = nullptr;
  ReplicaSettings settings;  // continuous batching; hand_off is set by the simulation
  PoolPlacement placement;
};

// Requires: requests in arrival order; replicas >= 1; settings that let the longest request fit
// (else it would wait forever: the caller checks the memory first).
ServingOutcome simulate_serving(const std::vector<Request>& requests, const IterationModel& model,
                                const ReplicaSettings& settings, int replicas);

// Requires: requests in arrival order; both pools with replicas and continuous batching;
// `kv_bytes_per_token` of the whole model; the pools' placements on `topology` (null: a free,
// infinitely fast link); every request's KV cache fits a decode replica.
ServingOutcome simulate_disaggregated(const std::vector<Request>& requests,
                                      const ServingPoolSpec& prefill,
                                      const ServingPoolSpec& decode, double kv_bytes_per_token,
                                      const Topology* topology);

}  // namespace clustersim
