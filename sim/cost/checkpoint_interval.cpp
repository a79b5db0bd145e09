// Optimal checkpoint interval: grid search over simulated runs, refined by a parabola.
#include "sim/cost/checkpoint_interval.h"

#include <cmath>
#include <limits>
#include <vector>

#include "sim/util/check.h"

namespace clustersim {
namespace {

constexpr int kStepsPerOctave = 4;  // grid points per doubling of the interval
constexpr int kOctaves = 2;         // each side of the Young/Daly interval
static_assert(kShortestSearchedIntervalFraction == 1.0 / (1 << kOctaves));

}  // namespace

double young_daly_interval_s(double checkpoint_write_s, double failures_per_s) {
  CLUSTERSIM_CHECK(checkpoint_write_s > 0 && failures_per_s > 0, "Young/Daly needs C, rate > 0");
  return std::sqrt(2 * checkpoint_write_s / failures_per_s);
}

double job_failures_per_s(const RunSpec& spec) {
  return spec.nodes * spec.interruptions_per_node_hour / 3600;
}

double lossy_failures_per_s(const RunSpec& spec) {
  const double rate = job_failures_per_s(spec);
  return spec.preemption_saves ? rate * (1 - spec.preemption_share) : rate;
}

double simulated_optimal_interval_s(const RunSpec& spec, int trials, uint64_t first_seed) {
  const double center = young_daly_interval_s(spec.checkpoint_write_s, lossy_failures_per_s(spec));
  const int points = 2 * kOctaves * kStepsPerOctave + 1;
  const double log_step = std::log(2.0) / kStepsPerOctave;
  std::vector<double> mean_s(points);
  int best = 0;
  for (int i = 0; i < points; ++i) {
    RunSpec at = spec;
    at.interval_s = center * std::exp((i - kOctaves * kStepsPerOctave) * log_step);
    // An interval whose run is not expected to finish (or too long to simulate) loses.
    mean_s[i] = run_problem(at).empty() ? simulate_runs(at, trials, first_seed).mean_s
                                        : std::numeric_limits<double>::infinity();
    if (mean_s[i] < mean_s[best]) best = i;
  }
  double offset = 0;  // of the vertex from the best point, in grid steps
  if (best > 0 && best < points - 1) {
    const double left = mean_s[best - 1], mid = mean_s[best], right = mean_s[best + 1];
    const double curvature = left - 2 * mid + right;
    if (std::isfinite(left + mid + right) && curvature > 0)
      offset = 0.5 * (left - right) / curvature;
  }
  return center * std::exp((best - kOctaves * kStepsPerOctave + offset) * log_step);
}

}  // namespace clustersim
