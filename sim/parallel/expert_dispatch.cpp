// The rail traffic of a dispatcher that deduplicates per NVLink domain.
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

}  // namespace clustersim
