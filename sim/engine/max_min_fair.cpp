// Progressive filling for weighted max-min fairness.
//
// Each round: for every constraint with unfixed flows, the level it can give each of them is
// (capacity - load of fixed flows) / (sum of multiplicities of unfixed flows). The smallest level
// is the bottleneck: every unfixed flow using that constraint gets that rate and is fixed.
// Only the constraints the flows use are visited (in the order the flows first use them), so a
// network of thousands of links with a few busy ones costs what the busy ones cost.
#include "sim/engine/max_min_fair.h"

#include <algorithm>
#include <limits>

namespace clustersim {

void MaxMinFair::set_capacities(std::span<const double> capacities) {
  capacities_ = capacities;
  slot_of_.clear();
}

namespace {

// Whether each constraint appears once in `uses`, known from their order (merged uses are sorted).
bool sorted_distinct(std::span<const MaxMinFair::Use> uses) {
  for (size_t i = 1; i < uses.size(); ++i) {
    if (uses[i - 1].constraint >= uses[i].constraint) return false;
  }
  return true;
}

}  // namespace

void MaxMinFair::solve(std::span<const std::span<const Use>> flows, double unconstrained_rate,
                       std::vector<double>* rates) {
  std::vector<double>& rate = *rates;
  // A flow alone, using each constraint once (a transfer alone on its links), gets its tightest
  // constraint's capacity / multiplicity: the first round below, bit for bit, without the rest.
  if (flows.size() == 1 && !flows[0].empty() && sorted_distinct(flows[0])) {
    double level = std::numeric_limits<double>::infinity();
    for (const Use& u : flows[0])
      level = std::min(level, capacities_[u.constraint] / u.multiplicity);
    rate.assign(1, level);
    return;
  }
  rate.assign(flows.size(), 0);
  fixed_.assign(flows.size(), 0);
  used_.clear();
  size_t unfixed = 0;
  for (size_t f = 0; f < flows.size(); ++f) {
    if (flows[f].empty()) {
      rate[f] = unconstrained_rate;
      fixed_[f] = 1;
      continue;
    }
    ++unfixed;
    for (const Use& u : flows[f]) {
      if (static_cast<size_t>(u.constraint) >= slot_of_.size())
        slot_of_.resize(u.constraint + 1, -1);
      if (slot_of_[u.constraint] < 0) {
        slot_of_[u.constraint] = 0;
        used_.push_back(u.constraint);
      }
    }
  }
  const size_t n = used_.size();
  remaining_.resize(n);
  weight_.assign(n, 0);
  user_begin_.assign(n + 1, 0);
  for (size_t s = 0; s < n; ++s) {
    slot_of_[used_[s]] = static_cast<int32_t>(s);
    remaining_[s] = capacities_[used_[s]];
  }
  for (size_t f = 0; f < flows.size(); ++f) {
    for (const Use& u : flows[f]) {
      const int32_t s = slot_of_[u.constraint];
      weight_[s] += u.multiplicity;
      ++user_begin_[s + 1];
    }
  }
  for (size_t s = 0; s < n; ++s) user_begin_[s + 1] += user_begin_[s];
  users_.resize(user_begin_[n]);
  {
    std::vector<int32_t>& next = user_begin_;  // filled back to the row starts below
    for (size_t f = 0; f < flows.size(); ++f) {
      for (const Use& u : flows[f])
        users_[next[slot_of_[u.constraint]]++] = static_cast<int32_t>(f);
    }
    for (size_t s = n; s > 0; --s) next[s] = next[s - 1];
    next[0] = 0;
  }
  while (unfixed > 0) {
    double level = std::numeric_limits<double>::infinity();
    for (size_t s = 0; s < n; ++s) {
      if (weight_[s] > 0) level = std::min(level, std::max(0.0, remaining_[s]) / weight_[s]);
    }
    // Fix every unfixed flow on every constraint at this level (ties fixed together, so the
    // result does not depend on the order of constraints).
    for (size_t s = 0; s < n; ++s) {
      if (weight_[s] <= 0 || std::max(0.0, remaining_[s]) / weight_[s] > level) continue;
      for (int32_t i = user_begin_[s]; i < user_begin_[s + 1]; ++i) {
        const int32_t f = users_[i];
        if (fixed_[f]) continue;
        fixed_[f] = 1;
        rate[f] = level;
        --unfixed;
        for (const Use& u : flows[f]) {
          const int32_t t = slot_of_[u.constraint];
          remaining_[t] -= level * u.multiplicity;
          weight_[t] -= u.multiplicity;
        }
      }
    }
  }
  for (int32_t c : used_) slot_of_[c] = -1;
}

}  // namespace clustersim
