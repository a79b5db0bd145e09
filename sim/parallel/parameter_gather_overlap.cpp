// The bucketed parameter all-gather against the forwards it feeds.
#include "sim/parallel/parameter_gather_overlap.h"

#include "sim/parallel/collective_sm_contention.h"
#include "sim/util/check.h"

namespace clustersim {

Picoseconds parameter_gather_exposed(Picoseconds gather, int buckets, Picoseconds forward,
                                     int sms) {
  CLUSTERSIM_CHECK(buckets >= 1, "a parameter gather of no buckets");
  const Picoseconds first(gather.count() / buckets);
  const int64_t later = buckets - 1;
  return first + exposed_beside_compute(gather - first,
                                        Picoseconds(forward.count() / buckets * later), sms);
}

}  // namespace clustersim
