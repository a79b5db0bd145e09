// The price of an instance type under a billing mode: the catalog's, unless the scenario's
// cost.prices or a --prices file overrides it, and the exchange rates into one report currency. The
// one price lookup of the project (catalog, plan and cost commands). Immutable; safe to share
// between threads.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/io/schema/cost.pb.h"
#include "sim/io/schema/instance.pb.h"

namespace clustersim {

// A price as used, with where it came from.
struct UsedPrice {
  double per_hour = 0;  // per instance-hour, in `currency`
  schema::Currency currency = schema::CURRENCY_UNSPECIFIED;
  std::string origin;  // "catalog", or "FILE:LINE" of the override
  std::string source;  // citation and date of the catalog price, or of the override
  schema::Confidence confidence = schema::CONFIDENCE_UNSPECIFIED;  // of that source
};

// The catalog's own price of `instance` under `billing`: the first listed price of that mode; a
// discount_fraction applies to the ON_DEMAND price. nullopt when the catalog has none.
std::optional<UsedPrice> catalog_price(const schema::InstanceType& instance,
                                       schema::BillingMode billing);

// Overrides and exchange rates on top of the catalog.
class PriceBook {
 public:
  // One layer of user prices (a --prices file or a scenario's cost.prices); origins[i] says
  // where override i was written ("FILE:LINE"). Requires: `prices` outlives the book.
  struct Layer {
    const schema::PriceFile* prices = nullptr;
    std::vector<std::string> origins;
  };

  PriceBook() = default;
  void add_layer(Layer layer);  // later layers win

  // The price in force: the last layer's override, else the catalog's.
  std::optional<UsedPrice> price(const schema::InstanceType& instance,
                                 schema::BillingMode billing) const;

  // The report currency the layers set (the last one that sets it), if any.
  std::optional<schema::Currency> report_currency() const;
  // Value of one unit of `from` in the `report` currency: 1 when equal, else the last layer's
  // exchange rate of `from`. nullopt when no layer gives it.
  std::optional<double> exchange_rate(schema::Currency from, schema::Currency report) const;

 private:
  std::optional<UsedPrice> override_price(const schema::InstanceType& instance,
                                          schema::BillingMode billing) const;
  std::vector<Layer> layers_;  // in increasing precedence
};

// The currency results of `instances` under `billing_modes` are reported in: the book's report
// currency, else the one currency all their prices share (CURRENCY_UNSPECIFIED when none is
// priced). Reports through `several_currencies()` when they price in several and none is set,
// and through `missing_rate(instance, billing, its currency, report currency)` for the first price of each instance
// with no exchange rate into the report currency.
schema::Currency resolve_report_currency(
    const PriceBook& prices, const std::vector<const schema::InstanceType*>& instances,
    const std::vector<schema::BillingMode>& billing_modes,
    const std::function<void()>& several_currencies,
    const std::function<void(size_t, schema::BillingMode, schema::Currency, schema::Currency)>&
        missing_rate);

}  // namespace clustersim
