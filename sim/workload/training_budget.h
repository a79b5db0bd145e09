// How many optimizer steps a job's budget (tokens, epochs or steps) asks for.
#pragma once

#include "sim/io/schema/job.pb.h"

namespace clustersim {

// Optimizer steps of `job`'s budget, rounded up (a partial step still runs).
// Requires: a checked job (a budget is set; epochs come with dataset.num_samples).
double budget_steps(const schema::TrainingJob& job);

}  // namespace clustersim
