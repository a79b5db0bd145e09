// The busiest expert-parallel rank's experts and token copies under uniform random routing.
#include "sim/workload/expert_rank_load.h"

#include <algorithm>
#include <cmath>
#include <compare>
#include <map>
#include <vector>

#include "sim/util/check.h"
#include "sim/workload/inference_shape.h"

namespace clustersim {
namespace {

// Below mean - kBinomialTail sigma a binomial's mass (under 1e-30) adds nothing to F(x)^n at double
// precision; above mean + kBinomialTail sigma, 1 - F(x)^n is as negligible.
constexpr double kBinomialTail = 12;
constexpr int64_t kMemoTokens = 1 << 18;  // token counts memoized up to this

}  // namespace

double expected_binomial_maximum(int64_t trials, double p, int n) {
  CLUSTERSIM_CHECK(n >= 1 && trials >= 0 && p >= 0 && p <= 1, "a binomial maximum out of range");
  if (trials == 0 || p == 0) return 0;
  const auto trials_d = static_cast<double>(trials);
  if (p == 1) return trials_d;
  const double mean = trials_d * p, sigma = std::sqrt(mean * (1 - p));
  const auto low = static_cast<int64_t>(std::max(0.0, std::floor(mean - kBinomialTail * sigma - 1)));
  const auto high = static_cast<int64_t>(std::min(trials_d, std::ceil(mean + kBinomialTail * sigma + 1)));
  // Every x below `low` has F(x) ~ 0 and adds 1; from `low` on, F by the pmf's recurrence.
  double pmf = std::exp(std::lgamma(trials_d + 1) - std::lgamma(static_cast<double>(low) + 1) -
                        std::lgamma(static_cast<double>(trials - low) + 1) +
                        static_cast<double>(low) * std::log(p) +
                        static_cast<double>(trials - low) * std::log1p(-p));
  double cdf = 0, sum = static_cast<double>(low);
  for (int64_t x = low; x < high; ++x) {
    cdf = std::min(1.0, cdf + pmf);
    sum += 1 - std::pow(cdf, n);
    pmf *= static_cast<double>(trials - x) / static_cast<double>(x + 1) * p / (1 - p);
  }
  return sum;
}

namespace {

// The load, computed (busiest_expert_rank memoizes it).
ExpertRankLoad compute_busiest_expert_rank(int experts, int experts_per_token, int expert_parallel,
                                           int64_t tokens) {
  CLUSTERSIM_CHECK(experts_per_token <= experts && expert_parallel >= 1 &&
                       experts % expert_parallel == 0 && tokens >= 0,
                   "an expert-parallel load out of range");
  const double copies = static_cast<double>(tokens) * experts_per_token;
  if (expert_parallel == 1) return {experts_touched(experts, experts_per_token, tokens), copies};
  if (tokens == 0) return {};
  const int local = experts / expert_parallel;
  const double touched = 1 - std::pow(1 - static_cast<double>(experts_per_token) / experts,
                                      static_cast<double>(tokens));
  const double fewest_experts =
      std::ceil(static_cast<double>(experts_per_token) / expert_parallel);
  const double fewest_copies = std::ceil(copies / expert_parallel);
  const double most_copies =
      static_cast<double>(tokens) * std::min(experts_per_token, local);
  ExpertRankLoad load;
  load.experts = std::clamp(expected_binomial_maximum(local, touched, expert_parallel),
                            fewest_experts, static_cast<double>(local));
  // The rank with the most experts runs at least a copy through each.
  load.copies = std::clamp(
      expected_binomial_maximum(tokens * experts_per_token, 1.0 / expert_parallel, expert_parallel),
      std::max(fewest_copies, load.experts), most_copies);
  return load;
}

}  // namespace

ExpertRankLoad busiest_expert_rank(int experts, int experts_per_token, int expert_parallel,
                                   int64_t tokens) {
  // Each serving replica's iteration model asks again for every token count it meets (a rate
  // search builds one per trial), and each answer sums a few thousand powers: memoized per thread
  // (no lock; every thread computes the same values), per routing and token count.
  struct Routing {
    int experts, experts_per_token, expert_parallel;
    auto operator<=>(const Routing&) const = default;
  };
  thread_local std::map<Routing, std::vector<ExpertRankLoad>> memo;
  if (tokens < 0 || tokens > kMemoTokens) {
    return compute_busiest_expert_rank(experts, experts_per_token, expert_parallel, tokens);
  }
  std::vector<ExpertRankLoad>& loads = memo[{experts, experts_per_token, expert_parallel}];
  const auto index = static_cast<size_t>(tokens);
  if (index >= loads.size()) loads.resize(index + 1, ExpertRankLoad{-1, -1});
  ExpertRankLoad& load = loads[index];
  if (load.experts < 0) {
    load = compute_busiest_expert_rank(experts, experts_per_token, expert_parallel, tokens);
  }
  return load;
}

}  // namespace clustersim
