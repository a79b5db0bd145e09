// Checks of a scenario's input pipeline: the dataset description, its storage volumes (the job's
// or the sweep's) and the data loader, against the model and every candidate instance. Called
// once from load_scenario.
#pragma once

#include "sim/io/catalog.h"
#include "sim/io/field_checker.h"
#include "sim/io/scenario_loader.h"

namespace clustersim {

// Reports every problem of `root`'s job.dataset and job.dataloader and of the sweep's input axes
// (dataset_storage, dataloader_workers_per_gpu; an error without a dataloader). Requires:
// `loaded`'s model and instances resolved as far as they could be.
void check_input(const FieldChecker& root, const Catalog& catalog, const LoadedScenario& loaded);

}  // namespace clustersim
