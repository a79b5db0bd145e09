// Where each part of a mix's job runs, in words for the results' pool_placement column: which
// pool holds which pipeline stages (a pipeline across pools) or how many data-parallel replicas
// and the micro-batches each replica takes (data-parallel pools: the balance the step model chose).
#pragma once

#include <string>

#include "sim/sweep/configuration_space.h"
#include "sim/sweep/evaluation.h"

namespace clustersim {

// The pools in their order, joined by " + ", each as "INSTANCE: PART":
//   data-parallel pools   "aws.p5.48xlarge: 2 replicas x 40 micro-batches + aws.p4d.24xlarge:
//                          2 replicas x 24 micro-batches" (per replica: the busiest replica's
//                          count, as the step simulates every replica of its pool)
//   pipeline across pools "aws.p5.48xlarge: stages 1-2 (layers 28+27) + aws.p4d.24xlarge:
//                          stages 3-4 (layers 13+12)" ("stage 3" when one; each stage's layers,
//                          its model chunks together)
// Without a simulated step (out of memory) the micro-batches and layers are left out. Empty for
// a configuration that is not a mix (one instance type, or one pool).
std::string describe_pool_placement(const Configuration& configuration,
                                    const Evaluation& evaluation);

}  // namespace clustersim
