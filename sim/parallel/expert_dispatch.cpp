// The rail traffic of a dispatcher that deduplicates per NVLink domain, HybridEP's routing-map
// all-gather, and its combine floor inside one NVLink domain.
#include "sim/parallel/expert_dispatch.h"

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
