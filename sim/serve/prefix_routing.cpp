// The cache-aware router's choice of replica.
#include "sim/serve/prefix_routing.h"

#include <algorithm>

namespace clustersim {

PrefixAwareRouter::PrefixAwareRouter(int replicas) : sent_(replicas), recorded_(replicas, 0) {}

size_t PrefixAwareRouter::route(const Request& r, const std::vector<int64_t>& loads) {
  const auto lowest = [](const auto& values) {
    return static_cast<size_t>(std::min_element(values.begin(), values.end()) - values.begin());
  };
  const auto matched = [&](size_t i) -> int32_t {
    if (r.prefix < 0) return 0;
    const auto it = sent_[i].find(r.prefix);
    return it == sent_[i].end() ? 0 : std::min(it->second, r.prefix_tokens);
  };
  const int64_t most = *std::max_element(loads.begin(), loads.end());
  const int64_t least = *std::min_element(loads.begin(), loads.end());
  const bool imbalanced =
      most - least > kBalanceAbsThreshold &&
      static_cast<double>(most) > kBalanceRelThreshold * static_cast<double>(least);
  size_t chosen = 0;
  if (imbalanced) {
    chosen = lowest(loads);
  } else {
    size_t best = 0;
    for (size_t i = 1; i < sent_.size(); ++i) {
      if (matched(i) > matched(best)) best = i;
    }
    const double rate = static_cast<double>(matched(best)) / static_cast<double>(r.input_tokens);
    chosen = rate > kCacheThreshold ? best : lowest(recorded_);
  }
  recorded_[chosen] += r.input_tokens - matched(chosen);
  if (r.prefix >= 0) {
    int32_t& longest = sent_[chosen][r.prefix];
    longest = std::max(longest, r.prefix_tokens);
  }
  return chosen;
}

}  // namespace clustersim
