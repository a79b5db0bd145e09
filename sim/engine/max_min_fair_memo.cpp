// Rates looked up by the ids of the flows' use lists, solved on a miss.
#include "sim/engine/max_min_fair_memo.h"

#include "sim/util/fnv1a.h"

namespace clustersim {

void MaxMinFairMemo::set_capacities(std::span<const double> capacities) {
  solver_.set_capacities(capacities);
  rates_.clear();
  flows_kept_ = 0;
}

size_t MaxMinFairMemo::FlowsHash::operator()(const std::vector<int32_t>& flows) const {
  Fnv1a hash;
  for (int32_t id : flows) hash.add(static_cast<uint32_t>(id));
  return static_cast<size_t>(hash.value());
}

const std::vector<double>& MaxMinFairMemo::solve(std::span<const int32_t> flows,
                                                 const UseListStore& store,
                                                 double unconstrained_rate) {
  key_.assign(flows.begin(), flows.end());
  if (auto it = rates_.find(key_); it != rates_.end()) return it->second;
  if (flows_kept_ + flows.size() > kMaxFlows) {
    rates_.clear();
    flows_kept_ = 0;
  }
  flows_kept_ += flows.size();
  uses_.clear();
  for (int32_t id : flows) uses_.push_back(store.get(id));
  std::vector<double>& rates = rates_[key_];
  solver_.solve(uses_, unconstrained_rate, &rates);
  return rates;
}

}  // namespace clustersim
