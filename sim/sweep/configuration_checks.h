// Why a configuration cannot run: the structural checks of one point of the sweep (its degrees
// against the GPUs and the global batch, the pipeline's layout, a mix's pools, the combinations
// the simulated runtimes refuse), each naming the scenario field to correct.
#pragma once

#include <string>
#include <utility>

#include "sim/io/scenario_loader.h"
#include "sim/sweep/configuration_space.h"

namespace clustersim {

// Why a configuration cannot run, and where a scenario of that one configuration is wrong.
struct ConfigurationProblem {
  ConfigurationProblem() = default;
  ConfigurationProblem(std::string why, std::string field_path, std::string numbers = "")
      : reason(std::move(why)), field(std::move(field_path)), detail(std::move(numbers)) {}

  // The same words for every configuration pruned for this reason (a sweep counts them by it);
  // "" when the configuration can run.
  std::string reason;
  // The scenario field to correct when the configuration is the scenario's only one, as a path
  // from the file's root ("parallelism.expert_parallel"); set with the reason.
  std::string field;
  // This configuration's numbers behind the reason ("256 does not divide the 128 GPUs"); may be "".
  std::string detail;

  bool empty() const { return reason.empty(); }
};

// Why a configuration cannot run (GPUs not divisible by tp*cp*pp, batch not divisible by
// micro-batch x dp, outside the GPU-count constraints, a pipeline layout or a context-parallel
// split that does not divide, ...), or an empty problem when it can.
// Requires: a scenario that loaded without errors.
ConfigurationProblem configuration_problem(const Configuration& config,
                                           const LoadedScenario& scenario);

}  // namespace clustersim
