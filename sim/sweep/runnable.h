// Whether any configuration of a scenario can run at all: one that is valid and fits in GPU
// memory, found by streaming through its configuration space and stopping at the first; or why
// none can (the pruning reasons, or the configuration closest to fitting). Every command asks
// this, so that a scenario nothing of which runs is an error everywhere, not "ok" in one command
// and an empty answer in another.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "sim/io/catalog.h"
#include "sim/sweep/configuration_space.h"

namespace clustersim {

struct Runnability {
  int64_t candidates = 0;
  int64_t valid = 0;  // counted up to the first that fits
  std::map<std::string, int64_t> pruned;  // reason -> candidates, up to the first that fits
  bool runs = false;                      // some valid configuration fits in GPU memory
  // When none fits: the valid configuration short of the least memory, and by how much.
  std::optional<Configuration> closest;
  double closest_missing_bytes = 0;

  // Why nothing runs ("no valid configuration among 12: 12 pruned: ...", "none of the 4 valid
  // configurations fits in GPU memory; the closest, aws.p5.48xlarge x 1, TP 8 PP 1 DP 1 mbs 1,
  // is 12.3 GiB short"); "" when something does.
  std::string reason() const;
};

// Requires: a scenario that loaded without errors; catalog with a runtime "default".
// Cost: the memory model of every valid configuration up to the first that fits.
Runnability check_runnable(const Catalog& catalog, const LoadedScenario& scenario);

// "aws.p5.48xlarge x 2, TP 8 PP 1 DP 2 mbs 1, RECOMPUTE_FULL": its result row's words
// (describe_configuration), every choice at its default left out.
std::string describe(const Configuration& configuration);

}  // namespace clustersim
