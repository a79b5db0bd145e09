// A scenario that is one configuration (no sweep axis adds another) whose layout cannot run is
// an error of its file, at the field to correct, when it loads: "parallelism.expert_parallel:
// expert tensor x expert parallel does not divide the GPUs of a pipeline stage: ...". A sweep
// prunes such candidates instead and counts them by reason.
#pragma once

#include "sim/io/field_checker.h"
#include "sim/io/scenario_loader.h"

namespace clustersim {

// Requires: `loaded` passed every other check.
void check_fixed_layout(const FieldChecker& root, const LoadedScenario& loaded);

}  // namespace clustersim
