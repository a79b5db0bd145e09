// Checks of a scenario's parallelism: its degrees, pipeline split, recomputation, expert, ZeRO and
// overlap options against each other and the model, and the SMs its communication kernels
// reserve against the candidate GPUs. Called from load_scenario.
#pragma once

#include "sim/io/catalog.h"
#include "sim/io/field_checker.h"
#include "sim/io/scenario_loader.h"

namespace clustersim {

// Reports the problems of `p` (the scenario's parallelism): its fields against each other and
// against `model` (null: the model did not resolve). Those of a configuration's degrees, which
// sweep axes change, are configuration_problem's (sweep/configuration_checks.h).
void check_parallelism(const FieldChecker& p, const schema::Model* model);

// The SMs communication kernels reserve (expert_communication_sms, expert_combine_sms,
// tensor_overlap_attention_out_sms, tensor_overlap_mlp_down_sms) are taken from the GPU's own,
// leaving the rest to the computation beside them: fewer than every candidate GPU has.
void check_reserved_sms(const FieldChecker& root, const Catalog& catalog,
                        const LoadedScenario& loaded);

}  // namespace clustersim
