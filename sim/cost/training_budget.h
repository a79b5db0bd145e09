// How much training a job's budget asks for: optimizer steps and tokens.
#pragma once

#include <string>

#include "sim/io/schema/job.pb.h"

namespace clustersim {

// Optimizer steps the budget asks for (rounded up: a partial step still runs).
// Requires: a checked job (epochs come with dataset.num_samples).
double budget_steps(const schema::TrainingJob& job);

// Tokens of `steps` steps of a transformer job (global batch x sequence length each).
double budget_tokens(const schema::TrainingJob& job, double steps);

// `steps` optimizer steps in the unit of the job's budget: "1.2e+15 tokens", "3.5 epochs" or
// "120000 steps".
std::string describe_budget(const schema::TrainingJob& job, double steps);

}  // namespace clustersim
