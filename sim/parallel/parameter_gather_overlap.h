// The parameter all-gather of a sharded optimizer overlapped with the next step's forwards, as
// Megatron-Core's distributed optimizer runs it (overlap_param_gather): one all-gather per
// bucket, each waited for in the forward pre-hook of the first layer that uses it, and the next
// bucket's dispatched only once that wait returns (_ParamAndGradBucketGroup.finish_param_sync,
// megatron/core/distributed/param_and_grad_buffer.py, NVIDIA/Megatron-LM 25.09-alpha.rc1
// d3391901; the first bucket's dispatched by the same hook when align_param_gather is off).
// With align_param_gather on, a chunk's buckets are dispatched together and run one after
// another on NCCL's stream: the same bound. So the first bucket's gather has nothing to hide
// behind, and every later one runs beside the layers of the bucket before it: a forward split
// into n equal segments of f / n waits max(g, f / n) per segment after the first bucket's g.
#pragma once

#include "sim/util/units.h"

namespace clustersim {

// What `buckets` equal all-gathers of `gather` in all add to the forwards they feed (`forward`
// long alone, on a GPU of `sms` SMs): the first bucket's whole gather, then the n - 1 others
// beside the first n - 1 of n equal forward segments, which their CTAs slow
// (collective_sm_contention.h exposed_beside_compute). Requires: buckets >= 1.
Picoseconds parameter_gather_exposed(Picoseconds gather, int buckets, Picoseconds forward,
                                     int sms);

}  // namespace clustersim
