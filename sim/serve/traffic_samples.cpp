// Seeds of the traffic samples, their evaluations combined, the rate every sample meets.
#include "sim/serve/traffic_samples.h"

#include <algorithm>
#include <functional>

#include "sim/util/check.h"
#include "sim/util/splitmix64.h"

namespace clustersim {
namespace {

// The nearest-rank median of one figure over the samples (percentiles' p50: one sample's value).
double sample_median(const std::vector<ServingMetrics>& samples,
                     const std::function<double(const ServingMetrics&)>& figure) {
  std::vector<double> values;
  for (const ServingMetrics& m : samples) values.push_back(figure(m));
  return percentiles(&values).p50;
}

double sample_worst(const std::vector<ServingMetrics>& samples,
                    const std::function<double(const ServingMetrics&)>& figure) {
  double highest = figure(samples.front());
  for (const ServingMetrics& m : samples) highest = std::max(highest, figure(m));
  return highest;
}

// The percentiles `of` picks, each the median of its value over `samples`.
void sample_percentiles(const std::vector<ServingMetrics>& samples,
                        const std::function<const Percentiles&(const ServingMetrics&)>& of,
                        Percentiles* out) {
  out->p50 = sample_median(samples, [&](const ServingMetrics& m) { return of(m).p50; });
  out->p90 = sample_median(samples, [&](const ServingMetrics& m) { return of(m).p90; });
  out->p99 = sample_median(samples, [&](const ServingMetrics& m) { return of(m).p99; });
  out->mean = sample_median(samples, [&](const ServingMetrics& m) { return of(m).mean; });
}

ServingMetrics sample_medians(const std::vector<ServingMetrics>& samples) {
  ServingMetrics m = samples.front();
  const auto count = [&](int64_t ServingMetrics::*field) {
    return static_cast<int64_t>(sample_median(
        samples, [&](const ServingMetrics& s) { return static_cast<double>(s.*field); }));
  };
  const auto figure = [&](double ServingMetrics::*field) {
    return sample_median(samples, [&](const ServingMetrics& s) { return s.*field; });
  };
  m.measured = count(&ServingMetrics::measured);
  m.preemptions = count(&ServingMetrics::preemptions);
  m.replicas_used = count(&ServingMetrics::replicas_used);
  m.peak_busy_replicas = count(&ServingMetrics::peak_busy_replicas);
  sample_percentiles(
      samples, [](const ServingMetrics& s) -> const Percentiles& { return s.ttft_ms; }, &m.ttft_ms);
  sample_percentiles(
      samples, [](const ServingMetrics& s) -> const Percentiles& { return s.tpot_ms; }, &m.tpot_ms);
  sample_percentiles(
      samples, [](const ServingMetrics& s) -> const Percentiles& { return s.e2e_ms; }, &m.e2e_ms);
  if (m.kv_transfer_ms) {  // every sample of a disaggregated deployment has them
    sample_percentiles(
        samples, [](const ServingMetrics& s) -> const Percentiles& { return *s.kv_transfer_ms; },
        &*m.kv_transfer_ms);
  }
  for (double ServingMetrics::*field :
       {&ServingMetrics::output_tokens_per_s, &ServingMetrics::requests_per_s,
        &ServingMetrics::offered_requests_per_s, &ServingMetrics::served_requests_per_s,
        &ServingMetrics::gpu_utilization, &ServingMetrics::kv_cache_utilization,
        &ServingMetrics::prefix_hit_tokens, &ServingMetrics::prefix_hit_requests,
        &ServingMetrics::accepted_per_iteration}) {
    m.*field = figure(field);
  }
  m.overloaded = std::any_of(samples.begin(), samples.end(),
                             [](const ServingMetrics& s) { return s.overloaded; });
  m.shared_prefixes = std::any_of(samples.begin(), samples.end(),
                                  [](const ServingMetrics& s) { return s.shared_prefixes; });
  return m;
}

}  // namespace

uint64_t traffic_sample_seed(uint64_t seed, int sample) {
  return sample == 0 ? seed : splitmix64(seed ^ splitmix64(static_cast<uint64_t>(sample)));
}

schema::Traffic traffic_sample(const schema::Traffic& traffic, int sample) {
  schema::Traffic t = traffic;
  t.set_seed(traffic_sample_seed(traffic.has_seed() ? traffic.seed() : 1, sample));
  return t;
}

int traffic_samples(const LoadedServingScenario& loaded, int requested) {
  if (requested > 0) return requested;
  const schema::Traffic& t = loaded.scenario().traffic();
  return t.has_samples() ? t.samples() : 1;
}

ServingEvaluation combine_samples(std::vector<ServingEvaluation> samples, const schema::Slo* slo) {
  CLUSTERSIM_CHECK(!samples.empty(), "no traffic sample to combine");
  for (ServingEvaluation& e : samples) {
    if (!e.error.empty()) return std::move(e);
  }
  ServingEvaluation combined = std::move(samples.front());
  if (samples.size() == 1) return combined;
  SampleSpread spread;
  spread.samples = static_cast<int>(samples.size());
  if (!combined.metrics) {  // out of memory, whatever the traffic's seed
    combined.spread = spread;
    return combined;
  }
  std::vector<ServingMetrics> metrics = {*combined.metrics};
  for (size_t k = 1; k < samples.size(); ++k) metrics.push_back(*samples[k].metrics);
  // A sample that falls behind its arrivals meets nothing, whatever its p99s (meets_objectives).
  spread.meeting_slo =
      static_cast<int>(std::count_if(samples.begin() + 1, samples.end(), meets_objectives) +
                       (meets_objectives(combined) ? 1 : 0));
  spread.ttft_p99_worst_ms =
      sample_worst(metrics, [](const ServingMetrics& m) { return m.ttft_ms.p99; });
  spread.tpot_p99_worst_ms =
      sample_worst(metrics, [](const ServingMetrics& m) { return m.tpot_ms.p99; });
  spread.e2e_p99_worst_ms =
      sample_worst(metrics, [](const ServingMetrics& m) { return m.e2e_ms.p99; });
  combined.metrics = sample_medians(metrics);
  combined.slo_violation.clear();
  if (slo != nullptr) {
    // The worst p99s miss an objective exactly when some sample misses it.
    ServingMetrics worst_p99 = *combined.metrics;
    worst_p99.ttft_ms.p99 = spread.ttft_p99_worst_ms;
    worst_p99.tpot_ms.p99 = spread.tpot_p99_worst_ms;
    worst_p99.e2e_ms.p99 = spread.e2e_p99_worst_ms;
    const std::string missed = slo_violation(*slo, worst_p99);
    if (!missed.empty()) {
      combined.slo_violation = missed + " (met on " + std::to_string(spread.meeting_slo) + " of " +
                               std::to_string(spread.samples) + " samples)";
    }
  }
  combined.spread = spread;
  return combined;
}

SampledServingEvaluator::SampledServingEvaluator(const Catalog& catalog,
                                                 const LoadedServingScenario& scenario, int samples)
    : scenario_(scenario) {
  CLUSTERSIM_CHECK(samples >= 1 && samples <= kMaxTrafficSamples, "traffic samples out of range");
  for (int k = 0; k < samples; ++k) {
    samples_.push_back(std::make_unique<ServingEvaluator>(catalog, scenario, k));
  }
}

ServingEvaluation SampledServingEvaluator::evaluate(const ServingConfiguration& c) {
  std::vector<ServingEvaluation> evaluations;
  for (const auto& sample : samples_) evaluations.push_back(sample->evaluate(c));
  const schema::ServingScenario& m = scenario_.scenario();
  return combine_samples(std::move(evaluations), m.has_slo() ? &m.slo() : nullptr);
}

double SampledServingEvaluator::max_rate_scale(const ServingConfiguration& c) {
  if (samples_.size() == 1) return samples_.front()->max_rate_scale(c);
  return search_max_rate_scale(
      [&](double scale) {
        return std::all_of(samples_.begin(), samples_.end(), [&](const auto& sample) {
          return meets_objectives(sample->evaluate(c, scale));
        });
      },
      max_rate_scale_limit(scenario_.scenario().traffic()));
}

}  // namespace clustersim
