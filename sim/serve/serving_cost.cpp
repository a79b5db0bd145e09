// Prices of serving deployments.
#include "sim/serve/serving_cost.h"

#include <vector>

#include "sim/cost/cost_checks.h"
#include "sim/cost/cost_model.h"
#include "sim/io/field_checker.h"

namespace clustersim {
namespace s = schema;

namespace {

// Each instance the autoscaled day may run on has a price, in the report currency, under the
// baseline's and the bursts' billing modes and on demand (the day it is compared with): without
// one, the sizing ran and `autoscaling: no SUBSCRIPTION_YEARLY price for ...` ended it, exit 0.
void check_autoscaling_prices(const FieldChecker& root, const LoadedServingScenario& scenario,
                              const ServingPrices& prices, const std::string& price_file) {
  const s::Autoscaling& a = scenario.scenario().autoscaling();
  const FieldChecker autoscaling = root.child("autoscaling");
  std::vector<const s::InstanceType*> instances = scenario.instances;
  for (const s::InstanceType* pool : {scenario.prefill_instance, scenario.decode_instance}) {
    if (pool != nullptr) instances.push_back(pool);
  }
  std::vector<std::string> sources = {"the catalog"};
  if (scenario.scenario().has_prices()) sources.push_back("the scenario's prices");
  if (!price_file.empty()) sources.push_back(price_file);
  std::string where = sources.front();
  for (size_t i = 1; i < sources.size(); ++i) {
    where += (i + 1 == sources.size() ? " or " : ", ") + sources[i];
  }
  const std::string give = price_file.empty()
                               ? "give one in the scenario's prices or a --prices file"
                               : "give one in " + price_file;
  const struct {
    const char* field;  // null: the block (the on-demand day it is compared with)
    s::BillingMode billing;
  } modes[] = {{"baseline_billing",
                a.has_baseline_billing() ? a.baseline_billing() : s::SUBSCRIPTION_MONTHLY},
               {"burst_billing", a.has_burst_billing() ? a.burst_billing() : s::ON_DEMAND},
               {nullptr, s::ON_DEMAND}};
  for (const auto& read : modes) {
    // Named copies, not a structured binding: clang's C++20 lambdas do not capture one.
    const char* field = read.field;
    const s::BillingMode billing = read.billing;
    if (billing == s::BILLING_MODE_UNSPECIFIED) continue;  // an error of the scenario's checks
    const std::string mode = s::BillingMode_Name(billing);
    const auto error = [&](const std::string& message) {
      if (field != nullptr) {
        autoscaling.error(field, message);
      } else {
        autoscaling.error_here(message + " (the day is compared with all on demand)");
      }
    };
    for (const s::InstanceType* instance : instances) {
      if (!prices.book.ambiguity(*instance, billing).empty()) continue;  // report_ambiguous_prices
      const std::optional<UsedPrice> price = prices.book.price(*instance, billing);
      if (!price) {
        error("\"" + instance->name() + "\" has no " + mode + " price in " + where + ": " + give);
        return;
      }
      if (!prices.book.exchange_rate(price->currency, prices.currency)) {
        error(mode + " price of \"" + instance->name() + "\" is in " +
              s::Currency_Name(price->currency) + ", results in " +
              s::Currency_Name(prices.currency) + ": give an exchange_rate for " +
              s::Currency_Name(price->currency));
        return;
      }
    }
  }
}

}  // namespace

std::unique_ptr<ServingPrices> load_serving_prices(const LoadedServingScenario& scenario,
                                                   const Catalog& catalog,
                                                   const TextFile<s::PriceFile>* price_file,
                                                   Diagnostics* diagnostics) {
  const int errors_before = diagnostics->error_count();
  auto prices = std::make_unique<ServingPrices>();
  const s::ServingScenario& m = scenario.scenario();
  const FieldChecker root = FieldChecker::root(*scenario.file, diagnostics);
  if (m.has_prices()) prices->book.add_layer(price_layer(root.child("prices")));
  if (price_file != nullptr) {
    const FieldChecker file_root = FieldChecker::root(*price_file, diagnostics);
    check_price_file(file_root, catalog);
    prices->book.add_layer(price_layer(file_root));
  }
  for (int billing : m.billing()) prices->billing_modes.push_back(static_cast<s::BillingMode>(billing));
  if (prices->billing_modes.empty()) prices->billing_modes.push_back(s::ON_DEMAND);
  const bool swept = m.sweep().instance_size() > 0;
  prices->currency = resolve_report_currency(
      prices->book, scenario.instances, prices->billing_modes,
      [&] {
        root.error("prices", "the instances price in several currencies: set report_currency and "
                             "an exchange_rate for each other currency");
      },
      [&](size_t i, s::BillingMode billing, s::Currency currency, s::Currency report) {
        const FieldChecker owner = swept ? root.child("sweep") : root.child("deployment");
        owner.error("instance",
                    s::BillingMode_Name(billing) + " price of \"" + scenario.instances[i]->name() +
                        "\" is in " + s::Currency_Name(currency) + ", results in " +
                        s::Currency_Name(report) + ": give an exchange_rate for " +
                        s::Currency_Name(currency),
                    swept ? static_cast<int>(i) : -1);
      });
  std::vector<s::BillingMode> modes = prices->billing_modes;
  if (m.has_autoscaling()) {  // its modes (autoscaling.cpp) and the on-demand price it compares
    const s::Autoscaling& a = m.autoscaling();
    modes.insert(modes.end(),
                 {a.has_baseline_billing() ? a.baseline_billing() : s::SUBSCRIPTION_MONTHLY,
                  a.has_burst_billing() ? a.burst_billing() : s::ON_DEMAND, s::ON_DEMAND});
  }
  if (m.has_autoscaling()) {
    check_autoscaling_prices(root, scenario, *prices,
                             price_file == nullptr ? "" : price_file->path);
  }
  if (m.has_prices()) {
    warn_unread_prices(root.child("prices"), prices->book, catalog, prices->currency, modes);
  }
  if (price_file != nullptr) {
    warn_unread_prices(FieldChecker::root(*price_file, diagnostics), prices->book, catalog,
                       prices->currency, modes);
  }
  report_ambiguous_prices(
      prices->book, scenario.instances, modes,
      [&](size_t i, s::BillingMode billing, const std::string& why) {
        const FieldChecker owner = swept ? root.child("sweep") : root.child("deployment");
        owner.error("instance",
                    ambiguous_price_message(catalog, prices->book, *scenario.instances[i], billing,
                                            why, "prices"),
                    swept ? static_cast<int>(i) : -1);
      });
  if (diagnostics->error_count() != errors_before) return nullptr;
  return prices;
}

namespace {

// One node of `instance` per hour in the report currency, or nullopt without a price.
std::optional<double> node_per_hour(const ServingPrices& prices, const s::InstanceType& instance,
                                    s::BillingMode billing) {
  const std::optional<UsedPrice> price = prices.book.price(instance, billing);
  if (!price) return std::nullopt;
  const std::optional<double> rate = prices.book.exchange_rate(price->currency, prices.currency);
  if (!rate) return std::nullopt;
  return price->per_hour * *rate;
}

}  // namespace

std::optional<double> deployment_per_hour(const ServingPrices& prices,
                                          const ServingConfiguration& c, s::BillingMode billing) {
  const std::optional<double> node = node_per_hour(prices, *c.instance, billing);
  if (!node) return std::nullopt;
  if (!c.split_nodes()) return *node * c.nodes();
  const std::optional<double> prefill_node = node_per_hour(prices, *c.prefill->instance, billing);
  if (!prefill_node) return std::nullopt;
  const DeploymentPlacement placement = deployment_placement(c);
  return *prefill_node * placement.prefill_nodes + *node * (placement.nodes - placement.prefill_nodes);
}

namespace {
// The instance types the deployment rents: its prefill pool's, where on nodes of their own, then
// its (decode) replicas'.
std::vector<const s::InstanceType*> rented_instances(const ServingConfiguration& c) {
  if (!c.split_nodes()) return {c.instance};
  return {c.prefill->instance, c.instance};
}
}  // namespace

std::string deployment_price_region(const ServingPrices& prices, const ServingConfiguration& c,
                                    s::BillingMode billing) {
  return price_regions(prices.book, rented_instances(c), billing);
}

std::string deployment_prices_confidence(const ServingPrices& prices,
                                         const ServingConfiguration& c, s::BillingMode billing) {
  return prices_confidence(prices.book, rented_instances(c), billing);
}

}  // namespace clustersim
