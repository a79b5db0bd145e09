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
  // Open-loop traffic over a window of arrivals (after the first measured arrival up to the last
  // arrival): the requests that arrived in it and those that finished in it, per second (0 with
  // no such window: a traffic sent at once), and whether the deployment served fewer than it was
  // offered by more than the arrivals' sampling noise (falls_behind), or, arriving at one rate,
  // closed with more in flight than Little's law gives (queue_grows).
  double offered_requests_per_s = 0;
  double served_requests_per_s = 0;
  bool overloaded = false;
  double gpu_utilization = 0;      // share of time the replicas iterate
  double kv_cache_utilization = 0; // time-average share of the KV cache in use
  int64_t preemptions = 0;
  // Replicas sent any request, and the most busy at once (ServingOutcome's).
  int64_t replicas_used = 0, peak_busy_replicas = 0;
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

// `batch_capacity`: the most requests the deployment's batches hold at once (falls_behind).
// `steady_arrivals`: the requests arrive at one rate throughout (a Poisson traffic of rate_per_s),
// so that the count in flight as the window closes can be held against Little's law
// (queue_grows); not with bursts, a trace or a closed loop, whose rate at the close may be any.
// Requires: every request done; at least one arrives at or after `warmup_s`.
ServingMetrics measure_serving(const std::vector<Request>& requests, const ServingOutcome& outcome,
                               double warmup_s, double batch_capacity = 0,
                               bool steady_arrivals = false);

// Whether a deployment that finished `served` requests over a window in which `offered` arrived,
// its batches holding at most `batch_capacity` requests at once, fell behind its traffic: `served`
// below `offered` by more than `batch_capacity` and kOverloadSigmas standard deviations of a
// Poisson count of `offered` (sqrt(offered)).
inline constexpr double kOverloadSigmas = 5;
bool falls_behind(double offered, double served, double batch_capacity);

// Whether a deployment whose window of `offered` arrivals closed with `in_flight` requests
// arrived and not finished, finishing `served_per_s` requests a second at a mean end-to-end
// latency of `mean_e2e_s`, fell behind: `in_flight` above Little's law's mean count in the system
// (`served_per_s` x `mean_e2e_s`, raised by what a deployment keeping up but still filling loses
// of its throughput over a window of `window_s` opened after `fill_s` of traffic) by more than
// kOverloadSigmas x sqrt(`offered`) (its queue grew over the window).
bool queue_grows(double in_flight, double served_per_s, double mean_e2e_s, double offered,
                 double window_s, double fill_s);

// "serves 34.0 of 200.0 req/s": what an overloaded deployment served of its offered rate.
std::string overload_text(const ServingMetrics& metrics);

// The first objective of `slo` that `metrics` misses, as "p99 TTFT 812 ms > 500 ms", or "" when
// all hold.
std::string slo_violation(const schema::Slo& slo, const ServingMetrics& metrics);

}  // namespace clustersim
