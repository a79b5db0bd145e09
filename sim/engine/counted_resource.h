// CountedResource: a pool of N identical units (dataloader workers, CPU cores, DMA engines) that
// holders acquire and release. Owns the FIFO of waiting acquirers and the pool's counters.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>

#include "sim/engine/simulation.h"

namespace clustersim {

// N interchangeable units, granted first come, first served. A grant never runs inside the call
// that caused it: `granted` always runs in its own zero-delay event, so an acquire() that finds a
// free unit returns before its callback runs, and grants at one timestamp run in the order they
// were made. A unit released while others wait passes straight to the oldest waiter, so it never
// appears free in between.
//
// Ownership: borrows `sim`, which must outlive this object. The pool schedules events with itself
// as handler, so it must outlive every grant it made (destroy it after the simulation stops
// running). Not thread-safe, like its Simulation.
class CountedResource final : public EventHandler {
 public:
  // Requires: units >= 1.
  CountedResource(Simulation* sim, uint64_t units);
  CountedResource(const CountedResource&) = delete;
  CountedResource& operator=(const CountedResource&) = delete;

  // Asks for one unit; `granted` runs (at now() if one is free, else at the release that frees
  // one for it) and from then the caller holds the unit until it calls release().
  // Requires: `granted` non-empty. Cost: O(1) amortised, plus one event per grant
  // (O(log events queued)).
  void acquire(std::function<void()> granted);

  // Gives back one held unit: to the oldest waiter if any (its `granted` runs at now(), in its
  // own event), else to the pool. Requires: units_in_use() > 0. Cost: as acquire().
  void release();

  uint64_t units() const { return units_; }
  // Units granted (including grants whose callback has not run yet) and not released.
  uint64_t units_in_use() const { return in_use_; }
  // Acquirers waiting for a unit now, and the most that ever waited at once.
  uint64_t waiters() const { return waiting_.size(); }
  uint64_t peak_waiters() const { return peak_waiters_; }
  // Grants made so far, immediate or after a wait.
  uint64_t grants() const { return grants_; }

 private:
  void grant(std::function<void()> granted);
  void on_event(uint64_t tag) override;

  Simulation* sim_;
  uint64_t units_;
  uint64_t in_use_ = 0;
  uint64_t peak_waiters_ = 0;
  uint64_t grants_ = 0;
  std::deque<std::function<void()>> waiting_;   // acquirers without a unit, oldest first
  std::deque<std::function<void()>> granting_;  // granted, callback event not yet run, FIFO
};

}  // namespace clustersim
