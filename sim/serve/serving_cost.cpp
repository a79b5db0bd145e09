// Prices of serving deployments.
#include "sim/serve/serving_cost.h"

#include "sim/cost/cost_checks.h"
#include "sim/cost/cost_model.h"
#include "sim/io/field_checker.h"

namespace clustersim {
namespace s = schema;

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

std::string deployment_price_region(const ServingPrices& prices, const ServingConfiguration& c,
                                    s::BillingMode billing) {
  if (!c.split_nodes()) return price_regions(prices.book, {c.instance}, billing);
  return price_regions(prices.book, {c.prefill->instance, c.instance}, billing);
}

}  // namespace clustersim
