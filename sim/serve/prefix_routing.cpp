// The cache-aware router's choice of replica.
#include "sim/serve/prefix_routing.h"

#include <algorithm>

namespace clustersim {

PrefixAwareRouter::PrefixAwareRouter(int replicas) : recorded_(replicas) {}

size_t PrefixAwareRouter::route(const Request& r, const LeastLoaded& loads) {
  // The replicas sent r's prefix (none without one); any other has matched none of it.
  static const std::map<int32_t, int32_t> kNone;
  const auto found = r.prefix < 0 ? sent_.end() : sent_.find(r.prefix);
  const std::map<int32_t, int32_t>& senders = found == sent_.end() ? kNone : found->second;
  const auto matched = [&](size_t i) -> int32_t {
    const auto it = senders.find(static_cast<int32_t>(i));
    return it == senders.end() ? 0 : std::min(it->second, r.prefix_tokens);
  };
  const int64_t most = loads.most();
  const int64_t least = loads.load(loads.least());
  const bool imbalanced =
      most - least > kBalanceAbsThreshold &&
      static_cast<double>(most) > kBalanceRelThreshold * static_cast<double>(least);
  size_t chosen = 0;
  if (imbalanced) {
    chosen = loads.least();
  } else {
    // The lowest index of the most matched (replica 0 when none matched any).
    size_t best = 0;
    int32_t best_matched = 0;
    for (const auto& [replica, tokens] : senders) {
      const int32_t m = std::min(tokens, r.prefix_tokens);
      if (m > best_matched) {
        best = static_cast<size_t>(replica);
        best_matched = m;
      }
    }
    const double rate = static_cast<double>(best_matched) / static_cast<double>(r.input_tokens);
    chosen = rate > kCacheThreshold ? best : recorded_.least();
  }
  recorded_.set(chosen, recorded_.load(chosen) + r.input_tokens - matched(chosen));
  if (r.prefix >= 0) {
    int32_t& longest = sent_[r.prefix][static_cast<int32_t>(chosen)];
    longest = std::max(longest, r.prefix_tokens);
  }
  return chosen;
}

}  // namespace clustersim
