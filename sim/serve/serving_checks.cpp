// Checks of traffic, scheduler, quantization, objectives and benchmarks.
#include "sim/serve/serving_checks.h"

#include <algorithm>
#include <cmath>

#include "sim/hw/compute_model.h"
#include "sim/serve/closed_loop.h"
#include "sim/serve/traffic.h"
#include "sim/serve/traffic_samples.h"
#include "sim/util/number_format.h"

namespace clustersim {

namespace s = schema;

bool has_tensor_cores(const s::Gpu& gpu, s::Precision p) {
  return peak_tflops(gpu.peak_tflops(), p) > 0;
}

std::string quantization_problem(const s::Quantization& q, const s::Gpu& gpu) {
  const TensorFormats f = resolve_formats(q, gpu);
  if (has_tensor_cores(gpu, f.activations)) return "";
  return "GPU \"" + gpu.name() + "\" has no " + s::Precision_Name(f.activations) + " support";
}

namespace {

// The widest log-normal length distribution: with sigma 10 its middle half (the median x
// e^(+-0.674 sigma)) spans a factor of 8.5e5, about the range from one token to the longest
// context any model has (2^20 and up); a wider sigma (1e300 was taken) sends the draws to min and
// max alone, which is not the distribution written.
constexpr double kMaxLengthSigma = 10;

void check_lengths(const FieldChecker& owner, const char* field) {
  if (!owner.require(field)) return;
  const FieldChecker d = owner.child(field);
  const auto& m = static_cast<const s::LengthDistribution&>(d.message());
  switch (m.kind_case()) {
    case s::LengthDistribution::kFixed:
      d.at_least("fixed", 1);
      break;
    case s::LengthDistribution::kUniform: {
      const FieldChecker u = d.child("uniform");
      if (u.require("min") && u.at_least("min", 1) && u.require("max") &&
          m.uniform().max() < m.uniform().min()) {
        u.error("max", "is below min (" + std::to_string(m.uniform().min()) + ")");
      }
      break;
    }
    case s::LengthDistribution::kLognormal: {
      const FieldChecker l = d.child("lognormal");
      l.require_positive("median");
      l.require("sigma") && l.in_range("sigma", 0, kMaxLengthSigma);
      l.at_least("min", 1);
      const s::LogNormalLength& ln = m.lognormal();
      const int32_t low = ln.has_min() ? ln.min() : 1;
      if (l.require("max") && l.at_least("max", 1) && ln.max() < ln.min()) {
        l.error("max", "is below min (" + std::to_string(ln.min()) + ")");
      } else if (ln.has_max() && (ln.median() > ln.max() || ln.median() < low)) {
        // Half the draws or more would be clipped to one length: not the distribution written.
        l.error("median", "must be within [min, max] = [" + std::to_string(low) + ", " +
                              std::to_string(ln.max()) + "], got " + format_number(ln.median()));
      }
      break;
    }
    default:
      d.error_here("give fixed, uniform or lognormal");
  }
}

// Open-loop arrivals are drawn before the simulation: on average at most kMaxRequests requests,
// and at most as many bursts (each burst is two changes of rate to step through).
void check_request_count(const FieldChecker& traffic) {
  const auto& m = static_cast<const s::Traffic&>(traffic.message());
  // Rates that are not finite are reported by their own checks.
  if (!(m.has_rate_per_s() || m.has_bursts()) || !std::isfinite(mean_rate_per_s(m, {}))) return;
  const double duration = traffic_duration_s(m);
  const double requests = expected_requests(m);
  const char* field = m.has_bursts() ? "bursts" : "rate_per_s";
  const std::string limit =
      " s, more than the " + format_number(kMaxRequests) + " (2^24) a simulation may hold: ";
  if (requests > kMaxRequests) {
    traffic.error(field, format_significant(requests, 3) + " requests on average over " +
                             format_number(duration) + limit + "lower the rate or shorten "
                             "duration_s");
  }
  if (m.has_bursts()) {
    const double bursts = duration / (m.bursts().burst_every_s() + m.bursts().burst_duration_s());
    if (bursts > kMaxRequests) {
      traffic.error(field, format_significant(bursts, 3) + " bursts on average over " +
                               format_number(duration) + limit + "lengthen burst_every_s or "
                               "shorten duration_s");
    }
  }
}

// Shared prefixes: a count, their lengths, the share of requests carrying one and their
// popularity; a longest prefix + prompt + output within the model's context.
void check_shared_prefix(const FieldChecker& traffic, int max_context) {
  const FieldChecker p = traffic.child("shared_prefix");
  const auto& m = static_cast<const s::Traffic&>(traffic.message());
  if (m.has_trace_file()) {
    traffic.error("shared_prefix", "comes from the trace file (its prefix_id,prefix_tokens "
                                   "columns): remove it");
    return;
  }
  p.require("prefixes") && p.in_range("prefixes", 1, kMaxSharedPrefixes);
  check_lengths(p, "tokens");
  if (p.in_range("share", 0, 1) && m.shared_prefix().has_share() &&
      m.shared_prefix().share() == 0) {
    p.error("share", "0 gives no request a prefix: remove shared_prefix instead");
  }
  const s::SharedPrefix& sp = m.shared_prefix();
  if (sp.has_popularity()) p.require_enum("popularity");
  if (sp.has_zipf_exponent()) {
    if (sp.popularity() != s::ZIPF) {
      p.error("zipf_exponent", "applies to popularity ZIPF");
    } else {
      p.in_range("zipf_exponent", 0, 10);
    }
  }
  const int64_t prefix = max_length(sp.tokens());
  const int64_t context = prefix + max_length(m.input_tokens()) + max_length(m.output_tokens());
  if (prefix > 0 && max_length(m.input_tokens()) > 0 && max_length(m.output_tokens()) > 0 &&
      context > max_context) {
    p.error("tokens", "a request of up to " + std::to_string(context) +
                          " tokens (prefix + input + output) exceeds the model's "
                          "max_sequence_length (" + std::to_string(max_context) + ")");
  }
}

}  // namespace

int max_length(const s::LengthDistribution& lengths) {
  switch (lengths.kind_case()) {
    case s::LengthDistribution::kFixed:
      return lengths.fixed();
    case s::LengthDistribution::kUniform:
      return lengths.uniform().max();
    case s::LengthDistribution::kLognormal:
      return lengths.lognormal().max();
    default:
      return 0;
  }
}

void check_traffic(const FieldChecker& traffic, int max_context) {
  const auto& m = static_cast<const s::Traffic&>(traffic.message());
  switch (m.arrivals_case()) {
    case s::Traffic::kRatePerS:
      traffic.positive("rate_per_s");
      break;
    case s::Traffic::kBursts: {
      const FieldChecker b = traffic.child("bursts");
      b.require("base_rate_per_s") && b.non_negative("base_rate_per_s");
      b.require_positive("burst_rate_per_s");
      // A mean interval or a burst past the longest traffic (kMaxTraffic_s) is no burst, or one
      // without end: 1e300 of either was taken so, silently (tools/input_audit.py).
      b.require_positive("burst_every_s") && b.in_range("burst_every_s", 0, kMaxTraffic_s);
      b.require_positive("burst_duration_s") && b.in_range("burst_duration_s", 0, kMaxTraffic_s);
      break;
    }
    case s::Traffic::kTraceFile:
      break;
    case s::Traffic::kClosedLoop: {
      const FieldChecker c = traffic.child("closed_loop");
      c.in_range("concurrency", 1, kMaxClosedLoopUsers);
      c.in_range("think_time_s", 0, kMaxThinkTime_s);
      c.in_range("requests", 1, kMaxRequests);
      if (m.closed_loop().has_requests()) {
        for (const char* f : {"duration_s", "warmup_s"}) {
          if (traffic.has(f)) {
            traffic.error(f, "closed_loop.requests ends the run: give a duration or a request "
                             "count, and warm up only with a duration");
          }
        }
      }
      break;
    }
    default:
      traffic.error_here("needs arrivals: rate_per_s, bursts, trace_file or closed_loop");
  }
  if (traffic.positive("duration_s") && traffic.in_range("duration_s", 0, kMaxTraffic_s)) {
    check_request_count(traffic);
  }
  traffic.non_negative("warmup_s");
  if (m.has_shared_prefix()) check_shared_prefix(traffic, max_context);
  if (traffic.in_range("samples", 1, kMaxTrafficSamples) && m.has_trace_file() &&
      m.samples() > 1) {
    traffic.error("samples", "a trace file is one fixed sample of traffic: give 1 or remove it");
  }
  if (m.has_trace_file()) {
    for (const char* f : {"input_tokens", "output_tokens", "duration_s"}) {
      if (traffic.has(f)) traffic.error(f, "comes from the trace file: remove it");
    }
    return;
  }
  check_lengths(traffic, "input_tokens");
  check_lengths(traffic, "output_tokens");
  const int64_t context = int64_t{max_length(m.input_tokens())} + max_length(m.output_tokens());
  if (max_length(m.input_tokens()) > 0 && max_length(m.output_tokens()) > 0 &&
      context > max_context) {
    traffic.error("input_tokens", "a request of up to " + std::to_string(context) +
                                      " tokens (input + output) exceeds the model's "
                                      "max_sequence_length (" +
                                      std::to_string(max_context) + ")");
  }
  if (m.has_warmup_s() && m.warmup_s() >= traffic_duration_s(m)) {
    traffic.error("warmup_s", "leaves no traffic to measure (it is not below duration_s)");
  }
}

void check_scheduler(const FieldChecker& scheduler, int longest_prompt, int max_context) {
  const auto& m = static_cast<const s::Scheduler&>(scheduler.message());
  scheduler.at_least("max_batch_size", 1);
  scheduler.at_least("max_tokens_per_iteration", 1);
  // A sequence holds whole blocks: a block longer than the longest sequence the model takes
  // reserves more than any request can use (runtimes page by 16 to 128 tokens), and one of 2^31
  // tokens left no whole block in any GPU's cache.
  if (scheduler.at_least("kv_block_tokens", 1) && m.kv_block_tokens() > max_context) {
    scheduler.error("kv_block_tokens",
                    std::to_string(m.kv_block_tokens()) + " tokens a block exceeds the model's "
                    "max_sequence_length (" + std::to_string(max_context) +
                    "): a block would hold more than the longest sequence (runtimes use 16 to "
                    "128)");
  }
  scheduler.in_range("kv_cache_memory_fraction", 0.01, 1);
  scheduler.in_range("batch_wait_ms", 0, kMaxTraffic_s * 1e3);
  const bool is_static = m.batching() == s::STATIC;
  if (is_static && m.chunked_prefill()) {
    scheduler.error("chunked_prefill", "applies to CONTINUOUS batching");
  }
  if (m.has_capacity_policy()) {
    if (scheduler.require_enum("capacity_policy") && is_static) {
      scheduler.error("capacity_policy", "applies to CONTINUOUS batching");
    }
  }
  if (!is_static && m.has_batch_wait_ms()) {
    scheduler.error("batch_wait_ms", "applies to STATIC batching");
  }
  if (m.has_prefix_caching()) {
    const FieldChecker caching = scheduler.child("prefix_caching");
    if (m.prefix_caching().has_routing()) caching.require_enum("routing");
    if (is_static && m.prefix_caching().enabled()) {
      caching.error("enabled", "applies to CONTINUOUS batching (a static batch's KV cache is "
                               "not paged)");
    }
  }
  const int budget = m.has_max_tokens_per_iteration() ? m.max_tokens_per_iteration() : 8192;
  if (!is_static && !m.chunked_prefill() && longest_prompt > budget) {
    scheduler.error("max_tokens_per_iteration",
                    "a prompt of " + std::to_string(longest_prompt) + " tokens exceeds the " +
                        std::to_string(budget) +
                        "-token budget of an iteration: raise it or set chunked_prefill");
  }
}

TensorFormats resolve_formats(const s::Quantization& q, const s::Gpu& gpu) {
  TensorFormats f;
  f.weights = q.has_weights() ? q.weights() : sixteen_bit_format(gpu);
  const bool weight_only = f.weights == s::INT4;
  f.activations = q.has_activations() ? q.activations()
                  : weight_only       ? sixteen_bit_format(gpu)
                                      : f.weights;
  const bool eight_bit = f.activations == s::FP8 || f.activations == s::FP4;
  f.kv_cache = q.has_kv_cache()                ? q.kv_cache()
               : eight_bit                     ? s::FP8
               : f.activations == s::INT8      ? s::INT8
                                               : f.activations;
  return f;
}

void check_quantization(const FieldChecker& quantization, const s::Gpu* gpu,
                        const std::string& instance_name) {
  const auto& q = static_cast<const s::Quantization&>(quantization.message());
  const s::Precision sixteen = gpu ? sixteen_bit_format(*gpu) : s::BF16;
  const s::Precision weights = q.has_weights() ? q.weights() : sixteen;
  const s::Precision activations = q.has_activations() ? q.activations()
                                   : weights == s::INT4 ? sixteen
                                                        : weights;
  const auto allowed = [&](const char* field, s::Precision p,
                           std::initializer_list<s::Precision> options) {
    if (std::find(options.begin(), options.end(), p) != options.end()) return true;
    quantization.error(field, s::Precision_Name(p) + " is not a format for " + field);
    return false;
  };
  allowed("weights", weights, {s::FP16, s::BF16, s::FP8, s::INT8, s::INT4, s::FP4});
  const bool activations_ok =
      allowed("activations", activations, {s::FP16, s::BF16, s::FP8, s::INT8, s::FP4});
  if (q.has_kv_cache()) allowed("kv_cache", q.kv_cache(), {s::FP16, s::BF16, s::FP8, s::INT8});
  const bool narrow_math = activations != s::FP16 && activations != s::BF16;
  if (narrow_math && bytes_per_element(weights) > bytes_per_element(activations)) {
    quantization.error("weights", s::Precision_Name(weights) + " weights are wider than the " +
                                      s::Precision_Name(activations) +
                                      " matmul inputs: quantize the weights too");
  }
  if (gpu != nullptr && activations_ok && !has_tensor_cores(*gpu, activations)) {
    quantization.error(q.has_activations() ? "activations" : "weights",
                       "GPU \"" + gpu->name() + "\" of \"" + instance_name + "\" has no " +
                           s::Precision_Name(activations) + " support (no " +
                           s::Precision_Name(activations) + " entry in its peak_tflops)");
  }
}

void check_slo(const FieldChecker& slo) {
  for (const char* f : {"p99_ttft_ms", "p99_tpot_ms", "p99_e2e_ms"}) slo.positive(f);
  if (!slo.has("p99_ttft_ms") && !slo.has("p99_tpot_ms") && !slo.has("p99_e2e_ms")) {
    slo.error_here("sets no objective: give p99_ttft_ms, p99_tpot_ms or p99_e2e_ms");
  }
}

void check_benchmark(const FieldChecker& benchmark, int max_context) {
  const auto& m = static_cast<const s::BatchBenchmark&>(benchmark.message());
  bool sizes = true;
  for (const char* f : {"batch_size", "input_tokens", "output_tokens"}) {
    sizes = benchmark.require(f) && benchmark.at_least(f, 1) && sizes;
  }
  // A published run beyond the model's context is timed as it ran (rotary positions extrapolate;
  // the answers' quality is not modelled); traffic beyond it is an error (check_traffic).
  const int64_t context = int64_t{m.input_tokens()} + m.output_tokens();
  if (sizes && context > max_context) {
    benchmark.warning("output_tokens", "a context of " + std::to_string(context) +
                                           " tokens exceeds the model's max_sequence_length (" +
                                           std::to_string(max_context) + "): timed as published");
  }
  if (m.has_published()) {
    const FieldChecker p = benchmark.child("published");
    for (const char* f : {"ttft_ms", "tpot_ms", "output_tokens_per_s", "peak_memory_gb"}) {
      p.figure(f);
    }
  }
}

void refuse_static_batching(const FieldChecker& root, const char* why) {
  const auto& m = static_cast<const s::ServingScenario&>(root.message());
  if (m.deployment().scheduler().batching() == s::STATIC) {
    root.child("deployment").child("scheduler").error("batching", why);
  }
  for (int i = 0; i < m.sweep().batching_size(); ++i) {
    if (m.sweep().batching(i) == s::STATIC) root.child("sweep").error("batching", why, i);
  }
}

}  // namespace clustersim
