// Checks of a scenario's pools against its parallel layout, made when it loads: tensor
// parallelism stays inside one pool's NVLink domains, and a mix whose layout is fixed (no sweep
// axis changes it) must fit in the memory of every pool's GPU.
#pragma once

#include "sim/io/catalog.h"
#include "sim/io/field_checker.h"
#include "sim/io/scenario_loader.h"

namespace clustersim {

// Reports at parallelism.tensor_parallel (or the sweep's value) a degree that does not divide a
// pool's NVLink domain, and at cluster.pool[i].instance the pools whose GPU cannot hold the
// fixed layout (the bytes it needs against the GPU's). Requires: `loaded` passed every other
// check (its pools resolved); `catalog` has a runtime "default".
void check_pool_layout(const FieldChecker& root, const Catalog& catalog,
                       const LoadedScenario& loaded);

}  // namespace clustersim
