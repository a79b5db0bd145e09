// Checks of a serving scenario's expert parallelism (deployment.expert_parallel and its sweep
// axis): each degree at least 1, splitting the model's experts, and dividing the tensor
// parallelism it splits: the deployment's (every pool's, when disaggregated); with a sweep of
// either, at least one swept tensor-parallel degree (the others' configurations are left out,
// serving_problem).
#pragma once

#include "sim/io/field_checker.h"
#include "sim/serve/serving_scenario.h"

namespace clustersim {

void check_expert_parallel(const FieldChecker& root, const LoadedServingScenario& loaded);

}  // namespace clustersim
