// The load balancer's view of a pool: each unit's load (its requests outstanding), and the unit
// of least load, the lowest index among equals, kept in a tournament tree: the choice costs
// O(1) and a load set O(log units), so that a pool of many idle replicas costs nothing per
// arrival (a scan of every unit's load did). Optionally the most load too (PREFIX_AWARE routing
// compares both). Deterministic. It also counts the units with any load (busy), and the most at
// once, over one pool or over several sharing a count (a disaggregated deployment's two pools).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace clustersim {

// Units with a load above 0 now, and the most at once so far.
struct BusyUnits {
  int64_t now = 0, peak = 0;
};

class LeastLoaded {
 public:
  // `units` >= 1, every load 0. `busy`: a count shared with other pools (null: its own).
  explicit LeastLoaded(size_t units, bool track_most = false, BusyUnits* busy = nullptr);

  void set(size_t unit, int64_t load);
  int64_t load(size_t unit) const { return loads_[unit]; }
  // The unit of least load, the lowest index among equals.
  size_t least() const { return least_[1]; }
  // The most load of any unit. Requires: constructed with track_most.
  int64_t most() const { return loads_[most_[1]]; }
  size_t size() const { return loads_.size(); }
  // The most units (of every pool sharing the count) with a load above 0 at once.
  int64_t peak_busy() const { return (shared_ != nullptr ? *shared_ : own_).peak; }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;  // a padding leaf's winner
  // The winner of two subtrees' winners, `a` the left one's (lower indices: it wins ties).
  uint32_t lesser(uint32_t a, uint32_t b) const;
  uint32_t greater(uint32_t a, uint32_t b) const;

  size_t leaves_ = 1;            // a power of two >= units; node i's children 2i and 2i + 1
  std::vector<int64_t> loads_;   // per unit
  std::vector<uint32_t> least_;  // per node (1 the root, leaves_ + u unit u's leaf): its winner
  std::vector<uint32_t> most_;   // the same for the most load; empty unless tracked
  BusyUnits own_;                 // the count, unless shared
  BusyUnits* shared_ = nullptr;   // a count shared with other pools
};

}  // namespace clustersim
