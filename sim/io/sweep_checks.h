// Checks of a scenario's sweep: its axes and auto_parallelism, hybrid sharding's groups against
// the ZeRO stages and the data-parallel degrees, and the constraints. Called from load_scenario.
#pragma once

#include "sim/io/catalog.h"
#include "sim/io/field_checker.h"
#include "sim/io/scenario_loader.h"

namespace clustersim {

// Reports the problems of `sweep` (the scenario's sweep, its ranges expanded): its axes against
// `scenario`'s parallelism and `model` (null: the model did not resolve), the instances its
// constraints cap against `catalog`.
void check_sweep(const FieldChecker& sweep, const schema::Scenario& scenario,
                 const schema::Model* model, const Catalog& catalog);

// Warns of each value of the cluster, the parallelism or the input pipeline that the sweep's axis
// for it replaces without simulating it (warn_if_replaced_by_axis).
void warn_replaced_by_axes(const FieldChecker& root);

// Warns of each parallelism value beside sweep.auto_parallelism that its search never reaches
// (a micro-batch outside its candidates, more stages, chunks or context-parallel ranks than its
// caps, a schedule it does not try). A value inside the search is one of its configurations: no
// warning, as for an axis that lists the value.
void warn_outside_auto_parallelism(const FieldChecker& root, const schema::Scenario& scenario);

// Each sweep.data_parallel_shard value must divide the data-parallel degree of some candidate: the
// scenario's data_parallel, or the GPUs of an instance x nodes over a listed TP x CP x PP (any of
// their divisors under auto_parallelism). A mix is left to each configuration (no ZeRO-3 there).
void check_shard_axis(const FieldChecker& root, const LoadedScenario& loaded);

}  // namespace clustersim
