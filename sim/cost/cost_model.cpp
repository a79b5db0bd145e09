// Assembling the cost model: price layers, report currency and its exchange rates.
#include "sim/cost/cost_model.h"

#include <set>

#include "sim/cost/cost_checks.h"
#include "sim/io/field_checker.h"

namespace clustersim {
namespace {

namespace s = schema;

// The checker of the scenario field naming candidate instance `index`.
struct InstanceField {
  FieldChecker owner;
  int index;  // -1: cluster.instance or a pool's instance
};

InstanceField instance_field(const FieldChecker& root, const s::Scenario& scenario, int index) {
  if (scenario.sweep().pool_size() > 0) return {root.child("sweep").child("pool", index), -1};
  if (scenario.cluster().pool_size() > 0) return {root.child("cluster").child("pool", index), -1};
  if (scenario.has_sweep() && scenario.sweep().instance_size() > 0) {
    return {root.child("sweep"), index};
  }
  return {root.child("cluster"), -1};
}

// The messages holding the checkpoint volumes the runs write to: each value of
// sweep.checkpoint_storage, else cost.checkpoint (each with its `volume` list).
std::vector<FieldChecker> checkpoint_volume_sets(const FieldChecker& root, const s::Scenario& sc) {
  std::vector<FieldChecker> sets;
  if (!sc.cost().has_checkpoint()) return sets;
  for (int i = 0; i < sc.sweep().checkpoint_storage_size(); ++i) {
    sets.push_back(root.child("sweep").child("checkpoint_storage", i));
  }
  if (sets.empty()) sets.push_back(root.child("cost").child("checkpoint"));
  return sets;
}

// A priced checkpoint volume's currency converts to the report currency (once that is known).
void check_storage_currencies(const std::vector<FieldChecker>& sets, const Catalog& catalog,
                              const CostModel& model) {
  if (model.currency == s::CURRENCY_UNSPECIFIED) return;
  for (const FieldChecker& set : sets) {
    for (int i = 0; i < set.size("volume"); ++i) {
      const FieldChecker volume = set.child("volume", i);
      const auto& m = static_cast<const s::StorageVolume&>(volume.message());
      const s::StorageTier& tier = *catalog.storage().find(m.tier())->value;
      if (!tier.has_price() ||
          model.prices.exchange_rate(tier.price().currency(), model.currency)) {
        continue;
      }
      volume.error("tier", "\"" + tier.name() + "\" is priced in " +
                               s::Currency_Name(tier.price().currency()) + ", results in " +
                               s::Currency_Name(model.currency) + ": give an exchange_rate for " +
                               s::Currency_Name(tier.price().currency()) +
                               " (in cost.prices or --prices)");
    }
  }
}

}  // namespace

PriceBook::Layer price_layer(const FieldChecker& prices) {
  const auto& m = static_cast<const s::PriceFile&>(prices.message());
  PriceBook::Layer result{&m, {}};
  for (int i = 0; i < m.price_size(); ++i) {
    const SourceLocation at = prices.location("price", i);
    result.origins.push_back(at.file + ":" + std::to_string(at.line));
  }
  return result;
}

std::unique_ptr<CostModel> load_cost_model(const LoadedScenario& scenario, const Catalog& catalog,
                                           const TextFile<s::PriceFile>* price_file,
                                           Diagnostics* diagnostics) {
  const int errors_before = diagnostics->error_count();
  auto model = std::make_unique<CostModel>();
  const s::Scenario& sc = scenario.scenario();
  model->scenario = &scenario;
  model->settings = &sc.cost();
  const FieldChecker root = FieldChecker::root(*scenario.file, diagnostics);
  if (sc.cost().has_prices()) model->prices.add_layer(price_layer(root.child("cost").child("prices")));
  if (price_file != nullptr) {
    const FieldChecker file_root = FieldChecker::root(*price_file, diagnostics);
    check_price_file(file_root, catalog);
    model->prices.add_layer(price_layer(file_root));
  }
  for (int billing : sc.cost().billing()) {
    model->billing_modes.push_back(static_cast<s::BillingMode>(billing));
  }
  if (model->billing_modes.empty()) model->billing_modes.push_back(s::ON_DEMAND);
  const std::vector<FieldChecker> volume_sets = checkpoint_volume_sets(root, sc);
  for (const FieldChecker& set : volume_sets) {
    CheckpointVolumeSet& volumes = model->checkpoint_volumes.emplace_back();
    for (int i = 0; i < set.size("volume"); ++i) {
      const auto& volume = static_cast<const s::StorageVolume&>(set.child("volume", i).message());
      const s::StorageTier* tier = catalog.storage().find(volume.tier())->value;
      volumes[tier->provider()] = {tier, &volume};
    }
  }
  for (const auto& [name, entry] : catalog.providers().all()) {
    if (entry.value->has_spot_interruption_notice_s()) {
      model->spot_notice_s[entry.value->provider()] = entry.value->spot_interruption_notice_s();
    }
  }
  if (sc.cost().has_trials()) model->trials = sc.cost().trials();
  if (sc.cost().has_seed()) model->seed = sc.cost().seed();

  model->currency = resolve_report_currency(
      model->prices, scenario.instances, model->billing_modes,
      [&] {
        root.error("cost",
                   "the instances price in several currencies: set prices.report_currency "
                   "and an exchange_rate for each other currency (in cost.prices or --prices)");
      },
      [&](size_t i, s::BillingMode billing, s::Currency currency, s::Currency report) {
        const InstanceField field = instance_field(root, sc, static_cast<int>(i));
        field.owner.error("instance",
                          s::BillingMode_Name(billing) + " price of \"" +
                              scenario.instances[i]->name() + "\" is in " +
                              s::Currency_Name(currency) + ", results in " +
                              s::Currency_Name(report) + ": give an exchange_rate for " +
                              s::Currency_Name(currency) + " (in cost.prices or --prices)",
                          field.index);
      });
  check_storage_currencies(volume_sets, catalog, *model);
  if (sc.cost().has_prices()) {
    warn_unread_prices(root.child("cost").child("prices"), model->prices, catalog, model->currency,
                       model->billing_modes);
  }
  if (price_file != nullptr) {
    warn_unread_prices(FieldChecker::root(*price_file, diagnostics), model->prices, catalog,
                       model->currency, model->billing_modes);
  }
  report_ambiguous_prices(
      model->prices, scenario.instances, model->billing_modes,
      [&](size_t i, s::BillingMode billing, const std::string& why) {
        const InstanceField field = instance_field(root, sc, static_cast<int>(i));
        field.owner.error("instance",
                          ambiguous_price_message(catalog, model->prices, *scenario.instances[i],
                                                  billing, why, "cost.prices"),
                          field.index);
      });
  if (diagnostics->error_count() != errors_before) return nullptr;
  return model;
}

std::string ambiguous_price_message(const Catalog& catalog, const PriceBook& prices,
                                    const s::InstanceType& instance, s::BillingMode billing,
                                    const std::string& why, const std::string& prices_field) {
  const std::string region = prices.region();
  return s::BillingMode_Name(billing) + " price of \"" + instance.name() + "\" (" +
         catalog.instances().find(instance.name())->where.to_string() + ") is ambiguous: " + why +
         (region.empty() ? "" : ", none in region \"" + region + "\"") + ": set " + prices_field +
         ".region (or region in a --prices file) to the one you rent in";
}

const CheckpointVolume* checkpoint_volume(const CostModel& model, const Configuration& c) {
  if (model.checkpoint_volumes.empty()) return nullptr;
  const CheckpointVolumeSet& set = model.checkpoint_volumes.at(c.checkpoint_storage);
  const auto found = set.find(c.instance->provider());
  return found == set.end() ? nullptr : &found->second;
}

double report_per_hour(const CostModel& model, const UsedPrice& price) {
  return price.per_hour * *model.prices.exchange_rate(price.currency, model.currency);
}

}  // namespace clustersim
