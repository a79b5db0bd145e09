// What users read off a served traffic: latency percentiles (time to first token, time per
// output token after the first, end to end), throughput, how busy the GPUs and the KV cache were,
// and whether latency objectives hold (and which one binds when not).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/io/schema/serving.pb.h"
#include "sim/serve/serving_simulation.h"

namespace clustersim {

// A latency's distribution as benchmarks report it: nearest-rank percentiles and the mean (the
// "average" of genai-perf and trtllm-bench, the "mean" of vLLM's benchmark_serving).
struct Percentiles {
  double p50 = 0, p90 = 0, p99 = 0;
  double mean = 0;
};

// Nearest-rank percentiles of `values` (reordered) and their mean. Requires: not empty.
Percentiles percentiles(std::vector<double>* values);

struct ServingMetrics {
  int64_t measured = 0;   // requests arriving after the warm-up
  Percentiles ttft_ms, tpot_ms, e2e_ms;
  // The rate the deployment produced output tokens and finished requests at: while the traffic
  // arrived (not diluted by the drain after it), or over the measured requests' first arrival to
  // last token when that is higher (a traffic sent at once).
  double output_tokens_per_s = 0;
  double requests_per_s = 0;
  double gpu_utilization = 0;      // share of time the replicas iterate
  double kv_cache_utilization = 0; // time-average share of the KV cache in use
  int64_t preemptions = 0;
  // Disaggregated: the KV caches' trips from prefill to decode replica (requests of more than
  // one output token), which delay the second token, not the first.
  std::optional<Percentiles> kv_transfer_ms;
  // Whether a measured request carries a shared prefix; then the share of the measured requests'
  // prompt tokens found in their replica's prefix cache (not prefilled), and of the requests that
  // found any (0 with prefix caching off).
  bool shared_prefixes = false;
  double prefix_hit_tokens = 0, prefix_hit_requests = 0;
  // Speculative decoding: the mean tokens a sequence keeps per iteration, over every
  // verification of the run (the warm-up's too); 0 without it.
  double accepted_per_iteration = 0;
};

// Requires: every request done; at least one arrives at or after `warmup_s`.
ServingMetrics measure_serving(const std::vector<Request>& requests, const ServingOutcome& outcome,
                               double warmup_s);

// The first objective of `slo` that `metrics` misses, as "p99 TTFT 812 ms > 500 ms", or "" when
// all hold.
std::string slo_violation(const schema::Slo& slo, const ServingMetrics& metrics);

}  // namespace clustersim
