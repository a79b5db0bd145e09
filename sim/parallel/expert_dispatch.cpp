// The rail traffic of a dispatcher that deduplicates per NVLink domain, HybridEP's routing-map
// all-gather, its combine floor inside one NVLink domain, and the ranks and domains a fake
// balanced gate's consecutive experts reach.
#include "sim/parallel/expert_dispatch.h"

#include <algorithm>
#include <numeric>

#include "sim/util/check.h"

namespace clustersim {

double deduplicated_rail_share(int experts, int experts_per_token, int domains) {
  CLUSTERSIM_CHECK(experts_per_token >= 1 && experts_per_token <= experts && domains >= 1 &&
                       experts % domains == 0,
                   "a routing the deduplicating dispatcher cannot split");
  // q = C(E - E/D, k) / C(E, k) = prod over i < k of (E - E/D - i) / (E - i).
  const double e = experts, outside = experts - experts / domains;
  double miss = 1;
  for (int i = 0; i < experts_per_token; ++i) miss *= outside > i ? (outside - i) / (e - i) : 0;
  return domains * (1 - miss) / experts_per_token;
}

double ranks_per_token(int experts, int experts_per_token, int ranks) {
  return deduplicated_rail_share(experts, experts_per_token, ranks) * experts_per_token;
}

double consecutive_groups_per_token(int experts, int experts_per_token, int groups) {
  CLUSTERSIM_CHECK(experts_per_token >= 1 && experts_per_token <= experts && groups >= 1 &&
                       experts % groups == 0,
                   "a routing the deduplicating dispatcher cannot split");
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
