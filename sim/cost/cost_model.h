// What the cost of a scenario's runs depends on besides the simulated step: its checked `cost`
// settings, the prices in force (catalog, scenario overrides, --prices file) and the report
// currency. Built once per scenario; immutable, safe to share between the threads of a sweep.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "sim/cost/price_book.h"
#include "sim/io/catalog.h"
#include "sim/io/field_checker.h"
#include "sim/io/scenario_loader.h"
#include "sim/io/schema/cost.pb.h"
#include "sim/io/text_file.h"
#include "sim/sweep/configuration_space.h"

namespace clustersim {

struct CheckpointVolume {
  const schema::StorageTier* tier = nullptr;
  const schema::StorageVolume* volume = nullptr;  // the scenario's, of `tier`
};
// One volume per provider: cost.checkpoint.volume, or a value of sweep.checkpoint_storage.
using CheckpointVolumeSet = std::map<schema::Provider, CheckpointVolume>;

struct CostModel {
  const LoadedScenario* scenario = nullptr;
  const schema::Cost* settings = nullptr;  // the scenario's cost (an empty one when absent)
  PriceBook prices;
  schema::Currency currency = schema::CURRENCY_UNSPECIFIED;  // every cost is reported in it
  std::vector<schema::BillingMode> billing_modes;            // compared, in the scenario's order
  // The checkpoint volumes of each Configuration::checkpoint_storage: one set per value of
  // sweep.checkpoint_storage, else cost.checkpoint.volume's alone; empty: no checkpoints.
  std::vector<CheckpointVolumeSet> checkpoint_volumes;
  // The spot interruption notice of each provider the catalog states one for.
  std::map<schema::Provider, double> spot_notice_s;
  int trials = 400;   // simulated runs per spot configuration (scenario or command line)
  uint64_t seed = 1;  // of the first trial
};

// Builds the cost model of a loaded scenario. `price_file` (may be null) is a --prices file,
// checked here; it wins over the scenario's cost.prices. Prices of several currencies need a
// report currency and an exchange rate for each other one: a missing rate is an error at the
// instance that prices in that currency. Returns nullptr after reporting every problem.
// Requires: `scenario` loaded without errors; it, `catalog` and `price_file` outlive the model.
std::unique_ptr<CostModel> load_cost_model(const LoadedScenario& scenario, const Catalog& catalog,
                                           const TextFile<schema::PriceFile>* price_file,
                                           Diagnostics* diagnostics);

// The price overrides of a PriceFile message (a scenario's prices or a --prices file) as a layer
// of a PriceBook, each with the FILE:LINE it was written at. Requires: `prices` checks a
// PriceFile that outlives the layer.
PriceBook::Layer price_layer(const FieldChecker& prices);

// The error of an instance whose price under `billing` is ambiguous (`why`, from
// PriceBook::ambiguity): where the catalog lists it, and that `prices_field` ("cost.prices",
// "prices") or a --prices file chooses the region.
std::string ambiguous_price_message(const Catalog& catalog, const PriceBook& prices,
                                    const schema::InstanceType& instance,
                                    schema::BillingMode billing, const std::string& why,
                                    const std::string& prices_field);

// The volume `configuration` writes its checkpoints to: its set's volume of its instance's
// provider; null when the scenario sets no checkpoint.
const CheckpointVolume* checkpoint_volume(const CostModel& model,
                                          const Configuration& configuration);

// `price` per instance-hour in the model's report currency. Requires: a price of one of the
// scenario's candidate instances (load_cost_model guarantees their exchange rates).
double report_per_hour(const CostModel& model, const UsedPrice& price);

}  // namespace clustersim
