// Checks of a scenario's cluster: its instance types (or pools) resolved against the catalog,
// each candidate's GPU against the job's precision and the parallelism's needs, and the size of
// every candidate cluster. Called from load_scenario.
#pragma once

#include "sim/io/catalog.h"
#include "sim/io/field_checker.h"
#include "sim/io/scenario_loader.h"

namespace clustersim {

// Reports every problem of the cluster, its pools and the sweep's instances, and resolves into
// `loaded` its fabric, candidate instances and pools' instances.
void check_cluster(const FieldChecker& root, const Catalog& catalog, LoadedScenario* loaded);

// Every candidate cluster (instance x nodes) must have at most kMaxConfigurationGpus GPUs.
void check_cluster_size(const FieldChecker& root, const LoadedScenario& loaded);

}  // namespace clustersim
