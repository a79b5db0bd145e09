// Lists of constraint uses (MaxMinFair::Use) stored once each and named by a dense id: transfers
// over the same routes share one list, and a set of flows is named by its lists' ids (which is
// what max_min_fair_memo.h keys its rates by).
//
// Ids are given in order of first intern and never change; lists are never removed (a simulation
// starts few distinct ones: the same rings and routes again and again). Not thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "sim/engine/max_min_fair.h"

namespace clustersim {

class UseListStore {
 public:
  // The id of a list equal to `uses` (same constraints and multiplicities in the same order),
  // stored now if none is. Cost: O(uses).
  int32_t intern(std::span<const MaxMinFair::Use> uses);
  // The list named `id`; valid until the next intern.
  std::span<const MaxMinFair::Use> get(int32_t id) const {
    return std::span(uses_).subspan(begin_[id], begin_[id + 1] - begin_[id]);
  }
  size_t size() const { return begin_.size() - 1; }

 private:
  std::vector<MaxMinFair::Use> uses_;  // all lists, one after the other
  std::vector<size_t> begin_{0};       // list i is uses_[begin_[i], begin_[i + 1])
  std::unordered_multimap<uint64_t, int32_t> by_hash_;
};

}  // namespace clustersim
