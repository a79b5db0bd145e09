// The ranks and domains a deduplicating dispatcher sends a token to, under random routing or a
// fake balanced gate's consecutive experts; HybridEP's routing-map all-gather and its combine
// floor inside one NVLink domain.
#include "sim/parallel/expert_dispatch.h"

#include <algorithm>
#include <numeric>

#include "sim/util/check.h"

namespace clustersim {
namespace {

// Both counts' requirement: k of E experts, spread evenly over the groups.
void check_even_groups(int experts, int experts_per_token, int groups) {
  CLUSTERSIM_CHECK(experts_per_token >= 1 && experts_per_token <= experts && groups >= 1 &&
                       experts % groups == 0,
                   "a routing the deduplicating dispatcher cannot split");
}

}  // namespace

double random_groups_per_token(int experts, int experts_per_token, int groups) {
  check_even_groups(experts, experts_per_token, groups);
  // q = C(E - E/G, k) / C(E, k) = prod over i < k of (E - E/G - i) / (E - i).
  const double e = experts, outside = experts - experts / groups;
  double miss = 1;
  for (int i = 0; i < experts_per_token; ++i) miss *= outside > i ? (outside - i) / (e - i) : 0;
  return groups * (1 - miss);
}

double consecutive_groups_per_token(int experts, int experts_per_token, int groups) {
  check_even_groups(experts, experts_per_token, groups);
  const int per_group = experts / groups, period = experts / std::gcd(experts, experts_per_token);
  int64_t reached = 0;
  for (int token = 0; token < period; ++token) {
    // The run of k consecutive experts (modulo E) visits the groups in cyclic order: one more at
    // each boundary it crosses, all of them at most.
    const int64_t first = int64_t{token} * experts_per_token % experts;
    int crossings = 0;
    for (int64_t e = first + 1; e < first + experts_per_token; ++e) {
      crossings += (e % experts) % per_group == 0 ? 1 : 0;
    }
    reached += std::min(groups, crossings + 1);
  }
  return static_cast<double>(reached) / period;
}

double routing_map_gather_bytes(int64_t tokens, int experts, int ranks) {
  CLUSTERSIM_CHECK(tokens >= 0 && experts >= 1 && ranks >= 1, "a routing map no rank can gather");
  return static_cast<double>(tokens) * experts * ranks;
}

Picoseconds combine_reduction_floor(int64_t tokens, double copies_per_token, double us_per_copy,
                                    int sms) {
  CLUSTERSIM_CHECK(tokens >= 0 && copies_per_token >= 0 && us_per_copy >= 0 && sms >= 1,
                   "a combine the reduction floor cannot time");
  return Picoseconds::from_microseconds(static_cast<double>(tokens) * copies_per_token *
                                        us_per_copy / sms);
}

}  // namespace clustersim
