// The cheapest deployment's margin under its objectives against the model's latency errors.
#include "tools/clustersim/slo_margin.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/serve/serving_rows.h"
#include "sim/util/number_format.h"
#include "tools/clustersim/serve_answers.h"

namespace clustersim::cli {
namespace {

enum class Latency { kTtft, kTpot, kE2e };

const char* latency_name(Latency latency) {
  return latency == Latency::kTtft ? "TTFT" : latency == Latency::kTpot ? "TPOT" : "E2E";
}

// Whose errors `found` are, for `key`: "the H100-SXM5-80GB's checks on tensorrt-llm-1.0", with,
// for a fallback, that the key's runtime has none.
std::string source_of(const ServingErrorsFound& found, const AccuracyKey& key,
                      ServingMetric metric) {
  std::string text = "the " + found.entry->gpu() + "'s " +
                     (found.entry->calibration() ? "calibration" : "checks") + " on " +
                     found.entry->runtime();
  if (found.fallback) {
    text += std::string(", none of ") + (metric == ServingMetric::kTtft ? "TTFT" : "TPOT") +
            " published on " + key.runtime;
  }
  return text;
}

// The model's mean error of `metric` for `key`, with its source: the key's own (its runtime's,
// else the runtime it extends), or for a GPU without one the largest of its kind's
// (largest_serving_errors). Absent where neither exists.
std::optional<std::pair<double, std::string>> metric_error(const AccuracyEvidence& evidence,
                                                           const AccuracyKey& key,
                                                           ServingMetric metric) {
  if (const auto own = evidence.serving_errors(key, metric)) {
    return std::pair(own->errors->mean_abs_pct(), source_of(*own, key, metric));
  }
  const auto largest = evidence.largest_serving_errors(key, metric);
  if (!largest) return std::nullopt;
  return std::pair(largest->errors->mean_abs_pct(), source_of(*largest, key, metric) +
                                                        ", the largest of its kind, as the " +
                                                        key.gpu + " has none");
}

// The model's mean error of `latency` for the GPUs of `instance_label` (E2E: the larger of TTFT's
// and TPOT's): the largest over its GPUs (metric_error). Absent where none has one.
std::optional<std::pair<double, std::string>> latency_error(const AccuracyEvidence& evidence,
                                                            const AccuracyKeys& keys,
                                                            const std::string& instance_label,
                                                            Latency latency) {
  std::vector<ServingMetric> metrics;
  if (latency != Latency::kTpot) metrics.push_back(ServingMetric::kTtft);
  if (latency != Latency::kTtft) metrics.push_back(ServingMetric::kTpot);
  std::optional<std::pair<double, std::string>> largest;
  for (const AccuracyKey& key : keys.of(instance_label)) {
    for (const ServingMetric metric : metrics) {
      const auto error = metric_error(evidence, key, metric);
      if (error && (!largest || error->first > largest->first)) largest = error;
    }
  }
  return largest;
}

// Whether `row` meets every objective by more than the model's error of its latency.
bool beyond_every_error(const ResultRow& row, const schema::Slo& slo, int samples,
                        const AccuracyEvidence& evidence, const AccuracyKeys& keys) {
  const std::optional<ObjectiveMargin> m = binding_margin(row, slo, samples, evidence, keys);
  return m && !m->within_error();
}

std::string one_decimal_percent(double value) { return format_fixed(value, 1) + "%"; }

}  // namespace

std::optional<ObjectiveMargin> binding_margin(const ResultRow& row, const schema::Slo& slo,
                                              int samples, const AccuracyEvidence& evidence,
                                              const AccuracyKeys& keys) {
  const bool worst = samples > 1;
  const struct {
    bool set;
    double limit;
    const char* column;
    Latency latency;
  } objectives[] = {
      {slo.has_p99_ttft_ms(), slo.p99_ttft_ms(), verdict_ttft_p99_key(samples), Latency::kTtft},
      {slo.has_p99_tpot_ms(), slo.p99_tpot_ms(), worst ? "tpot_p99_worst_ms" : "tpot_p99_ms",
       Latency::kTpot},
      {slo.has_p99_e2e_ms(), slo.p99_e2e_ms(), worst ? "e2e_p99_worst_ms" : "e2e_p99_ms",
       Latency::kE2e}};
  const std::string& instance = row_text(row, serving_column("instance"));
  std::optional<ObjectiveMargin> binding;
  for (const auto& o : objectives) {
    if (!o.set) continue;
    const auto error = latency_error(evidence, keys, instance, o.latency);
    const double value = row_number(row, serving_column(o.column));
    if (!error || !std::isfinite(value)) continue;
    ObjectiveMargin m{std::string("p99 ") + latency_name(o.latency),
                      o.limit,
                      value,
                      (o.limit - value) / o.limit * 100,
                      error->first,
                      error->second};
    if (!binding || m.margin_pct - m.error_pct < binding->margin_pct - binding->error_pct) {
      binding = m;
    }
  }
  return binding;
}

std::vector<std::string> margin_lines(const std::vector<ResultRow>& rows, const ResultRow& cheapest,
                                      const schema::Slo& slo, int samples,
                                      const AccuracyEvidence& evidence, const AccuracyKeys& keys,
                                      const std::string& currency) {
  const std::optional<ObjectiveMargin> m = binding_margin(cheapest, slo, samples, evidence, keys);
  if (!m) return {};
  std::string line = m->objective + " " + format_fixed(m->value_ms, 1) + " ms is " +
                     one_decimal_percent(m->margin_pct) + " under its " +
                     format_number(m->limit_ms) + " ms objective, " +
                     (m->within_error() ? "within" : "beyond") + " the model's " +
                     m->objective.substr(4) + " error (" + one_decimal_percent(m->error_pct) +
                     ": " + m->error_source + ")";
  if (!m->within_error()) return {line};
  const int cost = serving_column("cost_per_million_tokens");
  const ResultRow* safe = nullptr;
  for (const ResultRow& row : rows) {
    if (!priced_and_meeting(row)) continue;
    if (safe != nullptr && row_number(row, cost) >= row_number(*safe, cost)) continue;
    if (beyond_every_error(row, slo, samples, evidence, keys)) safe = &row;
  }
  std::string next = safe == nullptr
                         ? "no deployment meets every objective by more than the model's error"
                         : "the cheapest meeting every objective by more than the model's error: " +
                               describe_deployment(*safe) + ": " +
                               format_fixed(row_number(*safe, cost), 3) + " " + currency +
                               " per million output tokens";
  return {line, next};
}

}  // namespace clustersim::cli
