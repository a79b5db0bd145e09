// Max-min fair sharing of capacities among flows, as pure math: constraints (links) have a
// capacity, each flow uses some constraints, possibly several times (a flow that crosses a link
// twice consumes twice its rate there). Every flow through the tightest constraint gets the same
// rate; those flows are then fixed and the rest share what is left (progressive filling).
//
// Knows nothing of networks, bytes or time. Not thread-safe (keeps scratch space between solves);
// cheap to reuse.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace clustersim {

class MaxMinFair {
 public:
  // One use of a constraint by a flow: `multiplicity` times its rate counts against `constraint`.
  struct Use {
    int32_t constraint;
    int32_t multiplicity;
  };

  // Replaces all constraints, read in place. Requires: every capacity > 0; `capacities` outlives
  // the solves.
  void set_capacities(std::span<const double> capacities);

  // Sets rates[i] to the rate of flows[i] (a list of uses; a flow with no use is unconstrained
  // and gets `unconstrained_rate`). Requires: every constraint index is valid, multiplicities > 0.
  // Cost: O(uses x distinct bottleneck levels), independent of the number of constraints unused.
  void solve(std::span<const std::span<const Use>> flows, double unconstrained_rate,
             std::vector<double>* rates);

 private:
  std::span<const double> capacities_;
  // Scratch, indexed by the slot of a constraint in use (slot_of_ maps constraint -> slot).
  std::vector<int32_t> slot_of_;  // -1 when unused by the current flows; grown on first use
  std::vector<int32_t> used_;     // constraints in use, in first-use order
  std::vector<double> remaining_, weight_;
  std::vector<int32_t> user_begin_, users_;  // flows using each slot (compressed rows)
  std::vector<char> fixed_;
};

}  // namespace clustersim
