// The compute stream of a pipeline stage slowed by the NCCL kernels that run beside it: while an
// overlapped collective runs (a data-parallel gradient reduction or parameter gather, a ZeRO-3
// or FSDP gather or reduce-scatter), each of its channels holds one SM of the GPU as one CTA,
// so the compute beside it runs on the others, at (SMs - CTAs) / SMs of its speed. Work is
// conserved: a compute of duration T on a GPU of its own ends when the integral of its speed
// reaches T, so one fully beside a collective of c CTAs takes T S / (S - c).
// Scope: SMs only; the HBM bandwidth the collective's copies take is not charged.
// It also keeps the collectives' last spell (a span with some collective in flight throughout,
// one starting as the previous ends counted as no gap) and records the compute work done beside
// a chain of collectives where the step waits on the chain, not on that work (the limiting column
// weighs it so, step_limit.h): beside the spell since it began where it outlasts the stage's last
// backward, and beside a ZeRO-3 stage's chain of gathers since it began where the compute idles
// for one (zero3_traffic.h). Each record counts only work no earlier record holds.
#pragma once

#include <algorithm>
#include <optional>

#include "sim/util/units.h"

namespace clustersim {

// NCCL's CTAs per collective on the data-parallel and sharding communicators: one per channel,
// and the ring's channels are the 16 its topology search finds (init.cc lets it find at most
// MAXCHANNELS / 2) duplicated to MAXCHANNELS = 32 once a channel carries 25 GB/s or more
// (NVIDIA/nccl src/graph/search.cc ncclTopoCompute, src/include/device.h), as on NVLink-switched
// H100 and B200 nodes with a NIC per GPU ("32 coll channels" in NCCL's INIT log); large
// gradient buckets run on all of them (src/enqueue.cc shrinks channels only for small sizes).
// The same on every GPU: the count follows the node's links, not the GPU's SMs; tree shares the
// ring's channels. Not modelled: NVLS (NVLink SHARP) collectives run on comm->nvlsChannels
// instead (src/transport/nvls.cc ncclNvlsTuning: 16 on compute capability 9.x, 24 on 10.x
// inside one NVLink domain, 24-32 across domains by NIC rate; enqueue.cc), which matters only
// for a data-parallel all-reduce inside one domain (the one NVLS collective sim/net runs; the
// distributed optimizer's reduce-scatters and gathers run as rings); NCCL 2.25 raised
// MAXCHANNELS to 64 (the search's limit to 32); and PCIe-only nodes, whose channels carry less
// than 25 GB/s, are not duplicated (fewer CTAs there).
inline constexpr int kNcclCollectiveCtas = 32;

// What a collective of `communication` started with `compute` beside it, on a GPU of `sms` SMs
// (Gpu.streaming_multiprocessors), adds to the compute's time, the compute slowed while both
// run: communication - compute when the collective outlasts the slowed compute, else
// communication x CTAs / SMs; on a GPU of no more SMs than the CTAs, the compute waits for the
// whole collective. `sms` 0 (an accelerator without CUDA SMs): nothing slowed, what outlasts
// the compute.
Picoseconds exposed_beside_compute(Picoseconds communication, Picoseconds compute, int sms);

// One stage's compute stream and the collective CTAs beside it. The block scheduler spreads the
// CTAs one to an SM before doubling any up, so they hold min(CTAs, SMs) SMs; with every SM held
// (collectives overlapping on a GPU of few SMs: two of 32 CTAs on an L4's 58) the compute makes
// no progress until a collective ends.
class CollectiveSmContention {
 public:
  // A stream on a GPU of `sms` SMs; 0: collectives beside it take none (no CUDA SMs).
  // Requires: sms >= 0.
  explicit CollectiveSmContention(int sms = 0);

  // Starts compute of `work` (its time alone) at `now`; returns when it ends while the CTAs
  // beside it stay as they are, or nothing while they hold every SM (add_ctas gives the end once
  // one is freed). Requires: no compute running.
  std::optional<Picoseconds> start(Picoseconds now, Picoseconds work);
  // A collective of `ctas` CTAs begins (ctas > 0) or ends (ctas < 0) at `now`; returns the
  // running compute's new end, or nothing when no compute runs or every SM is held. Requires:
  // the CTAs held stay >= 0.
  std::optional<Picoseconds> add_ctas(Picoseconds now, int ctas);
  // Whether the running compute ends at `now` (an end computed before a change is stale).
  bool ends_at(Picoseconds now) const { return running_ && !waiting_ && end_ == now; }
  // When the running compute will have done `work` (its time alone, counted from its start) at
  // the share of SMs the CTAs leave it now: `now` if it has; nothing while every SM is held.
  // Requires: a compute running.
  std::optional<Picoseconds> reaches(Picoseconds now, Picoseconds work) const;
  // The running compute has ended (at its end); its time beyond its work alone is added to
  // stretch().
  void finish();
  // The compute work (its time alone) of the finished computes and of the running one up to
  // `now`. Counts only work done in this run of the engine: a steady-state jump (translate) skips
  // periods whose work it does not add, so only differences inside one spell of collectives are
  // read (no spell spans a jump: a cut with collectives in flight never repeats,
  // pipeline_steady_state_cut.cpp).
  Picoseconds work_done(Picoseconds now) const;
  // Records the work done beside a chain of collectives that began when work_done read
  // `chain_start_work`, up to `now`, less what earlier records hold.
  void record_work_beside(Picoseconds now, Picoseconds chain_start_work);
  // Records the work done beside the collectives' spell in flight at `now` since it began (none
  // in flight: nothing), less what earlier records hold.
  void record_work_beside_spell(Picoseconds now);
  // The work recorded beside collectives, in all (none before a steady-state jump: the jump
  // checks, pipeline_steady_state_cut.cpp).
  Picoseconds work_beside_collectives() const { return work_beside_; }
  // Moves the clock of the running compute and of the collectives' last spell by `delta` (a
  // steady-state jump).
  void translate(Picoseconds delta);
  int ctas() const { return ctas_; }
  // What the collectives beside the finished computes added to their time, in all; a steady-state
  // jump adds its periods' share with add_stretch.
  Picoseconds stretch() const { return stretch_; }
  void add_stretch(Picoseconds stretch) { stretch_ += stretch; }

 private:
  // The SMs the CTAs hold, and the compute's end from `now` at that share (nothing: it waits).
  int held_sms() const { return sms_ == 0 ? 0 : std::min(ctas_, sms_); }
  std::optional<Picoseconds> end_from(Picoseconds now) const;
  // Records end_from(now) as the compute's end (or that it waits) and returns it.
  std::optional<Picoseconds> moved_end(Picoseconds now);
  int sms_;
  int ctas_ = 0;
  bool running_ = false;
  bool waiting_ = false;  // every SM held: no end until a collective ends
  double remaining_ = 0;  // picoseconds of work alone left at mark_
  Picoseconds mark_, end_;
  Picoseconds started_, work_;  // of the running compute
  Picoseconds stretch_;
  Picoseconds finished_work_;  // of the finished computes
  // When the collectives' last spell ended (none yet: nothing), and the work done when it began.
  std::optional<Picoseconds> spell_end_;
  Picoseconds spell_start_work_;
  // The work recorded beside collectives, and the work done when the latest record was taken.
  Picoseconds work_beside_, recorded_until_work_;
};

}  // namespace clustersim
