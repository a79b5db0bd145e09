// The configurations a scenario asks about: the cartesian product of its sweep axes over its base
// cluster and parallelism, each either valid or pruned with the reason.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/io/catalog.h"
#include "sim/io/scenario_loader.h"

namespace clustersim {

// One point of the sweep with every degree resolved.
struct Configuration {
  const schema::InstanceType* instance = nullptr;
  int nodes = 0;
  schema::Parallelism parallelism;  // every field set; data_parallel derived when not given
  int gpus() const { return nodes * instance->gpu_count(); }
};

struct ConfigurationSpace {
  std::vector<Configuration> valid;       // in axis order: instance, nodes, tp, pp, mbs, ...
  int64_t total = 0;                      // valid + pruned
  std::map<std::string, int64_t> pruned;  // reason -> count, reasons in a fixed order
};

// Why a configuration cannot run (GPUs not divisible by tp*pp, batch not divisible by
// micro-batch x dp, ...), or "" when it can. Requires: a scenario that loaded without errors.
std::string configuration_problem(const Configuration& config, const LoadedScenario& scenario);

// Expands the scenario's axes in a fixed order. Deterministic: the same scenario always gives
// the same list. Requires: a scenario that loaded without errors.
ConfigurationSpace expand_configurations(const LoadedScenario& scenario);

}  // namespace clustersim
