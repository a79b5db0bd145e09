// Memory, then simulated traffic, of one serving deployment.
#include "sim/serve/serving_evaluation.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "sim/hw/device_memory.h"
#include "sim/net/inter_pool_topology.h"
#include "sim/net/topology_builder.h"
#include "sim/serve/beam_search.h"
#include "sim/serve/closed_loop.h"
#include "sim/serve/cyclic_kv_cache.h"
#include "sim/serve/serving_checks.h"
#include "sim/serve/serving_default_fit.h"
#include "sim/serve/traffic_samples.h"
#include "sim/util/check.h"
#include "sim/util/number_format.h"
#include "sim/util/units.h"

namespace clustersim {
namespace {

namespace s = schema;

std::string gib_short(double bytes) {
  return std::to_string(static_cast<int64_t>(std::ceil(bytes / kBytesPerGibibyte)));
}

// A pool's placement counted in nodes of `per_node` GPUs, from node `first`: each replica
// holds the nodes its GPUs are on.
PoolPlacement in_nodes(const PoolPlacement& gpus, int per_node, int first) {
  PoolPlacement nodes;
  nodes.gpus = (gpus.gpus + per_node - 1) / per_node;
  for (int g : gpus.first_gpu) nodes.first_gpu.push_back(first + g / per_node);
  return nodes;
}

}  // namespace

ServingEvaluator::ServingEvaluator(const Catalog& catalog, const LoadedServingScenario& scenario,
                                   int sample)
    : catalog_(catalog),
      scenario_(scenario),
      runtime_(*catalog.runtimes().find("default")->value),
      serving_(*serving_runtime(scenario.scenario(), catalog)),
      longest_request_(longest_request_tokens(scenario)),
      longest_prompt_(longest_prompt_tokens(scenario)),
      traffic_(traffic_sample(scenario.scenario().traffic(), sample)) {}

const Topology* ServingEvaluator::topology(const ServingConfiguration& c, std::string* error) {
  const int per_node = c.instance->gpu_count();
  if (c.split_nodes()) return between_pools(c, error);
  if (c.prefill) {
    const DeploymentPlacement placement = deployment_placement(c);
    const int end = placement.decode.first_gpu.back() + placement.decode.gpus;
    return topology(c.instance, placement.nodes, std::min(end, per_node), error);
  }
  const int nodes = (c.replica_gpus() + per_node - 1) / per_node;
  return topology(c.instance, nodes, std::min(c.replica_gpus(), per_node), error);
}

const Topology* ServingEvaluator::between_pools(const ServingConfiguration& c,
                                                std::string* error) {
  const DeploymentPlacement placement = deployment_placement(c);
  const int prefill_nodes = placement.prefill_nodes;
  const int decode_nodes = placement.nodes - prefill_nodes;
  auto& slot = between_[{c.prefill->instance, prefill_nodes, c.instance, decode_nodes}];
  if (!slot) {
    std::vector<PoolEndpoint> pools(prefill_nodes, PoolEndpoint{c.prefill->instance, 1});
    pools.insert(pools.end(), decode_nodes, PoolEndpoint{c.instance, 1});
    const InterPoolLinks links = inter_pool_links(pools, s::InterPoolNetwork(), nullptr, catalog_);
    if (!links.error.empty()) {
      *error = links.error;
      return nullptr;
    }
    slot = inter_pool_topology(links);
  }
  return slot.get();
}

const Topology* ServingEvaluator::topology(const s::InstanceType* instance, int nodes, int gpus,
                                           std::string* error) {
  auto& slot = topologies_[{instance, nodes, gpus}];
  if (!slot) {
    ClusterSpec spec;
    spec.instance = instance;
    spec.nodes = nodes;
    spec.gpus_per_node = gpus;
    TopologyOrError built = build_topology(spec, catalog_);
    if (!built.topology) {
      *error = built.error;
      return nullptr;
    }
    slot = std::move(built.topology);
  }
  return slot.get();
}

ServingEvaluator::Replica ServingEvaluator::build(const ServingConfiguration& c,
                                                  int64_t largest_iteration,
                                                  int64_t workspace_tokens, bool fake_weights) {
  Replica r;
  ServingEvaluation& e = r.evaluation;
  const s::Gpu& gpu = catalog_.gpu_of(*c.instance);
  e.formats = resolve_formats(c.quantization, gpu);
  IterationInputs in;
  in.model = &scenario_.model->transformer();
  in.formats = e.formats;
  in.tensor_parallel = c.tensor_parallel;
  in.pipeline_parallel = c.pipeline_parallel;
  in.expert_parallel = c.expert_parallel;
  in.gpu = &gpu;
  in.runtime = &runtime_;
  in.serving = &serving_;
  in.fit = serving_gpu_fit(serving_, gpu, &e.calibrated);
  in.max_tokens = std::max<int64_t>(1, largest_iteration);
  in.fake_weights = fake_weights;
  if (c.replica_gpus() > 1) {
    in.topology = topology(c, &e.error);
    if (in.topology == nullptr) return r;
  }
  // The captured CUDA-graph sizes a batch may be padded to: none above max_batch_size (a GPU's,
  // under attention data parallelism).
  std::vector<int64_t> graph_sizes;
  for (int size : c.scheduler.cuda_graph_batch_sizes()) {
    if (size <= c.scheduler.max_batch_size()) graph_sizes.push_back(size);
  }
  if (c.attention_data_parallel) {
    const s::MoeTokenExchange exchange = resolve_moe_token_exchange(
        scenario_.scenario().deployment().moe_token_exchange(), c.expert_parallel,
        in.model->moe().experts_per_token(), c.instance->gpu_interconnect());
    r.attention_dp =
        std::make_unique<AttentionDataParallelModel>(in, std::move(graph_sizes), exchange);
  } else {
    r.model = std::make_unique<IterationModel>(in);
  }
  // Under attention data parallelism, one GPU's own part (its scheduler's settings are per GPU).
  const IterationModel& timing = r.model ? *r.model : r.attention_dp->rank_model();
  r.runtime_bytes = runtime_bytes(serving_, in.fit, c.tensor_parallel);
  e.memory = serving_memory(timing.largest_stage(), r.runtime_bytes,
                            labelled_gpu_bytes(*c.instance, gpu), workspace_tokens);
  if (r.attention_dp) {
    e.memory.weight_bytes = r.attention_dp->weight_bytes();
    e.memory.activation_bytes =
        static_cast<double>(workspace_tokens) * r.attention_dp->workspace_bytes_per_token();
  }
  if (c.draft_tokens > 0) {  // the draft's weights and KV cache beside the target's
    const s::ServingScenario& m = scenario_.scenario();
    r.speculative = std::make_unique<SpeculativeDecoder>(
        in, m.deployment().speculative_decoding(),
        scenario_.draft_model ? &scenario_.draft_model->transformer() : nullptr, c.draft_tokens,
        traffic_.seed());
    e.memory.weight_bytes += r.speculative->weight_bytes();
    e.memory.kv_bytes_per_token += r.speculative->kv_bytes_per_token();
  }
  const s::Scheduler& sc = c.scheduler;
  ReplicaSettings& set = r.settings;
  set.batching = sc.batching();
  set.capacity_policy = sc.has_capacity_policy()       ? sc.capacity_policy()
                        : serving_.has_capacity_policy() ? serving_.capacity_policy()
                                                         : s::MAX_UTILIZATION;
  set.max_batch = sc.max_batch_size();
  set.max_tokens = sc.max_tokens_per_iteration();
  set.chunked_prefill = sc.chunked_prefill();
  set.block_tokens = sc.kv_block_tokens();
  set.kv_bytes_per_token = e.memory.kv_bytes_per_token;
  set.activation_bytes_per_token = timing.largest_stage().activation_bytes_per_token;
  set.attention_window = timing.largest_stage().window_tokens;
  set.attention_window_chunked = timing.largest_stage().window_chunked;
  set.batch_wait = Picoseconds::from_seconds(sc.batch_wait_ms() * 1e-3);
  const s::ServingScenario& scenario = scenario_.scenario();
  if (scenario.has_traffic()) set.beam_width = beam_width(traffic_);
  // TensorRT-LLM reuses blocks for single-beam requests only (check_beam_widths in beam_search.h):
  // the runtime's default stays off under beam search.
  e.prefix_caching = set.prefix_caching =
      set.batching == s::CONTINUOUS && set.beam_width == 1 &&
      (sc.prefix_caching().has_enabled() ? sc.prefix_caching().enabled()
                                         : serving_.prefix_caching());
  set.speculative = r.speculative.get();
  // A cyclic cache holds a sequence's window of tokens when it serves the target model alone, one
  // beam (TensorRT-LLM's sliding window does not work with beam search: docs/source/features/
  // long-sequence.md @1ec63b44; a speculative draft's layers attend densely).
  if (set.batching == s::CONTINUOUS && set.beam_width == 1 && !r.speculative) {
    set.kv_window_tokens =
        cyclic_kv_window_tokens(serving_.cyclic_kv_cache(), timing.largest_stage());
  }
  if (!c.attention_data_parallel) set.graphs = CudaGraphPadding(std::move(graph_sizes));
  if (set.batching == s::STATIC) {
    set.static_free_bytes = e.memory.capacity_bytes - e.memory.weight_bytes -
                            e.memory.runtime_bytes;
  } else {
    e.kv_blocks = set.kv_blocks =
        kv_cache_blocks(e.memory, sc.kv_cache_memory_fraction(), sc.kv_block_tokens());
  }
  // Compressed sparse attention: the entries its indexer selects, and its windows' blocks.
  const InferenceShape& largest = timing.largest_stage();
  if (largest.compressed_entry_bytes > 0) {
    set.index_topk = scenario_.model->transformer().compressed_sparse_attention().index_topk();
    set.sequence_blocks = static_cast<int64_t>(std::ceil(
        largest.kv_bytes_per_sequence / (e.memory.kv_bytes_per_token * set.block_tokens)));
  }
  return r;
}

const std::vector<Request>& ServingEvaluator::requests(double rate_scale) {
  if (generated_.size() > 4) generated_.clear();  // a rate search tries many scales once each
  auto& slot = generated_[rate_scale];
  if (slot.empty()) {
    slot = traffic_.has_trace_file() ? scale_trace(scenario_.trace, rate_scale)
                                     : generate_requests(traffic_, rate_scale);
  }
  return slot;
}

std::string ServingEvaluator::memory_problem(const ServingConfiguration& c, const Replica& r,
                                            int64_t longest) const {
  const ServingEvaluation& e = r.evaluation;
  if (e.memory.free_bytes() < 0) {
    return "GPU memory (OOM by " + gib_short(-e.memory.free_bytes()) + " GiB)";
  }
  const int beams = r.settings.beam_width;
  if (c.scheduler.batching() == s::STATIC) {
    return r.settings.static_free_bytes < longest * e.memory.kv_bytes_per_token * beams
               ? "KV cache (one longest request does not fit)"
               : "";
  }
  // The longest request's blocks, its beams sharing the longest prompt's full blocks (in a
  // cyclic cache, the window's tokens at most; under compressed sparse attention, with its
  // windows' blocks).
  const int block = c.scheduler.kv_block_tokens();
  const int window = r.settings.kv_window_tokens;
  const int64_t needed =
      beams > 1    ? beam_kv_blocks(longest_prompt_, longest, block, beams) * block
      : window > 0 ? std::min<int64_t>(longest, window)
                   : longest + r.settings.sequence_blocks * block;
  if (e.kv_blocks * block < needed) {
    return "KV cache (" + std::to_string(e.kv_blocks * block) +
           " tokens, the longest request needs " + std::to_string(needed) +
           (beams == 1 ? "" : " for its " + std::to_string(beams) + " beams") + ")";
  }
  return "";
}

ServingEvaluation ServingEvaluator::evaluate_disaggregated(const ServingConfiguration& c,
                                                           double rate_scale) {
  // Both pools reserve the token budget's workspace: a decode replica recomputes a preempted
  // request's prompt in it.
  const int64_t budget = c.scheduler.max_tokens_per_iteration();
  Replica prefill = build(c.pool(true), budget, budget, /*fake_weights=*/false);
  Replica decode = build(c.pool(false), budget, budget, /*fake_weights=*/false);
  // Its pools never cache prefixes (load_serving_scenario rejects shared prefixes with caching on).
  prefill.settings.prefix_caching = decode.settings.prefix_caching = false;
  decode.evaluation.prefix_caching = false;
  ServingEvaluation e = decode.evaluation;
  e.prefill_memory = prefill.evaluation.memory;
  e.prefill_kv_blocks = prefill.evaluation.kv_blocks;
  e.calibrated = e.calibrated && prefill.evaluation.calibrated;
  if (e.error.empty()) e.error = prefill.evaluation.error;
  const Topology* links = e.error.empty() ? topology(c, &e.error) : nullptr;
  if (!e.error.empty()) return e;
  const std::string prefill_short = memory_problem(c, prefill, longest_prompt_);
  const std::string decode_short = memory_problem(c, decode, longest_request_);
  if (!prefill_short.empty()) e.out_of_memory = "prefill pool: " + prefill_short;
  if (!decode_short.empty()) e.out_of_memory = "decode pool: " + decode_short;
  if (!e.out_of_memory.empty()) return e;
  DeploymentPlacement placement = deployment_placement(c);
  if (c.split_nodes()) {  // the nodes between pools: node i is endpoint i, the prefill pool's first
    placement.prefill = in_nodes(placement.prefill, c.prefill->instance->gpu_count(), 0);
    placement.decode = in_nodes(placement.decode, c.instance->gpu_count(), placement.prefill_nodes);
  }
  const double kv_bytes_per_token =
      inference_shape(scenario_.model->transformer(), e.formats, 1, 1, 0).kv_bytes_per_token;
  serve(c, rate_scale, [&](RequestSource* source) {
    return simulate_disaggregated(source, {prefill.model.get(), prefill.settings, placement.prefill},
                                  {decode.model.get(), decode.settings, placement.decode},
                                  kv_bytes_per_token, links);
  }, &e);
  return e;
}

void ServingEvaluator::serve(const ServingConfiguration& c, double rate_scale,
                             const std::function<ServingOutcome(RequestSource*)>& simulate,
                             ServingEvaluation* e) {
  const s::Traffic& t = traffic_;
  std::optional<ClosedLoopClient> client;
  std::optional<OpenLoopArrivals> arrivals;
  RequestSource* source = nullptr;
  if (t.has_closed_loop()) {
    source = &client.emplace(t, c.concurrency);
  } else {
    source = &arrivals.emplace(&requests(rate_scale));
  }
  const ServingOutcome outcome = simulate(source);
  const std::vector<Request>& served = source->requests();
  if (client && client->cut_short()) {
    e->error = "the closed loop of deployment " + std::to_string(c.index) +
               (static_cast<int64_t>(served.size()) == kMaxRequests
                    ? " would send more than " + format_number(kMaxRequests) +
                          " (2^24) requests, the most a simulation may hold: shorten "
                          "traffic.duration_s or give closed_loop.requests"
                    : " would send requests after " + format_number(kMaxTraffic_s) +
                          " s (2 days), the longest a simulation may span: lower "
                          "closed_loop.requests or think_time_s");
    return;
  }
  if (std::none_of(served.begin(), served.end(),
                   [&](const Request& r) { return r.arrival_s >= t.warmup_s(); })) {
    e->error = "no request of deployment " + std::to_string(c.index) +
               " arrives after traffic.warmup_s (" + format_number(t.warmup_s()) +
               " s): lengthen traffic.duration_s or shorten the warm-up";
    return;
  }
  // The requests the batches held at once (falls_behind): each replica's most, of either pool,
  // per GPU under attention data parallelism. Not max_batch_size per batch: at 2e9 a KV cache
  // holding a few hundred let 2,300 queued requests read as a miss of the SLO, their p99 TTFT of
  // 593 s only the queue's length.
  e->metrics = measure_serving(served, outcome, t.warmup_s(),
                               static_cast<double>(outcome.peak_batched), t.has_rate_per_s());
  if (scenario_.scenario().has_slo()) {
    e->slo_violation = slo_violation(scenario_.scenario().slo(), *e->metrics);
  }
}

ServingEvaluation ServingEvaluator::evaluate(const ServingConfiguration& c, double rate_scale) {
  if (c.prefill) return evaluate_disaggregated(c, rate_scale);
  const bool is_static = c.scheduler.batching() == s::STATIC;
  const int64_t tokens = is_static ? static_cast<int64_t>(c.scheduler.max_batch_size()) *
                                         longest_request_
                                   : c.scheduler.max_tokens_per_iteration();
  Replica r = build(c, tokens, is_static ? 0 : tokens, /*fake_weights=*/false);
  ServingEvaluation e = r.evaluation;
  if (!e.error.empty()) return e;
  e.out_of_memory = memory_problem(c, r, longest_request_ + c.draft_tokens);
  if (!e.out_of_memory.empty()) return e;
  serve(c, rate_scale, [&](RequestSource* source) {
    // The cache-aware router comes with the cache: caching off, the plain balancer.
    if (r.attention_dp) {
      return simulate_attention_data_parallel(source, *r.attention_dp, r.settings, c.replicas);
    }
    const bool aware =
        e.prefix_caching && c.scheduler.prefix_caching().routing() == s::PREFIX_AWARE;
    return simulate_serving(source, *r.model, r.settings, c.replicas,
                            aware ? s::PREFIX_AWARE : s::LEAST_LOADED);
  }, &e);
  return e;
}

BenchmarkResult ServingEvaluator::benchmark(const ServingConfiguration& c,
                                            const s::BatchBenchmark& run) {
  CLUSTERSIM_CHECK(c.scheduler.batching() == s::STATIC, "a benchmark without static batching");
  const int64_t batch = run.batch_size();
  // gptSessionBenchmark runs engines built with fake weights (BatchBenchmark).
  Replica r = build(c, batch * run.input_tokens(), 0, /*fake_weights=*/true);
  CLUSTERSIM_CHECK(r.evaluation.error.empty(), "a benchmark replica that cannot be built");
  r.settings.beam_width = beam_width(run);
  BenchmarkResult result;
  result.capacity_bytes = r.evaluation.memory.capacity_bytes;
  result.peak_memory_bytes =
      static_batch_peak_bytes(r.model->largest_stage(), r.runtime_bytes, batch, run.input_tokens(),
                              run.output_tokens(), r.settings.beam_width);
  result.fits = result.peak_memory_bytes <= result.capacity_bytes;
  if (!result.fits) return result;
  std::vector<Request> requests(batch, Request{0, run.input_tokens(), run.output_tokens()});
  r.settings.max_batch = static_cast<int>(batch);
  r.settings.static_free_bytes = result.capacity_bytes;  // the batch is known to fit
  const ServingOutcome outcome = simulate_serving(requests, *r.model, r.settings, 1);
  const RequestRecord& record = outcome.records[0];
  result.ttft_ms = record.first_token.seconds() * 1e3;
  if (run.output_tokens() > 1) {
    result.tpot_ms = (record.finish - record.first_token).seconds() * 1e3 /
                     (run.output_tokens() - 1);
  }
  result.output_tokens_per_s =
      static_cast<double>(batch * run.output_tokens()) / record.finish.seconds();
  return result;
}

bool meets_objectives(const ServingEvaluation& e) {
  return e.metrics && !e.metrics->overloaded && e.slo_violation.empty();
}

double max_rate_scale_limit(const s::Traffic& traffic) {
  // Up to 64 times the rate, and no more requests than a simulation may hold (a trace keeps its
  // count); the search doubles from 1.
  const double ceiling =
      traffic.has_trace_file() ? 64 : std::min(64.0, kMaxRequests / expected_requests(traffic));
  double limit = 1;
  while (2 * limit <= ceiling) limit *= 2;
  return limit;
}

double ServingEvaluator::max_rate_scale(const ServingConfiguration& c) {
  CLUSTERSIM_CHECK(!traffic_.has_closed_loop(), "a rate search on closed-loop traffic");
  return search_max_rate_scale(
      [&](double scale) { return meets_objectives(evaluate(c, scale)); },
      max_rate_scale_limit(traffic_));
}

double search_max_rate_scale(const std::function<bool(double)>& meets, double limit) {
  double low = 0, high = 1;
  if (meets(1)) {
    low = 1;
    for (high = 2; high <= limit && meets(high); high *= 2) low = high;
    if (high > limit) return low;
  } else {
    for (high = 1; high > 0.05 && !meets(high / 2); high /= 2) {
    }
    if (high <= 0.05) return 0;
    low = high / 2;
  }
  while (high - low > 0.02 * low) {
    const double mid = (low + high) / 2;
    (meets(mid) ? low : high) = mid;
  }
  return low;
}

}  // namespace clustersim
