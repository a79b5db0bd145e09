// Checks of what a user writes about cost: a scenario's `cost` and a --prices file.
#pragma once

#include <vector>

#include "sim/cost/price_book.h"
#include "sim/io/catalog.h"
#include "sim/io/field_checker.h"
#include "sim/io/scenario_loader.h"

namespace clustersim {

// Checks a PriceFile message (a scenario's cost.prices or a --prices file): it sets something (an
// empty one is an error), every override names a catalog instance and is a valid price, no
// instance and billing mode is given twice, every exchange rate is positive and given once per
// currency.
void check_price_file(const FieldChecker& prices, const Catalog& catalog);

// Warns of what the price layer `prices` (one of `book`'s) holds that is never read: an exchange
// rate of `report`, the currency costs come out in (unless the layer's own report_currency is
// `report`: an error of check_price_file), and an override of a billing mode outside `compared`
// (PriceBook::reads_override). Requires: `prices` passed check_price_file.
void warn_unread_prices(const FieldChecker& prices, const PriceBook& book, const Catalog& catalog,
                        schema::Currency report, const std::vector<schema::BillingMode>& compared);

// Checks a scenario's `cost` (a Cost message) against its resolved candidate instances.
void check_cost(const FieldChecker& cost, const Catalog& catalog, const LoadedScenario& scenario);

// Checks the scenario's sweep.checkpoint_storage: it needs cost.checkpoint, and each value's
// volumes are checked as cost.checkpoint.volume is (one per provider of the candidate instances,
// each resolved against its tier and holding the checkpoints kept). `root` checks the scenario.
void check_checkpoint_storage(const FieldChecker& root, const Catalog& catalog,
                              const LoadedScenario& scenario);

// Warns of cost.checkpoint.volume beside sweep.checkpoint_storage when no value of the axis is
// the same volumes: it is never simulated.
void warn_checkpoint_volume_replaced(const FieldChecker& root, const schema::Scenario& scenario);

}  // namespace clustersim
