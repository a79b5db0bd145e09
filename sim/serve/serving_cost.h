// What a deployment costs: its whole nodes at the price in force (catalog, the scenario's
// prices, a --prices file) per billing mode, in one report currency, and per million output
// tokens at the throughput it sustains.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/cost/price_book.h"
#include "sim/io/catalog.h"
#include "sim/serve/serving_scenario.h"
#include "sim/serve/serving_space.h"

namespace clustersim {

// Built once per scenario; immutable, safe to share between threads.
struct ServingPrices {
  PriceBook book;
  schema::Currency currency = schema::CURRENCY_UNSPECIFIED;  // every cost is reported in it
  std::vector<schema::BillingMode> billing_modes;            // the scenario's; ON_DEMAND if none
};

// Requires: the scenario (and `price_file`, may be null) outlive the result. Returns null after
// reporting a bad price file or a missing exchange rate.
std::unique_ptr<ServingPrices> load_serving_prices(const LoadedServingScenario& scenario,
                                                   const Catalog& catalog,
                                                   const TextFile<schema::PriceFile>* price_file,
                                                   Diagnostics* diagnostics);

// The deployment's nodes per hour under `billing`, in the report currency (each pool's nodes at
// its instance's price when the pools are on two types); nullopt without a price.
std::optional<double> deployment_per_hour(const ServingPrices& prices,
                                          const ServingConfiguration& c,
                                          schema::BillingMode billing);

// The region of the price the deployment's nodes pay under `billing` ("+"-joined when the
// prefill pool's instance pays in another); "" when no price names one.
std::string deployment_price_region(const ServingPrices& prices, const ServingConfiguration& c,
                                    schema::BillingMode billing);

// How far the prices the deployment's nodes pay under `billing` can be relied on (price_book.h
// prices_confidence; "" where none is priced).
std::string deployment_prices_confidence(const ServingPrices& prices,
                                         const ServingConfiguration& c,
                                         schema::BillingMode billing);

// Cost of a million output tokens at `per_hour` while producing `tokens_per_s`.
inline double cost_per_million_tokens(double per_hour, double tokens_per_s) {
  return per_hour / (tokens_per_s * 3600) * 1e6;
}

}  // namespace clustersim
