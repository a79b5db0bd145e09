// Checks of single catalog entries (GPU, instance type, storage tier, fabric, model) that need no
// other entry. References between entries are checked by the Catalog once everything is loaded.
#pragma once

#include "sim/io/field_checker.h"

namespace clustersim {

// Each function reports every problem of the entry at `entry` (a checker on the entry message).
void check_gpu(const FieldChecker& entry);
void check_instance(const FieldChecker& entry);
void check_storage(const FieldChecker& entry);
void check_fabric(const FieldChecker& entry);
void check_link_class(const FieldChecker& entry);
void check_runtime(const FieldChecker& entry);
void check_serving_runtime(const FieldChecker& entry);
void check_model(const FieldChecker& entry);  // in model_checks.cpp
// One price of an instance (also of a user price override).
void check_price(const FieldChecker& price);

// The entry's source: a citation is expected for every number in a catalog (warning if absent).
void check_source(const FieldChecker& entry);

}  // namespace clustersim
