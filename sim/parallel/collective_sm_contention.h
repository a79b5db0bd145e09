// The compute stream of a pipeline stage slowed by the NCCL kernels that run beside it: while an
// overlapped collective runs (a data-parallel gradient reduction or parameter gather, a ZeRO-3
// or FSDP gather or reduce-scatter), each of its channels holds one SM of the GPU as one CTA,
// so the compute beside it runs on the others, at (SMs - CTAs) / SMs of its speed. Work is
// conserved: a compute of duration T on a GPU of its own ends when the integral of its speed
// reaches T, so one fully beside a collective of c CTAs takes T S / (S - c).
// Scope: SMs only; the HBM bandwidth the collective's copies take is not charged.
#pragma once

#include <optional>

#include "sim/util/units.h"

namespace clustersim {

// NCCL's CTAs per collective on the data-parallel and sharding communicators: one per channel,
// and the ring's channels are the 16 its topology search finds (search.cc searches at most
// MAXCHANNELS / 2) duplicated to MAXCHANNELS = 32 once a channel carries 25 GB/s or more
// (NVIDIA/nccl src/graph/search.cc ncclTopoCompute, src/include/device.h), as on NVLink-switched
// H100 and B200 nodes with a NIC per GPU ("32 coll channels" in NCCL's INIT log); large
// gradient buckets run on all of them (src/enqueue.cc shrinks channels only for small sizes).
inline constexpr int kNcclCollectiveCtas = 32;

// The SMs of an H100 SXM (NVIDIA H100 Tensor Core GPU Architecture whitepaper), the GPU the
// share is taken of, as for the expert all-to-alls (expert_comm_overlap.h).
inline constexpr int kGpuSms = 132;

// What a collective of `communication` started with `compute` beside it adds to the compute's
// time, the compute slowed while both run: communication - compute when the collective outlasts
// the slowed compute, else communication x CTAs / SMs.
Picoseconds exposed_beside_compute(Picoseconds communication, Picoseconds compute);

// One stage's compute stream and the collective CTAs beside it.
class CollectiveSmContention {
 public:
  // Starts compute of `work` (its time alone) at `now`; returns when it ends while the CTAs
  // beside it stay as they are. Requires: no compute running.
  Picoseconds start(Picoseconds now, Picoseconds work);
  // A collective of `ctas` CTAs begins (ctas > 0) or ends (ctas < 0) at `now`; returns the
  // running compute's new end, or nothing when no compute runs.
  std::optional<Picoseconds> add_ctas(Picoseconds now, int ctas);
  // Whether the running compute ends at `now` (an end computed before a change is stale).
  bool ends_at(Picoseconds now) const { return running_ && end_ == now; }
  void finish() { running_ = false; }
  // Moves the clock of the running compute by `delta` (a steady-state jump).
  void translate(Picoseconds delta);
  int ctas() const { return ctas_; }

 private:
  Picoseconds end_from(Picoseconds now) const;

  int ctas_ = 0;
  bool running_ = false;
  double remaining_ = 0;  // picoseconds of work alone left at mark_
  Picoseconds mark_, end_;
};

}  // namespace clustersim
