// Checks of what a user writes about cost: a scenario's `cost` and a --prices file.
#pragma once

#include "sim/io/catalog.h"
#include "sim/io/field_checker.h"
#include "sim/io/scenario_loader.h"

namespace clustersim {

// Checks a PriceFile message (a scenario's cost.prices or a --prices file): every override names
// a catalog instance and is a valid price, no instance and billing mode is given twice, every
// exchange rate is positive and given once per currency.
void check_price_file(const FieldChecker& prices, const Catalog& catalog);

// Checks a scenario's `cost` (a Cost message) against its resolved candidate instances.
void check_cost(const FieldChecker& cost, const Catalog& catalog, const LoadedScenario& scenario);

}  // namespace clustersim
