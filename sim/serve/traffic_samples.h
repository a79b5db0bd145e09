// One deployment served several independent samples of its scenario's traffic (traffic.samples,
// `serve --samples`), so that an answer near an objective shows whether it holds beyond the one
// random sample: each sample's seed, the samples' evaluations combined into one row's (every
// figure's median over the samples, the worst of each p99, the objectives met only when met on
// every sample) and the highest rate every sample meets.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/serve/serving_evaluation.h"

namespace clustersim {

// The most samples: a sizing takes N times one sample's time, and 100 samples that all meet the
// objectives already bound the share of samples that would miss them to 3% at 95% confidence
// (the rule of three: 3 / N).
inline constexpr int kMaxTrafficSamples = 100;

// The seed of sample `sample` (from 0) of traffic seeded `seed`: `seed` itself for sample 0 (one
// sample is the traffic as written), else splitmix64(seed ^ splitmix64(sample)). Each sample
// then draws its arrivals, bursts, lengths, prefixes and draft acceptances from streams of its own
// seed, as one sample does from traffic.seed.
uint64_t traffic_sample_seed(uint64_t seed, int sample);

// `traffic` (its seed absent: 1) with the seed of sample `sample`.
schema::Traffic traffic_sample(const schema::Traffic& traffic, int sample);

// The samples of `loaded`'s traffic a sizing serves: `requested` when above 0 (serve --samples),
// else traffic.samples (absent: 1).
int traffic_samples(const LoadedServingScenario& loaded, int requested);

// One deployment's evaluations on every sample (in sample order) as one: with a single sample,
// it as it is; else `spread` counts the samples and, when the deployment fits, every figure of the
// metrics is the median over the samples (nearest rank: one sample's value, the lower middle one of
// an even count) and it is overloaded when any sample is, `spread` says how many samples meet `slo` (null: none set) and the worst p99s,
// and slo_violation is the first objective the worst p99s miss ("... (met on 3 of 5 samples)"), so
// the deployment meets the objectives exactly when it meets them on every sample. A sample's error
// is the evaluation's. Requires: at least one evaluation, all of one deployment.
ServingEvaluation combine_samples(std::vector<ServingEvaluation> samples, const schema::Slo* slo);

// A ServingEvaluator per sample; one per thread.
class SampledServingEvaluator {
 public:
  // Requires: a scenario that loaded without errors, 1 <= samples <= kMaxTrafficSamples; both
  // outlive the evaluator.
  SampledServingEvaluator(const Catalog& catalog, const LoadedServingScenario& scenario,
                          int samples);

  // `c` on every sample, combined (combine_samples).
  ServingEvaluation evaluate(const ServingConfiguration& c);
  // ServingEvaluator::max_rate_scale's search where a rate meets the objectives only when every
  // sample meets them there (tried in sample order, stopping at the first that misses): at most
  // the search's answer on any one sample, since the searches probe the same rates until the
  // first rate some sample meets and another misses, after which this one's answer stays below
  // that rate and the meeting sample's at or above it. Requires: the scenario has an slo and
  // open-loop traffic.
  double max_rate_scale(const ServingConfiguration& c);

 private:
  const LoadedServingScenario& scenario_;
  std::vector<std::unique_ptr<ServingEvaluator>> samples_;
};

}  // namespace clustersim
