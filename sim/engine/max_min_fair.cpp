// Progressive filling for weighted max-min fairness.
//
// Each round: for every constraint with unfixed flows, the level it can give each of them is
// (capacity - load of fixed flows) / (sum of multiplicities of unfixed flows). The smallest level
// is the bottleneck: every unfixed flow using that constraint gets that rate and is fixed.
#include "sim/engine/max_min_fair.h"

#include <algorithm>
#include <limits>

namespace clustersim {

std::vector<double> MaxMinFair::solve(const std::vector<std::vector<Use>>& flows,
                                      double unconstrained_rate) const {
  const size_t n_constraints = capacities_.size();
  std::vector<double> rate(flows.size(), 0);
  std::vector<char> fixed(flows.size(), 0);
  std::vector<double> remaining = capacities_;
  std::vector<double> weight(n_constraints, 0);  // sum of multiplicities of unfixed flows
  // Flows using each constraint, so that fixing a bottleneck touches only its flows.
  std::vector<std::vector<int32_t>> users(n_constraints);
  size_t unfixed = 0;
  for (size_t f = 0; f < flows.size(); ++f) {
    if (flows[f].empty()) {
      rate[f] = unconstrained_rate;
      fixed[f] = 1;
      continue;
    }
    ++unfixed;
    for (const Use& u : flows[f]) {
      weight[u.constraint] += u.multiplicity;
      users[u.constraint].push_back(static_cast<int32_t>(f));
    }
  }
  while (unfixed > 0) {
    double level = std::numeric_limits<double>::infinity();
    for (size_t c = 0; c < n_constraints; ++c) {
      if (weight[c] > 0) level = std::min(level, std::max(0.0, remaining[c]) / weight[c]);
    }
    // Fix every unfixed flow on every constraint at this level (ties fixed together, so the
    // result does not depend on the order of constraints).
    for (size_t c = 0; c < n_constraints; ++c) {
      if (weight[c] <= 0 || std::max(0.0, remaining[c]) / weight[c] > level) continue;
      for (int32_t f : users[c]) {
        if (fixed[f]) continue;
        fixed[f] = 1;
        rate[f] = level;
        --unfixed;
        for (const Use& u : flows[f]) {
          remaining[u.constraint] -= level * u.multiplicity;
          weight[u.constraint] -= u.multiplicity;
        }
      }
    }
  }
  return rate;
}

}  // namespace clustersim
