// Max-min fair rates (max_min_fair.h) remembered per set of flows: a simulation re-rates the same
// few sets of transfers (the same rings, started again and again) thousands of times, and the
// solver's rates depend only on the flows' uses, in order, and the capacities. A set seen before
// gets the rates it got then, bit for bit, without solving.
//
// The sets kept hold at most kMaxFlows flows in all; when full, all are forgotten (the next
// solves refill it), so memory stays bounded (a few MiB), also where components are large and
// rarely repeat, and the rates never depend on what was kept. Not thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "sim/engine/max_min_fair.h"
#include "sim/engine/use_list_store.h"

namespace clustersim {

class MaxMinFairMemo {
 public:
  static constexpr size_t kMaxFlows = 1 << 14;

  // As MaxMinFair::set_capacities; forgets every set.
  void set_capacities(std::span<const double> capacities);

  // The rates MaxMinFair::solve gives flows store.get(flows[0]), store.get(flows[1]), ... (in that
  // order); valid until the next call. Requires: `store` is the same for every call since
  // set_capacities, and as MaxMinFair::solve. Cost: O(flows) for a set seen before.
  const std::vector<double>& solve(std::span<const int32_t> flows, const UseListStore& store,
                                   double unconstrained_rate);

 private:
  struct FlowsHash {
    size_t operator()(const std::vector<int32_t>& flows) const;
  };
  MaxMinFair solver_;
  std::unordered_map<std::vector<int32_t>, std::vector<double>, FlowsHash> rates_;
  size_t flows_kept_ = 0;  // in rates_
  std::vector<int32_t> key_;                           // scratch of solve
  std::vector<std::span<const MaxMinFair::Use>> uses_;  // likewise
};

}  // namespace clustersim
