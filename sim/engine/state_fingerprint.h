// A canonical record of a simulation's state at one instant, for proving that a run has come back
// to an earlier state shifted in time. Times are written relative to that instant, doubles bit for
// bit, and objects (transfers, event handlers, ...) by the order in which the record first
// mentions them; counters that only order things (event sequence numbers, activation counts) are
// written as differences or not at all. So two states that evolve identically up to a shift in
// time give equal records, provided every component writes everything its future depends on.
// Whatever has no canonical form (an opaque callback) makes the record incomparable: equal to
// none.
//
// Knows nothing of what the words mean: each component writes its own part.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "sim/util/units.h"

namespace clustersim {

class EventHandler;

class StateFingerprint {
 public:
  explicit StateFingerprint(Picoseconds now) : now_(now) {}

  void add(int64_t value) { words_.push_back(value); }
  // `time` relative to the instant of the record; Picoseconds::max() (never) stays distinct.
  void add_time(Picoseconds time);
  void add_bits(double value);
  // The canonical number of object `id` of `owner` (the object that hands out such ids, from 0;
  // -1 stands for the owner itself): the order of its first mention in this record.
  void add_object(const void* owner, int64_t id);
  // An event handler as an object. Each handler that describes its events mentions itself
  // before the events are written, so that the events' formats follow from the record.
  void add_handler(const EventHandler* handler) { add_object(handler, -1); }
  // Objects of `owner` mentioned so far.
  size_t objects_of(const void* owner) const;

  void make_incomparable() { comparable_ = false; }
  bool comparable() const { return comparable_; }
  uint64_t hash() const;
  // Equal records of comparable states: the states are the same up to the shift in time.
  bool operator==(const StateFingerprint& other) const {
    return comparable_ && other.comparable_ && words_ == other.words_;
  }

 private:
  Picoseconds now_;
  bool comparable_ = true;
  std::vector<int64_t> words_;
  std::map<std::pair<const void*, int64_t>, int64_t> objects_;  // -> canonical number
  std::map<const void*, size_t> objects_per_owner_;
};

}  // namespace clustersim
