// Checks of deployment.scheduler.cuda_graph_batch_sizes (CUDA graphs with padding,
// cuda_graph_padding.h): positive and strictly increasing; continuous batching only; and none of
// what is not simulated with it: speculative decoding, beam search. Each an error at the field to
// change. (Under attention data parallelism, its own checks: attention_dp_checks.h.)
#pragma once

#include "sim/io/field_checker.h"

namespace clustersim {

void check_cuda_graph_batch_sizes(const FieldChecker& root);

}  // namespace clustersim
