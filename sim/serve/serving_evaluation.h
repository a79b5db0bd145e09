// Evaluating one deployment of a serving scenario: its memory (does the replica fit, how many
// KV-cache blocks), then its traffic simulated on the engine (latency percentiles, throughput,
// utilization) against the scenario's latency objectives; or a static-batch benchmark run.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "sim/io/catalog.h"
#include "sim/net/topology.h"
#include "sim/serve/attention_data_parallel.h"
#include "sim/serve/iteration_model.h"
#include "sim/serve/memory_fit.h"
#include "sim/serve/serving_metrics.h"
#include "sim/serve/serving_space.h"
#include "sim/serve/speculative_decoding.h"

namespace clustersim {

// How several independent samples of a deployment's traffic (traffic_samples.h) agree.
struct SampleSpread {
  int samples = 0;
  int meeting_slo = 0;  // samples meeting every objective and keeping up (meets_objectives)
  // The highest p99 of any sample.
  double ttft_p99_worst_ms = 0, tpot_p99_worst_ms = 0, e2e_p99_worst_ms = 0;
};

struct ServingEvaluation {
  TensorFormats formats;
  ServingMemory memory;         // disaggregated: a decode replica's
  int64_t kv_blocks = 0;        // continuous batching's pool per (decode) replica
  // Disaggregated: a prefill replica's memory and KV-cache blocks.
  std::optional<ServingMemory> prefill_memory;
  int64_t prefill_kv_blocks = 0;
  std::string out_of_memory;    // why the replica does not fit; "" when it does
  std::optional<ServingMetrics> metrics;  // absent when it does not fit
  std::string slo_violation;    // the first objective missed; "" when all hold (or none is set)
  // Served on several traffic samples (traffic_samples.h): how they agree; absent for one.
  std::optional<SampleSpread> spread;
  bool calibrated = true;       // the serving runtime has a fit for this GPU
  bool prefix_caching = false;  // the replicas reuse resident prefix blocks (continuous only)
  // The replica's cluster could not be built, or no request arrived after the warm-up.
  std::string error;
};

// Whether `e` meets the objectives as its row's status "ok" says: simulated, keeping up with its
// arrivals (an overloaded deployment's p99s are only its queue's length when the traffic ends,
// and a short traffic may leave them within the SLO) and within every objective.
bool meets_objectives(const ServingEvaluation& e);

struct BenchmarkResult {
  bool fits = true;
  double peak_memory_bytes = 0;  // per GPU
  double capacity_bytes = 0;
  double ttft_ms = 0, tpot_ms = 0, output_tokens_per_s = 0;
};

// The largest multiple of `traffic`'s rates the rate search (--max-rate, autoscaling) tries: the
// largest power of two up to 64 that keeps generated traffic within kMaxRequests on average (a
// trace keeps its count: 64).
double max_rate_scale_limit(const schema::Traffic& traffic);

// The largest multiple of the traffic's rates for which `meets` holds, by the search
// ServingEvaluator::max_rate_scale describes, up to `limit` (a power of two).
double search_max_rate_scale(const std::function<bool(double)>& meets, double limit);

// Caches topologies and generated traffic; one per thread (and traffic sample).
class ServingEvaluator {
 public:
  // Serves sample `sample` of the scenario's traffic (traffic_samples.h; 0: the traffic as
  // written). Requires: a scenario that loaded without errors; both outlive the evaluator.
  ServingEvaluator(const Catalog& catalog, const LoadedServingScenario& scenario, int sample = 0);

  // The scenario's traffic with every rate x `rate_scale` (a trace: its times / rate_scale; a
  // closed loop: c.concurrency users, whatever the scale). Disaggregated (c.prefill): each
  // pool's memory, then the traffic through both.
  ServingEvaluation evaluate(const ServingConfiguration& c, double rate_scale = 1);
  // A static-batch benchmark run on one replica of `c`. Requires: `c` uses STATIC batching.
  BenchmarkResult benchmark(const ServingConfiguration& c, const schema::BatchBenchmark& run);
  // The largest multiple of the traffic's rates that `c` serves within the scenario's objectives
  // without falling behind its arrivals (meets_objectives; bisection to 2%), 0 when not even a twentieth of it; at most max_rate_scale_limit, which
  // it returns when `c` meets the objectives at every rate tried (a lower bound, not a maximum).
  // Requires: the scenario has an slo and open-loop traffic.
  double max_rate_scale(const ServingConfiguration& c);

 private:
  struct Replica {  // what one configuration's replicas share
    std::unique_ptr<IterationModel> model;  // null under attention data parallelism
    std::unique_ptr<AttentionDataParallelModel> attention_dp;  // c.attention_data_parallel
    std::unique_ptr<SpeculativeDecoder> speculative;  // c.draft_tokens > 0
    ReplicaSettings settings;
    ServingEvaluation evaluation;  // formats, memory, fit, calibration (no metrics yet)
    double runtime_bytes = 0;      // the runtime's own memory per GPU
  };
  // `largest_iteration`: the most tokens one iteration processes; `workspace_tokens`: those the
  // activation workspace is reserved for ahead (0 for static batches, which count theirs);
  // `fake_weights`: a benchmark engine's (IterationInputs::fake_weights).
  Replica build(const ServingConfiguration& c, int64_t largest_iteration, int64_t workspace_tokens,
                bool fake_weights);
  ServingEvaluation evaluate_disaggregated(const ServingConfiguration& c, double rate_scale);
  // `e`'s metrics and objectives after `simulate` served the scenario's traffic for `c`.
  void serve(const ServingConfiguration& c, double rate_scale,
             const std::function<ServingOutcome(RequestSource*)>& simulate, ServingEvaluation* e);
  // Why replica `r` of `c` cannot hold one request of `longest` tokens, or "".
  std::string memory_problem(const ServingConfiguration& c, const Replica& r,
                             int64_t longest) const;
  // The replica's GPUs (a disaggregated deployment's: every node it places replicas on).
  const Topology* topology(const ServingConfiguration& c, std::string* error);
  const Topology* topology(const schema::InstanceType* instance, int nodes, int gpus,
                           std::string* error);
  // Pools on two instance types: the network between their nodes (inter_pool_topology.h, one
  // endpoint per node, the prefill pool's first, each reaching the others through its NICs).
  const Topology* between_pools(const ServingConfiguration& c, std::string* error);
  const std::vector<Request>& requests(double rate_scale);

  const Catalog& catalog_;
  const LoadedServingScenario& scenario_;
  const schema::Runtime& runtime_;
  const schema::ServingRuntime& serving_;
  std::map<std::tuple<const schema::InstanceType*, int, int>, std::unique_ptr<Topology>>
      topologies_;
  std::map<std::tuple<const schema::InstanceType*, int, const schema::InstanceType*, int>,
           std::unique_ptr<Topology>>
      between_;
  const int64_t longest_request_;  // input + output tokens
  const int longest_prompt_;
  const schema::Traffic traffic_;  // the scenario's, seeded for the sample
  std::map<double, std::vector<Request>> generated_;  // by rate scale
};

}  // namespace clustersim
