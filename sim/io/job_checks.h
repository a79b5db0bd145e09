// Checks of a scenario's training job: its batch, budget, precision and options, against the
// model it trains; and the model as the job trains it. Called once from load_scenario.
#pragma once

#include "sim/io/field_checker.h"
#include "sim/io/scenario_loader.h"

namespace clustersim {

// Reports every problem of `job` (the scenario's job), against `model` where it is known (null:
// the model did not resolve).
void check_job(const FieldChecker& job, const schema::Model* model);

// The model as the job trains it (LoadedScenario::model): a copy of the catalog's when the job
// sets its own multi_token_prediction_layers, which check_job has found sound.
void apply_job_to_model(LoadedScenario* loaded);

}  // namespace clustersim
