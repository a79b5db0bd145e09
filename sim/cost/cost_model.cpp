// Assembling the cost model: price layers, report currency and its exchange rates.
#include "sim/cost/cost_model.h"

#include <set>

#include "sim/cost/cost_checks.h"
#include "sim/io/field_checker.h"

namespace clustersim {
namespace {

namespace s = schema;

PriceBook::Layer layer(const FieldChecker& prices) {
  const auto& m = static_cast<const s::PriceFile&>(prices.message());
  PriceBook::Layer result{&m, {}};
  for (int i = 0; i < m.price_size(); ++i) {
    const SourceLocation at = prices.location("price", i);
    result.origins.push_back(at.file + ":" + std::to_string(at.line));
  }
  return result;
}

// The checker of the scenario field naming candidate instance `index`.
struct InstanceField {
  FieldChecker owner;
  int index;  // -1: cluster.instance
};

InstanceField instance_field(const FieldChecker& root, const s::Scenario& scenario, int index) {
  if (scenario.has_sweep() && scenario.sweep().instance_size() > 0) {
    return {root.child("sweep"), index};
  }
  return {root.child("cluster"), -1};
}

}  // namespace

std::unique_ptr<CostModel> load_cost_model(const LoadedScenario& scenario, const Catalog& catalog,
                                           const TextFile<s::PriceFile>* price_file,
                                           Diagnostics* diagnostics) {
  const int errors_before = diagnostics->error_count();
  auto model = std::make_unique<CostModel>();
  const s::Scenario& sc = scenario.scenario();
  model->scenario = &scenario;
  model->settings = &sc.cost();
  const FieldChecker root = FieldChecker::root(*scenario.file, diagnostics);
  if (sc.cost().has_prices()) model->prices.add_layer(layer(root.child("cost").child("prices")));
  if (price_file != nullptr) {
    const FieldChecker file_root = FieldChecker::root(*price_file, diagnostics);
    check_price_file(file_root, catalog);
    model->prices.add_layer(layer(file_root));
  }
  for (int billing : sc.cost().billing()) {
    model->billing_modes.push_back(static_cast<s::BillingMode>(billing));
  }
  if (model->billing_modes.empty()) model->billing_modes.push_back(s::ON_DEMAND);
  if (sc.cost().has_checkpoint()) {
    for (const s::StorageVolume& volume : sc.cost().checkpoint().volume()) {
      const s::StorageTier* tier = catalog.storage().find(volume.tier())->value;
      model->checkpoint_volumes[tier->provider()] = {tier, volume.capacity_gib()};
    }
  }
  if (sc.cost().has_trials()) model->trials = sc.cost().trials();
  if (sc.cost().has_seed()) model->seed = sc.cost().seed();

  // The report currency: set by the user, else the one every price shares.
  std::set<int> used;
  for (const s::InstanceType* instance : scenario.instances) {
    for (s::BillingMode billing : model->billing_modes) {
      if (auto price = model->prices.price(*instance, billing)) used.insert(price->currency);
    }
  }
  if (auto report = model->prices.report_currency()) {
    model->currency = *report;
  } else if (used.size() == 1) {
    model->currency = static_cast<s::Currency>(*used.begin());
  } else if (used.size() > 1) {
    root.error("cost",
               "the instances price in several currencies: set prices.report_currency "
               "and an exchange_rate for each other currency (in cost.prices or --prices)");
  }
  if (model->currency != s::CURRENCY_UNSPECIFIED) {
    for (size_t i = 0; i < scenario.instances.size(); ++i) {
      for (s::BillingMode billing : model->billing_modes) {
        const auto price = model->prices.price(*scenario.instances[i], billing);
        if (!price || model->prices.exchange_rate(price->currency, model->currency)) continue;
        const InstanceField field = instance_field(root, sc, static_cast<int>(i));
        field.owner.error("instance",
                          s::BillingMode_Name(billing) + " price of \"" +
                              scenario.instances[i]->name() + "\" is in " +
                              s::Currency_Name(price->currency) + ", results in " +
                              s::Currency_Name(model->currency) + ": give an exchange_rate for " +
                              s::Currency_Name(price->currency) + " (in cost.prices or --prices)",
                          field.index);
        break;
      }
    }
  }
  if (diagnostics->error_count() != errors_before) return nullptr;
  return model;
}

double report_per_hour(const CostModel& model, const UsedPrice& price) {
  return price.per_hour * *model.prices.exchange_rate(price.currency, model.currency);
}

}  // namespace clustersim
