// How much training a job's budget asks for: optimizer steps and tokens.
#pragma once

#include "sim/io/schema/job.pb.h"

namespace clustersim {

// Optimizer steps the budget asks for (rounded up: a partial step still runs).
// Requires: a checked job (epochs come with dataset.num_samples).
double budget_steps(const schema::TrainingJob& job);

// Tokens of `steps` steps of a transformer job (global batch x sequence length each).
double budget_tokens(const schema::TrainingJob& job, double steps);

}  // namespace clustersim
