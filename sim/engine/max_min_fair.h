// Max-min fair sharing of capacities among flows, as pure math: constraints (links) have a
// capacity, each flow uses some constraints, possibly several times (a flow that crosses a link
// twice consumes twice its rate there). Every flow through the tightest constraint gets the same
// rate; those flows are then fixed and the rest share what is left (progressive filling).
//
// Knows nothing of networks, bytes or time. Not thread-safe; cheap to reuse across solves.
#pragma once

#include <cstdint>
#include <vector>

namespace clustersim {

class MaxMinFair {
 public:
  // One use of a constraint by a flow: `multiplicity` times its rate counts against `constraint`.
  struct Use {
    int32_t constraint;
    int32_t multiplicity;
  };

  // Replaces all constraints. Requires: every capacity > 0.
  void set_capacities(std::vector<double> capacities) { capacities_ = std::move(capacities); }
  const std::vector<double>& capacities() const { return capacities_; }

  // Rates of `flows` (each a list of uses; a flow with no use is unconstrained and gets
  // `unconstrained_rate`). Requires: every constraint index is valid, multiplicities > 0.
  // Cost: O(total uses x distinct bottleneck levels).
  std::vector<double> solve(const std::vector<std::vector<Use>>& flows,
                            double unconstrained_rate) const;

 private:
  std::vector<double> capacities_;
};

}  // namespace clustersim
