// Prefix-aware routing of requests to replicas (PrefixRouting PREFIX_AWARE): the cache-aware
// policy of SGLang's router (sgl-project/sglang sgl-router, RouterArgs policy "cache_aware"). The
// router keeps, per replica, an approximate record of the prompt tokens it sent there (its radix
// tree; here, per prefix id, the longest prefix sent, and the tokens in all), not the replicas'
// caches themselves. When the replicas' loads (requests waiting or running) are out of balance,
// (max - min) > balance_abs_threshold and max > balance_rel_threshold x min, a request goes to
// the least loaded replica; else to the replica sent the most of its prefix when that covers more
// than cache_threshold of its prompt, else to the replica with the smallest record (lowest index
// among equals throughout). Either way its prompt joins the chosen replica's record. Thresholds:
// the router's defaults, RouterArgs (sgl-router/py_src/sglang_router/router_args.py):
// cache_threshold 0.3, balance_abs_threshold 64, balance_rel_threshold 1.5. The record never
// forgets (the router's eviction trims its tree only past max_tree_size, 2^26 characters).
// Deterministic. A choice costs O(log replicas) and the replicas sent the request's prefix, not
// a visit of every replica.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <unordered_map>

#include "sim/serve/least_loaded.h"
#include "sim/serve/traffic.h"

namespace clustersim {

class PrefixAwareRouter {
 public:
  explicit PrefixAwareRouter(int replicas);
  // The replica for `r` given the replicas' `loads` (requests waiting or running; tracking the
  // most); records r's prompt as sent there.
  size_t route(const Request& r, const LeastLoaded& loads);

  static constexpr double kCacheThreshold = 0.3;
  static constexpr int64_t kBalanceAbsThreshold = 64;
  static constexpr double kBalanceRelThreshold = 1.5;

 private:
  // Per prefix, the replicas sent it (in index order) and the longest of it each was sent.
  std::unordered_map<int32_t, std::map<int32_t, int32_t>> sent_;
  LeastLoaded recorded_;  // per replica: the tokens its record holds
};

}  // namespace clustersim
