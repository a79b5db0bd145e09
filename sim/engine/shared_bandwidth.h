// Transfers of bytes over shared capacities (links): every active transfer advances at its
// max-min fair rate (max_min_fair.h), recomputed once per timestamp in which transfers start or
// end. Only the transfers connected (through shared constraints, transitively) to one that
// started or ended are re-rated: max-min fairness decomposes over such components, and the solver
// gives a component's flows, taken in the same order, the same rates bit for bit whatever other
// components it solves beside them. Transfers over equal uses share one stored list
// (use_list_store.h), and a component solved before gets its remembered rates
// (max_min_fair_memo.h). The model answers two questions, as in SimGrid's resource
// models: when does the next transfer end, and how far has each advanced by then.
//
// Each active transfer keeps its neighbours (the active transfers it shares a constraint with),
// found once when it starts, so the transfers connected to a change are found without visiting
// its constraints; one with more than kMaxNeighbours (many transfers on one link, where lists of
// neighbours would grow as their square) is crowded: its neighbours are found on its constraints'
// users instead. A transfer's progress is brought up to date only when its rate changes, and its
// end time is computed then and kept in a heap: a timestamp costs what its connected transfers
// cost, not the number of transfers in flight elsewhere.
//
// Not thread-safe. Knows nothing of networks: a "constraint" is any capacity in bytes per second.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "sim/engine/max_min_fair.h"
#include "sim/engine/max_min_fair_memo.h"
#include "sim/engine/simulation.h"
#include "sim/engine/use_list_store.h"

namespace clustersim {

class SharedBandwidth : private EventHandler, private Settler {
 public:
  // Requires: `sim` outlives this object.
  explicit SharedBandwidth(Simulation* sim) : sim_(sim) {}
  // With the capacities of constraints 0..n-1 given at once (each > 0), read in place: building
  // costs nothing per constraint until the first transfer starts.
  // Requires: `sim` and `capacities` outlive this object; no add_constraint.
  SharedBandwidth(Simulation* sim, std::span<const double> capacities)
      : sim_(sim), capacities_(capacities) {}

  // Adds a capacity of `bytes_per_second`; returns its id. Requires: no transfer started yet.
  int32_t add_constraint(double bytes_per_second);

  // Moves `bytes` through `uses` (each constraint's multiplicity counts against its capacity),
  // starting after `latency`; calls `done` when the last byte has arrived. A transfer with no use
  // takes only its latency. Requires: bytes >= 0. Returns the transfer's id, which a later
  // transfer reuses once this one has ended (ids stay below the most transfers ever active or
  // waiting out their latency at once).
  // The uses are copied, once per distinct list. Cost: O(uses) plus one event, no allocation
  // beyond amortised growth.
  int64_t start(double bytes, const std::vector<MaxMinFair::Use>& uses, Picoseconds latency,
                std::function<void()> done) {
    return start_interned(bytes, intern_uses(uses), latency, std::move(done));
  }
  // start() over the uses named `uses` (intern_uses), for a caller that starts the same uses again
  // and again.
  int64_t start_interned(double bytes, int32_t uses, Picoseconds latency,
                         std::function<void()> done);
  // The id of a list of uses equal to `uses`, kept from now on. Requires: known constraints.
  int32_t intern_uses(std::span<const MaxMinFair::Use> uses);
  // The uses named `uses`; valid until the next intern_uses or start.
  std::span<const MaxMinFair::Use> uses(int32_t uses) const { return use_lists_.get(uses); }

  // Current rate of an active transfer in bytes per second (0 while in its latency or done).
  double rate(int64_t transfer) const;
  size_t active_transfers() const { return active_count_; }
  // Bytes moved through a constraint by the transfers started so far (multiplicity counted), for
  // conservation checks.
  double bytes_through(int32_t constraint) const {
    return static_cast<size_t>(constraint) < bytes_through_.size() ? bytes_through_[constraint] : 0;
  }

  // Writes transfer `transfer` (not ended) into `f` (state_fingerprint.h): as an object of this,
  // then its uses, what remains of it and, once it moves, its rate, times and order of activation.
  // The owner of each transfer describes it; then fingerprint().
  void describe_transfer(int64_t transfer, StateFingerprint* f) const;
  // Completes `f` once the owners described their transfers: incomparable unless every transfer
  // not ended was described; the pending wake-up.
  void fingerprint(StateFingerprint* f) const;
  // Moves every time kept `delta` later (Simulation::translate).
  void translate(Picoseconds delta);

 private:
  struct Transfer {
    double remaining_bytes;  // as of `updated`
    double rate = 0;
    Picoseconds updated;                   // when remaining_bytes was last brought up to date
    Picoseconds end = Picoseconds::max();  // at the current rate
    uint64_t version = 0;                  // of `end`: heap entries of older versions are stale
    int32_t uses = 0;                      // in use_lists_
    std::function<void()> done;
    bool active = false;
    uint64_t activation = 0;  // order of activation: the order flows are given to the solver
    uint64_t seen = 0;        // stamp of on_event, settle and collect_affected
    // While active and not crowded: every active transfer sharing a constraint with it.
    std::vector<int64_t> neighbours;
    bool crowded = false;  // had more than kMaxNeighbours since it became active
  };
  struct End {
    int64_t time;
    int64_t id;
    uint64_t version;
  };
  std::span<const MaxMinFair::Use> uses_of(const Transfer& t) const {
    return use_lists_.get(t.uses);
  }
  enum : uint64_t { kWakeUp = 1ull << 63 };
  static constexpr size_t kMaxNeighbours = 32;

  // Lists `neighbour` among t's neighbours, or makes t crowded.
  void add_neighbour(Transfer* t, int64_t neighbour);
  // Takes ended `neighbour` off t's list (a crowded t keeps none).
  void forget_neighbour(Transfer* t, int64_t neighbour);

  void on_event(uint64_t tag) override;  // a transfer's latency ended, or a wake-up
  void describe_event(uint64_t tag, StateFingerprint* f) const override;
  void settle() override;  // finish, re-rate, schedule next wake-up
  void recompute_rates();
  // Fills affected_ with the active transfers connected to started_, neighbours_of_ended_ and the
  // users of freed_, in activation order, and empties those three.
  void collect_affected();
  bool stale(const End& end) const;
  void pop_end();
  void schedule_wake_up();
  // Makes the per-constraint state (users, stamps, bytes), once all constraints are known.
  void make_constraint_state();

  Simulation* sim_;
  UseListStore use_lists_;
  MaxMinFairMemo solver_;
  std::span<const double> capacities_;  // owned_capacities_, or given at construction
  std::vector<double> owned_capacities_;
  std::vector<double> bytes_through_;
  std::vector<Transfer> transfers_;
  std::vector<int64_t> free_ids_;  // slots of ended transfers, reused by start()
  size_t active_count_ = 0;
  std::vector<End> ends_;  // min-heap on time of the active transfers' ends (and stale entries)
  std::vector<int32_t> flows_;     // scratch of recompute_rates: the affected transfers' uses
  std::vector<int64_t> finished_;  // scratch of settle
  std::vector<std::vector<int64_t>> users_;  // per constraint, the active transfers using it
  std::vector<int64_t> started_;             // activated since the last re-rating
  std::vector<int64_t> neighbours_of_ended_;  // listed by a transfer ended since then
  std::vector<int32_t> freed_;  // used by a crowded transfer ended since then
  std::vector<int64_t> affected_;            // scratch of collect_affected
  std::vector<uint64_t> constraint_seen_;    // likewise, stamp per constraint
  uint64_t stamp_ = 0;
  uint64_t activations_ = 0;
  uint64_t wake_up_generation_ = 0;
  Picoseconds wake_up_at_ = Picoseconds::max();  // of the current generation
};

}  // namespace clustersim
