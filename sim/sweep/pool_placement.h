// Where each part of a mix's job runs, in words for the results' pool_placement column: which
// pool holds which pipeline stages (a pipeline across pools) or how many data-parallel replicas
// and the micro-batches each replica takes (data-parallel pools: the balance the step model chose).
#pragma once

#include <string>

#include "sim/sweep/configuration_space.h"
#include "sim/sweep/evaluation.h"

namespace clustersim {

// The pools in their order, joined by " + ", each as "INSTANCE: PART":
//   data-parallel pools   "aws.p5.48xlarge: 1 replica takes 176 of 256 micro-batches +
//                          aws.p4d.24xlarge: 1 replica takes 80 of 256 micro-batches": each
//                          pool's share of the step's micro-batches, its replicas together;
//                          " (at most 23 each)" after it when they do not split evenly over its
//                          replicas (the step times each as the busiest)
//   pipeline across pools "aws.p5.48xlarge: stages 1-2 (layers 28+27) + aws.p4d.24xlarge:
//                          stages 3-4 (layers 13+12)" ("stage 3" when one; each stage's layers,
//                          its model chunks together)
// Without a simulated step (out of memory) the micro-batches and layers are left out. No comma:
// a CSV cell of it needs no quotes. Empty for a configuration that is not a mix (one instance
// type, or one pool).
std::string describe_pool_placement(const Configuration& configuration,
                                    const Evaluation& evaluation);

}  // namespace clustersim
