// Loading and resolving a serving scenario.
#include "sim/serve/serving_scenario.h"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <limits>
#include <regex>

#include "sim/cost/cost_checks.h"
#include "sim/hw/device_memory.h"
#include "sim/io/axis_override.h"
#include "sim/io/catalog_reference.h"
#include "sim/io/degree_checks.h"
#include "sim/io/field_checker.h"
#include "sim/io/scenario_loader.h"
#include "sim/serve/beam_search.h"
#include "sim/serve/closed_loop.h"
#include "sim/serve/compressed_attention_checks.h"
#include "sim/serve/attention_dp_checks.h"
#include "sim/serve/cuda_graph_checks.h"
#include "sim/serve/expert_parallel_checks.h"
#include "sim/serve/serving_checks.h"
#include "sim/serve/shared_prefix.h"
#include "sim/serve/speculative_checks.h"
#include "sim/util/number_format.h"
#include "sim/util/units.h"

namespace clustersim {
namespace {

namespace s = schema;

constexpr char kDefaultRuntime[] = "tensorrt-llm";

// Each listed degree must split the model; tensor parallelism must stay inside every candidate's
// node.
void check_degrees(const FieldChecker& owner, const char* field, const LoadedServingScenario& l,
                   bool tensor, const std::vector<const s::InstanceType*>& instances) {
  const google::protobuf::FieldDescriptor* d =
      owner.message().GetDescriptor()->FindFieldByName(field);
  const int count = d->is_repeated() ? owner.size(field) : (owner.has(field) ? 1 : 0);
  for (int i = 0; i < count; ++i) {
    const int index = d->is_repeated() ? i : -1;
    const double value = owner.number(field, index);
    if (value < 1) continue;  // reported by at_least
    const int degree = static_cast<int>(value);
    std::string why = tensor ? serving_tensor_parallel_problem(l.model->transformer(), degree)
                             : pipeline_parallel_problem(degree, l.model);
    for (const s::InstanceType* instance : instances) {
      if (why.empty() && tensor && degree > instance->gpu_count()) {
        why = std::to_string(degree) + " is more than the " +
              std::to_string(instance->gpu_count()) + " GPUs of a \"" + instance->name() +
              "\" node (tensor parallelism stays inside a node)";
      }
    }
    if (!why.empty()) owner.error(field, why, index);
  }
}

void resolve_instances(const FieldChecker& root, const Catalog& catalog,
                       LoadedServingScenario* loaded) {
  const s::ServingScenario& m = loaded->scenario();
  const bool swept = m.sweep().instance_size() > 0;
  const FieldChecker owner = swept ? root.child("sweep") : root.child("deployment");
  if (!swept && !owner.require("instance")) return;
  const int count = swept ? m.sweep().instance_size() : 1;
  for (int i = 0; i < count; ++i) {
    const int index = swept ? i : -1;
    const std::string& name = swept ? m.sweep().instance(i) : m.deployment().instance();
    const s::InstanceType* instance =
        resolve_gpu_instance(owner, "instance", index, name, catalog, "it cannot serve");
    if (instance == nullptr) continue;
    loaded->instances.push_back(instance);
  }
  // The instance the axis replaces is still a name to resolve: "nope" beside it loaded unread.
  if (swept && m.deployment().has_instance()) {
    resolve_gpu_instance(root.child("deployment"), "instance", -1, m.deployment().instance(),
                         catalog, "it cannot serve");
  }
}

// The deployment's quantization must run on every candidate's GPU; a swept one on at least one
// (the others prune it, serving_problem).
void check_quantizations(const FieldChecker& root, const Catalog& catalog,
                         const LoadedServingScenario& loaded) {
  const s::ServingScenario& m = loaded.scenario();
  if (m.sweep().quantization_size() == 0) {
    if (!m.deployment().has_quantization()) return;
    for (const s::InstanceType* instance : loaded.instances) {
      check_quantization(root.child("deployment").child("quantization"), &catalog.gpu_of(*instance),
                         instance->name());
    }
    return;
  }
  // The quantization the axis replaces is checked as one of its values is.
  if (m.deployment().has_quantization()) {
    check_quantization(root.child("deployment").child("quantization"), nullptr, "");
  }
  for (int i = 0; i < m.sweep().quantization_size(); ++i) {
    const FieldChecker q = root.child("sweep").child("quantization", i);
    check_quantization(q, nullptr, "");
    std::string problem;
    const bool runs_somewhere =
        loaded.instances.empty() ||
        std::any_of(loaded.instances.begin(), loaded.instances.end(), [&](auto* instance) {
          problem = quantization_problem(m.sweep().quantization(i), catalog.gpu_of(*instance));
          return problem.empty();
        });
    if (!runs_somewhere) q.error_here("runs on none of the candidate instances: " + problem);
  }
}

void check_deployment(const FieldChecker& root, const Catalog& catalog,
                      LoadedServingScenario* loaded) {
  const s::ServingScenario& m = loaded->scenario();
  if (!root.require("deployment")) return;
  const FieldChecker deployment = root.child("deployment");
  for (const char* f : {"tensor_parallel", "pipeline_parallel", "replicas"}) {
    deployment.at_least(f, 1);
  }
  resolve_instances(root, catalog, loaded);
  if (loaded->model != nullptr && loaded->model->has_transformer()) {
    check_degrees(deployment, "tensor_parallel", *loaded, true, loaded->instances);
    check_degrees(deployment, "pipeline_parallel", *loaded, false, loaded->instances);
    const FieldChecker sweep = root.child("sweep");
    if (m.has_sweep()) {
      check_degrees(sweep, "tensor_parallel", *loaded, true, loaded->instances);
      check_degrees(sweep, "pipeline_parallel", *loaded, false, loaded->instances);
    }
  }
  if (m.deployment().has_runtime() || catalog.serving_runtimes().find(kDefaultRuntime) == nullptr) {
    resolve_reference(deployment, "runtime", -1, m.deployment().has_runtime()
                                                     ? m.deployment().runtime()
                                                     : std::string(kDefaultRuntime),
                      catalog.serving_runtimes(), "serving runtime");
  }
  check_quantizations(root, catalog, *loaded);
}

// A decode replica must hold its weights and one longest request's KV cache on every candidate.
void check_decode_memory(const FieldChecker& decode, const Catalog& catalog,
                         const LoadedServingScenario& l,
                         const std::vector<const s::InstanceType*>& instances) {
  const auto& pool = static_cast<const s::ServingPool&>(decode.message());
  const int tp = pool.has_tensor_parallel() ? pool.tensor_parallel() : 1;
  const int pp = pool.has_pipeline_parallel() ? pool.pipeline_parallel() : 1;
  const s::Transformer& t = l.model->transformer();
  const int64_t tokens = longest_request_tokens(l);
  if (tp < 1 || pp < 1 || tokens == 0 || !serving_tensor_parallel_problem(t, tp).empty() ||
      !pipeline_parallel_problem(pp, l.model).empty()) {
    return;  // reported by the degree checks
  }
  const s::Quantization& q = l.scenario().deployment().quantization();
  for (const s::InstanceType* instance : instances) {
    const s::Gpu& gpu = catalog.gpu_of(*instance);
    if (tp > instance->gpu_count() || !quantization_problem(q, gpu).empty()) continue;
    const TensorFormats formats = resolve_formats(q, gpu);
    const double capacity = labelled_gpu_bytes(*instance, gpu);
    for (int stage = 0; stage < pp; ++stage) {
      const InferenceShape shape = inference_shape(t, formats, tp, pp, stage);
      const double kv = tokens * shape.kv_bytes_per_token;
      if (shape.weight_bytes + kv <= capacity) continue;
      decode.error_here("a decode replica of TP " + std::to_string(tp) + " PP " +
                        std::to_string(pp) + " on \"" + instance->name() +
                        "\" cannot hold one request's KV cache: " +
                        format_fixed(shape.weight_bytes / kBytesPerGibibyte, 1) +
                        " GiB of weights + " + format_fixed(kv / kBytesPerGibibyte, 1) +
                        " GiB for " + std::to_string(tokens) + " tokens > " +
                        format_fixed(capacity / kBytesPerGibibyte, 1) + " GiB per GPU");
      break;
    }
  }
}

// A pool's own instance type, resolved, with GPUs and the deployment's quantization; else null.
const s::InstanceType* pool_instance(const FieldChecker& pool, const Catalog& catalog,
                                     const s::Quantization& quantization) {
  const auto& m = static_cast<const s::ServingPool&>(pool.message());
  if (!m.has_instance()) return nullptr;
  const s::InstanceType* instance =
      resolve_gpu_instance(pool, "instance", -1, m.instance(), catalog, "it cannot serve");
  if (instance == nullptr) return nullptr;
  const std::string why = quantization_problem(quantization, catalog.gpu_of(*instance));
  if (!why.empty()) {
    pool.error("instance", why);
    return nullptr;
  }
  return instance;
}

// Disaggregation: two pools of at least one replica each, degrees that split the model, a decode
// pool that holds one request, continuous batching only; pool-size axes only with it.
void check_disaggregation(const FieldChecker& root, const Catalog& catalog,
                          LoadedServingScenario* l) {
  const s::ServingScenario& m = l->scenario();
  const FieldChecker sweep = root.child("sweep");
  if (!m.deployment().has_disaggregation()) {
    for (const char* f : {"prefill_replicas", "decode_replicas"}) {
      if (sweep.size(f) > 0) {
        sweep.error(f, "sizes the pools of a disaggregated deployment: set "
                       "deployment.disaggregation");
      }
    }
    return;
  }
  sweep.at_least("prefill_replicas", 1);
  sweep.at_least("decode_replicas", 1);
  const FieldChecker deployment = root.child("deployment");
  const FieldChecker disaggregation = deployment.child("disaggregation");
  for (const char* name : {"prefill", "decode"}) {
    if (!disaggregation.require(name)) continue;
    const FieldChecker pool = disaggregation.child(name);
    for (const char* f : {"tensor_parallel", "pipeline_parallel", "replicas"}) {
      pool.at_least(f, 1);
    }
    const bool decode = std::string(name) == "decode";
    const s::InstanceType* own = pool_instance(pool, catalog, m.deployment().quantization());
    (decode ? l->decode_instance : l->prefill_instance) = own;
    const std::vector<const s::InstanceType*> instances =
        own ? std::vector<const s::InstanceType*>{own} : l->instances;
    if (l->model == nullptr) continue;
    check_degrees(pool, "tensor_parallel", *l, true, instances);
    check_degrees(pool, "pipeline_parallel", *l, false, instances);
    if (decode) check_decode_memory(pool, catalog, *l, instances);
  }
  if (m.has_autoscaling()) {
    root.child("autoscaling").error_here("scales colocated replicas: not simulated with "
                                         "deployment.disaggregation");
  }
  const char* why = "a disaggregated deployment hands each request from its prefill replica to a "
                    "decode replica at its first token: it needs CONTINUOUS batching (a static "
                    "batch keeps its requests on one replica from prompt to last token)";
  refuse_static_batching(root, why);
}

// The largest value a deployment field takes: its sweep axis' largest when the axis is given, else
// the field's own (absent: 1).
int64_t largest(const google::protobuf::RepeatedField<int32_t>& axis, bool has, int32_t value) {
  const int32_t v = axis.empty() ? (has ? value : 1) : *std::max_element(axis.begin(), axis.end());
  return std::max(v, 1);  // below 1: reported by at_least
}

// Every deployment must have at most kMaxConfigurationGpus GPUs: its largest replicas x TP x PP
// (both pools' when disaggregated).
void check_deployment_size(const FieldChecker& root) {
  const auto& m = static_cast<const s::ServingScenario&>(root.message());
  const s::Deployment& d = m.deployment();
  const s::ServingSweep& w = m.sweep();
  const std::string limit =
      ", more than the " + std::to_string(kMaxConfigurationGpus) + " a configuration may have";
  const int64_t gpus =
      largest(w.replicas(), d.has_replicas(), d.replicas()) *
      largest(w.tensor_parallel(), d.has_tensor_parallel(), d.tensor_parallel()) *
      largest(w.pipeline_parallel(), d.has_pipeline_parallel(), d.pipeline_parallel());
  if (gpus > kMaxConfigurationGpus) {
    (w.replicas_size() > 0 ? root.child("sweep") : root.child("deployment"))
        .error("replicas", "the largest deployment has " + std::to_string(gpus) +
                               " GPUs (replicas x tensor_parallel x pipeline_parallel)" + limit);
  }
  if (!d.has_disaggregation()) return;
  const auto pool_gpus = [](const s::ServingPool& p,
                            const google::protobuf::RepeatedField<int32_t>& axis) {
    return largest(axis, p.has_replicas(), p.replicas()) *
           largest({}, p.has_tensor_parallel(), p.tensor_parallel()) *
           largest({}, p.has_pipeline_parallel(), p.pipeline_parallel());
  };
  const int64_t pools = pool_gpus(d.disaggregation().prefill(), w.prefill_replicas()) +
                        pool_gpus(d.disaggregation().decode(), w.decode_replicas());
  if (pools > kMaxConfigurationGpus) {
    root.child("deployment").error("disaggregation", "the largest prefill and decode pools have " +
                                                         std::to_string(pools) + " GPUs" + limit);
  }
}

// The deployments the sweep's axes make (ServingSpace's product), in floating point: the axes of
// a file can multiply past 2^63.
double deployment_count(const s::ServingScenario& m) {
  const s::ServingSweep& w = m.sweep();
  const auto n = [](int size) { return std::max(1.0, static_cast<double>(size)); };
  const bool disaggregated = m.deployment().has_disaggregation();
  const double shapes =
      (!disaggregated || w.replicas_size() > 0
           ? n(w.tensor_parallel_size()) * n(w.pipeline_parallel_size()) * n(w.replicas_size())
           : 0) +
      (disaggregated ? n(w.prefill_replicas_size()) * n(w.decode_replicas_size()) : 0);
  return n(w.instance_size()) * shapes * n(w.expert_parallel_size()) *
         n(w.attention_data_parallel_size()) * n(w.quantization_size()) *
         n(w.batching_size()) * n(w.max_batch_size_size()) * n(w.max_tokens_per_iteration_size()) *
         n(w.prefix_caching_size()) * n(w.draft_tokens_size()) *
         (m.traffic().has_closed_loop() ? n(w.concurrency_size()) : 1);
}

// A serve run holds every deployment's rows for its ranking (about 4 KB each): at most
// kMaxServingDeployments.
void check_sweep_size(const FieldChecker& root) {
  const double count = deployment_count(static_cast<const s::ServingScenario&>(root.message()));
  if (count <= kMaxServingDeployments) return;
  root.child("sweep").error_here("makes " + format_significant(count, 3) +
                                 " deployments (the product of its axes), more than the " +
                                 std::to_string(kMaxServingDeployments) +
                                 " (2^20) a serve run may hold: shorten its axes");
}

// Warns of each value of the deployment or the closed loop that the sweep's axis for it replaces
// without simulating it (warn_if_replaced_by_axis).
void warn_replaced_by_serving_axes(const FieldChecker& root) {
  const FieldChecker sweep = root.child("sweep");
  const FieldChecker deployment = root.child("deployment");
  for (const char* field : {"instance", "tensor_parallel", "pipeline_parallel", "replicas",
                            "quantization", "expert_parallel", "attention_data_parallel"}) {
    warn_if_replaced_by_axis(deployment, field, sweep, field);
  }
  const FieldChecker scheduler = deployment.child("scheduler");
  for (const char* field : {"batching", "max_batch_size", "max_tokens_per_iteration"}) {
    warn_if_replaced_by_axis(scheduler, field, sweep, field);
  }
  warn_if_replaced_by_axis(scheduler.child("prefix_caching"), "enabled", sweep, "prefix_caching");
  const FieldChecker disaggregation = deployment.child("disaggregation");
  warn_if_replaced_by_axis(disaggregation.child("prefill"), "replicas", sweep, "prefill_replicas");
  warn_if_replaced_by_axis(disaggregation.child("decode"), "replicas", sweep, "decode_replicas");
  warn_if_replaced_by_axis(deployment.child("speculative_decoding"), "draft_tokens", sweep,
                           "draft_tokens");
  warn_if_replaced_by_axis(root.child("traffic").child("closed_loop"), "concurrency", sweep,
                           "concurrency");
}

// The longest sequence the model takes (its max_sequence_length); unbounded without a transformer.
int max_context_tokens(const LoadedServingScenario& loaded) {
  return loaded.model && loaded.model->has_transformer()
             ? loaded.model->transformer().max_sequence_length()
             : std::numeric_limits<int>::max();
}

void check_sweep_and_scheduler(const FieldChecker& root, const LoadedServingScenario& loaded) {
  const s::ServingScenario& m = loaded.scenario();
  const int prompt = longest_prompt_tokens(loaded);
  if (m.deployment().has_scheduler()) {
    check_scheduler(root.child("deployment").child("scheduler"), prompt,
                    max_context_tokens(loaded));
  }
  if (!m.has_sweep()) return;
  const FieldChecker sweep = root.child("sweep");
  for (const char* f : {"tensor_parallel", "pipeline_parallel", "replicas", "max_batch_size",
                        "max_tokens_per_iteration"}) {
    sweep.at_least(f, 1);
  }
  const bool chunked = m.deployment().scheduler().chunked_prefill();
  for (int i = 0; i < m.sweep().max_tokens_per_iteration_size(); ++i) {
    if (!chunked && m.sweep().max_tokens_per_iteration(i) < prompt) {
      sweep.error("max_tokens_per_iteration",
                  "a prompt of " + std::to_string(prompt) + " tokens exceeds this budget: raise "
                  "it or set deployment.scheduler.chunked_prefill", i);
    }
  }
  for (int i = 0; i < m.sweep().batching_size(); ++i) {
    if (m.sweep().batching(i) == s::BATCHING_UNSPECIFIED) {
      sweep.error("batching", "must be STATIC or CONTINUOUS", i);
    }
  }
  if (m.sweep().prefix_caching_size() > 0 && !has_shared_prefixes(loaded)) {
    sweep.error("prefix_caching", "compares prefix caching off and on, but no request carries a "
                                  "shared prefix: give traffic.shared_prefix (or a trace's "
                                  "prefix_id,prefix_tokens columns)");
  }
}

// Prefix caching is not simulated on disaggregated pools: an error when it would apply (shared
// prefixes, and caching on by the scheduler, the runtime's default or the sweep).
void check_disaggregated_prefix_caching(const FieldChecker& root, const Catalog& catalog,
                                        const LoadedServingScenario& loaded) {
  const s::ServingScenario& m = loaded.scenario();
  if (!m.deployment().has_disaggregation() || !has_shared_prefixes(loaded)) return;
  const s::ServingRuntime* runtime = serving_runtime(m, catalog);
  const s::Scheduler& sc = m.deployment().scheduler();
  const bool on = sc.prefix_caching().has_enabled()
                      ? sc.prefix_caching().enabled()
                      : runtime != nullptr && runtime->prefix_caching();
  const bool swept_on = std::find(m.sweep().prefix_caching().begin(),
                                  m.sweep().prefix_caching().end(),
                                  true) != m.sweep().prefix_caching().end();
  if (!on && !swept_on) return;
  root.child("deployment").error("disaggregation",
                                 "prefix caching is not simulated on disaggregated pools and "
                                 "this traffic carries shared prefixes: set "
                                 "deployment.scheduler.prefix_caching.enabled false (the "
                                 "runtime's default is " +
                                 std::string(runtime && runtime->prefix_caching() ? "on" : "off") +
                                 ")");
}

// A closed-loop client's users: its concurrency or the sweep's levels; concurrency levels and
// rate-based autoscaling each need the other kind of traffic than they are given.
void check_concurrency(const FieldChecker& root) {
  const s::ServingScenario& m = static_cast<const s::ServingScenario&>(root.message());
  const FieldChecker sweep = root.child("sweep");
  if (!m.traffic().has_closed_loop()) {
    if (m.sweep().concurrency_size() > 0) {
      sweep.error("concurrency", "sets the users of a closed-loop client: give "
                                 "traffic.closed_loop");
    }
    return;
  }
  sweep.in_range("concurrency", 1, kMaxClosedLoopUsers);
  if (m.sweep().concurrency_size() == 0) {
    root.child("traffic").child("closed_loop").require("concurrency");
  }
  if (m.has_autoscaling()) {
    root.child("autoscaling").error_here("scales replicas to hourly request rates: it needs "
                                         "open-loop traffic (rate_per_s, bursts or trace_file), "
                                         "not closed_loop");
  }
}

void check_autoscaling(const FieldChecker& autoscaling) {
  autoscaling.in_range("baseline_replicas", 0, kMaxConfigurationGpus);
  if (autoscaling.size("hourly_rate_per_s") != 24) {
    autoscaling.error("hourly_rate_per_s", "needs 24 values (one per hour), got " +
                                               std::to_string(autoscaling.size("hourly_rate_per_s")));
  }
  // As many requests a second as a simulation may hold (2^24): a rate of 1e308 was refused only
  // when `serve` planned the hour's replicas, with no line to fix.
  autoscaling.in_range("hourly_rate_per_s", 0, kMaxRequests);
  const auto& m = static_cast<const s::Autoscaling&>(autoscaling.message());
  // Written as BILLING_MODE_UNSPECIFIED, either left the day unpriced with no line to fix.
  for (const char* billing : {"baseline_billing", "burst_billing"}) {
    if (autoscaling.has(billing)) autoscaling.require_enum(billing);
  }
  if (m.baseline_billing() == s::SPOT) {
    autoscaling.error("baseline_billing", "a baseline must not be preemptible: not SPOT");
  }
  // A subscription's hourly price holds for a month or a year of every hour: burst replicas
  // bought at it for an hour priced the peaks at a fraction of what they commit to.
  if (m.burst_billing() == s::SUBSCRIPTION_MONTHLY || m.burst_billing() == s::SUBSCRIPTION_YEARLY) {
    autoscaling.error("burst_billing",
                      "burst replicas are bought for an hour: ON_DEMAND or SPOT, not " +
                          s::BillingMode_Name(m.burst_billing()) +
                          " (committed for every hour of a month or a year)");
  }
}

// Benchmark runs are static batches (gptSessionBenchmark) on the one deployment given: no sweep of
// deployments, and static batching.
void check_benchmark_deployment(const FieldChecker& root, const s::ServingScenario& m) {
  if (m.has_sweep()) root.error("sweep", "benchmark runs time the one deployment given: no sweep");
  if (m.deployment().scheduler().batching() == s::STATIC) return;
  const std::string why = "benchmark runs are static batches: needs batching STATIC";
  const FieldChecker deployment = root.child("deployment");
  if (m.deployment().has_scheduler()) {
    deployment.child("scheduler").error("batching", why);
  } else {
    deployment.error("scheduler", why);
  }
}

void check_traffic_or_benchmarks(const FieldChecker& root, LoadedServingScenario* loaded) {
  const s::ServingScenario& m = loaded->scenario();
  const int context = max_context_tokens(*loaded);
  if (m.has_traffic() == (m.benchmark_size() > 0)) {
    root.error_here(m.has_traffic() ? "give traffic or benchmark runs, not both"
                                    : "needs traffic (to size a deployment) or benchmark runs "
                                      "(to compare with published figures)");
  }
  for (int i = 0; i < m.benchmark_size(); ++i) check_benchmark(root.child("benchmark", i), context);
  if (m.benchmark_size() > 0) check_benchmark_deployment(root, m);
  if (!m.has_traffic()) return;
  const FieldChecker traffic = root.child("traffic");
  check_traffic(traffic, context);
  if (m.traffic().has_trace_file()) {
    const std::filesystem::path dir = std::filesystem::path(loaded->file->path).parent_path();
    const std::string path = (dir / m.traffic().trace_file()).string();
    Diagnostics trace;
    read_trace(path, context, &loaded->trace, &trace);
    // A file that cannot be read (missing, a directory) is reported where the scenario names it;
    // a bad line at its own line of the trace.
    for (const Diagnostic& d : trace.all()) {
      if (d.where.line == 0) {
        traffic.error("trace_file", path + ": " + d.message);
      } else {
        root.diagnostics()->add_error(d.where, d.field_path, d.message);
      }
    }
    // Autoscaling sizes each hour by the trace's rate: one arriving at 0 s has none, and the plan
    // said "one replica meets the objectives at no rate".
    const std::string no_rate = trace_without_rate(loaded->trace);
    if (m.has_autoscaling() && trace.error_count() == 0 && !no_rate.empty()) {
      traffic.error("trace_file", path + ": " + no_rate + " for autoscaling to scale");
    }
    // Requests arriving before the warm-up are not measured. A warm-up past the trace's last
    // arrival left every deployment to fail with "lengthen traffic.duration_s", a field a trace
    // does not take.
    if (trace.error_count() == 0 && !loaded->trace.empty() &&
        m.traffic().warmup_s() > loaded->trace.back().arrival_s) {
      traffic.error("warmup_s", "leaves no request of the trace to measure (its last arrives at " +
                                    format_number(loaded->trace.back().arrival_s) +
                                    " s): shorten the warm-up");
    }
  }
}

}  // namespace

bool has_shared_prefixes(const LoadedServingScenario& loaded) {
  return loaded.scenario().traffic().has_shared_prefix() ||
         std::any_of(loaded.trace.begin(), loaded.trace.end(),
                     [](const Request& r) { return r.prefix >= 0; });
}

int longest_prompt_tokens(const LoadedServingScenario& loaded) {
  const s::ServingScenario& m = loaded.scenario();
  int64_t longest = 0;
  for (const Request& r : loaded.trace) longest = std::max<int64_t>(longest, r.input_tokens);
  if (m.has_traffic() && !m.traffic().has_trace_file()) {
    longest = std::max(longest, int64_t{max_prefix_tokens(m.traffic())} +
                                    max_length(m.traffic().input_tokens()));
  }
  for (const s::BatchBenchmark& b : m.benchmark()) {
    longest = std::max<int64_t>(longest, b.input_tokens());
  }
  // A shared prefix plus a prompt of up to 2^31 - 1 tokens overflowed the int sum (UBSan). Such a
  // prompt is refused by the context check (longest_request_tokens); the checks before it see the
  // largest int.
  return static_cast<int>(std::min<int64_t>(longest, std::numeric_limits<int>::max()));
}

int64_t longest_request_tokens(const LoadedServingScenario& loaded) {
  const s::ServingScenario& m = loaded.scenario();
  int64_t longest = 0;
  for (const Request& r : loaded.trace) {
    longest = std::max(longest, int64_t{r.input_tokens} + r.output_tokens);
  }
  if (m.has_traffic() && !m.traffic().has_trace_file()) {
    longest = std::max(longest, int64_t{max_prefix_tokens(m.traffic())} +
                                    max_length(m.traffic().input_tokens()) +
                                    max_length(m.traffic().output_tokens()));
  }
  return longest;
}

const s::ServingRuntime* serving_runtime(const s::ServingScenario& scenario,
                                         const Catalog& catalog) {
  const std::string name =
      scenario.deployment().has_runtime() ? scenario.deployment().runtime() : kDefaultRuntime;
  const CatalogEntry<s::ServingRuntime>* entry = catalog.serving_runtimes().find(name);
  return entry ? entry->value : nullptr;
}

bool is_serving_scenario_file(const std::string& path) {
  std::string text;
  Diagnostics ignored;  // reported when the file is loaded
  if (!read_whole_file(path, &text, &ignored)) return false;
  std::istringstream in(text);
  static const std::regex top_level(R"(^(deployment|traffic|benchmark)\s*[{:])");
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, top_level)) return true;
  }
  return false;
}

std::unique_ptr<LoadedServingScenario> load_serving_scenario(const std::string& path,
                                                             const Catalog& catalog,
                                                             Diagnostics* diagnostics) {
  const int errors_before = diagnostics->error_count();
  auto loaded = std::make_unique<LoadedServingScenario>();
  loaded->file = read_text_file<s::ServingScenario>(path, diagnostics);
  if (!loaded->file) return nullptr;
  const s::ServingScenario& m = loaded->scenario();
  const FieldChecker root = FieldChecker::root(*loaded->file, diagnostics);
  root.non_empty("name");
  root.non_empty("group");
  if (root.require("model")) {
    loaded->model = resolve_reference(root, "model", -1, m.model(), catalog.models(), "model");
    if (loaded->model && !(loaded->model->has_transformer() &&
                           loaded->model->transformer().kind() == s::DECODER)) {
      root.error("model", "\"" + m.model() + "\" is not a decoder transformer: nothing to serve");
      loaded->model = nullptr;
    } else if (loaded->model && loaded->model->transformer().has_hybrid_layer_pattern()) {
      root.error("model", "\"" + m.model() +
                              "\" is a hybrid (Mamba) model: serving it is not "
                              "simulated yet");
      loaded->model = nullptr;
    }
  }
  if (loaded->model) check_compressed_attention_serving(root, *loaded);
  check_traffic_or_benchmarks(root, loaded.get());
  check_deployment(root, catalog, loaded.get());
  check_beam_widths(root, catalog);
  check_sweep_and_scheduler(root, *loaded);
  if (m.has_traffic()) check_concurrency(root);
  if (m.has_deployment()) check_disaggregation(root, catalog, loaded.get());
  if (m.has_deployment()) check_disaggregated_prefix_caching(root, catalog, *loaded);
  if (m.has_deployment()) check_deployment_size(root);
  if (m.has_deployment()) check_expert_parallel(root, *loaded);
  if (m.has_deployment()) check_attention_data_parallel(root, catalog, *loaded);
  if (m.has_deployment()) check_cuda_graph_batch_sizes(root);
  if (m.has_deployment()) check_speculative_decoding(root, catalog, loaded.get());
  if (m.has_sweep()) check_sweep_size(root);
  if (m.has_sweep()) root.child("sweep").distinct_lists();
  root.distinct_lists(s::BatchBenchmark::descriptor());  // billing modes
  if (m.has_slo()) check_slo(root.child("slo"));
  if (m.has_prices()) check_price_file(root.child("prices"), catalog);
  for (int i = 0; i < m.billing_size(); ++i) {
    if (m.billing(i) == s::BILLING_MODE_UNSPECIFIED) {
      root.error("billing", "must be set to a value other than BILLING_MODE_UNSPECIFIED", i);
    }
  }
  if (m.has_autoscaling()) check_autoscaling(root.child("autoscaling"));
  // Without an SLO every rate the search tried met it: the day was sized by the search's limit.
  if (m.has_autoscaling() && !m.has_slo()) {
    root.child("autoscaling").error_here("sizes each hour's replicas by the rate one replica "
                                         "serves within the SLO: needs an slo");
  }
  if (diagnostics->error_count() != errors_before) return nullptr;
  // Once the values are known to be sound (an unknown name is its own error).
  if (m.has_sweep()) warn_replaced_by_serving_axes(root);
  return loaded;
}

}  // namespace clustersim
