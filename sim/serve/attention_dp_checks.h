// Checks of a serving scenario's attention data parallelism (deployment.attention_data_parallel
// and its sweep axis): a mixture of experts whose experts split over all the replica's GPUs
// (expert_parallel = tensor_parallel >= 2, where neither is swept; swept ones leave the other
// configurations out, serving_problem), and none of what is not simulated with it: static
// batching, pipeline parallelism, beams, speculative decoding, disaggregated pools, prefix
// caching of shared prefixes; deployment.moe_token_exchange only with it, ALL_TO_ALL only on
// NVSwitch instances. Each an error at the field to change.
#pragma once

#include "sim/io/catalog.h"
#include "sim/io/field_checker.h"
#include "sim/serve/serving_scenario.h"

namespace clustersim {

void check_attention_data_parallel(const FieldChecker& root, const Catalog& catalog,
                                   const LoadedServingScenario& loaded);

}  // namespace clustersim
