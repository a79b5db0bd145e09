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
  std::string region;  // the region the price names ("" when it names none)
  std::string source;  // citation and date of the catalog price, or of the override
  schema::Confidence confidence = schema::CONFIDENCE_UNSPECIFIED;  // of that source
  // A discount_fraction's: the on-demand price it is off and where that came from ("80% off the
  // catalog's ON_DEMAND 34.742 CNY/h (catalog)"); "" for a per_hour price.
  std::string basis;
};

// Whether a price's source is second-hand, from memory or disputed (the catalog marks it
// UNVERIFIED, or an override says so): a price to check before relying on it.
inline bool unverified(schema::Confidence confidence) { return confidence == schema::UNVERIFIED; }

// How far a price in force can be relied on, the one reading of it (cost's prices used and 'price
// from', the sweep and serve rows' price_confidence): "unverified" (unverified), "user" where an
// override says not how confident it is (the user's own figure: neither read in a source the
// catalog cites nor marked second-hand), else "read" (read in its cited source).
const char* price_confidence(const UsedPrice& price);
// The same reading of a catalog price, whose source the catalog cites (a storage tier's too):
// "unverified" or "read".
const char* catalog_price_confidence(schema::Confidence confidence);

// The catalog's prices of `instance` under `billing` that `region` leaves to choose from: those
// in `region` when one is, else every one of that mode ("" : every one). Several are ambiguous:
// the catalog check allows one price of a mode per region, so they name different regions.
std::vector<const schema::Price*> catalog_prices(const schema::InstanceType& instance,
                                                 schema::BillingMode billing,
                                                 const std::string& region);

// The catalog's own price of `instance` under `billing` in `region` (catalog_prices); a
// discount_fraction applies to the catalog's ON_DEMAND price of the same choice, whatever a user
// overrides that with: a catalog discount is the provider's cut off its list price (Alibaba's
// preemptible instances), and a negotiated on-demand rate does not move it (AWS's spot prices are
// market prices given per_hour, apart from any on-demand rate). An override's discount_fraction
// applies to the ON_DEMAND price in force (PriceBook::price). UsedPrice::basis says which.
// nullopt when the catalog has none, or several in other regions than `region` (see
// ambiguous_prices).
std::optional<UsedPrice> catalog_price(const schema::InstanceType& instance,
                                       schema::BillingMode billing, const std::string& region = "");

// "" when `prices` (from catalog_prices) are at most one; else "SPOT prices in 2 regions:
// us-east-2 (18.7359 USD/h), us-west-2 (19.5387 USD/h)".
std::string ambiguous_prices(schema::BillingMode billing,
                             const std::vector<const schema::Price*>& prices);

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

  // "" when the price in force of `instance` under `billing` is one price or none; else why it is
  // ambiguous (ambiguous_prices): the catalog lists several of the mode, or of the ON_DEMAND price
  // its discount_fraction applies to, none in the layers' region, and no layer overrides it.
  std::string ambiguity(const schema::InstanceType& instance, schema::BillingMode billing) const;

  // Whether an override of `instance` under `billing` is read when `compared` are the billing
  // modes priced: its own mode is compared, or it is the ON_DEMAND price that an override's
  // discount_fraction of a compared mode applies to.
  bool reads_override(const schema::InstanceType& instance, schema::BillingMode billing,
                      const std::vector<schema::BillingMode>& compared) const;

  // The region the layers set (the last one that sets it); "" when none does.
  std::string region() const;
  // The report currency the layers set (the last one that sets it), if any.
  std::optional<schema::Currency> report_currency() const;
  // Value of one unit of `from` in the `report` currency: 1 when equal, else the last layer's
  // exchange rate of `from`. nullopt when no layer gives it.
  std::optional<double> exchange_rate(schema::Currency from, schema::Currency report) const;

 private:
  // The override in force of `instance` under `billing` (the last layer's), or null; `origin`
  // receives where it was written.
  const schema::Price* find_override(const schema::InstanceType& instance,
                                     schema::BillingMode billing, std::string* origin) const;
  std::optional<UsedPrice> override_price(const schema::InstanceType& instance,
                                          schema::BillingMode billing) const;
  std::vector<Layer> layers_;  // in increasing precedence
};

// The currency results of `instances` under `billing_modes` are reported in: the book's report
// currency, else the one currency all their prices share (CURRENCY_UNSPECIFIED when none is
// priced). Reports through `several_currencies()` when they price in several and none is set,
// and through `missing_rate(instance, billing, its currency, report currency)` for the first price
// of each instance with no exchange rate into the report currency.
schema::Currency resolve_report_currency(
    const PriceBook& prices, const std::vector<const schema::InstanceType*>& instances,
    const std::vector<schema::BillingMode>& billing_modes,
    const std::function<void()>& several_currencies,
    const std::function<void(size_t, schema::BillingMode, schema::Currency, schema::Currency)>&
        missing_rate);

// The regions of the prices `instances` (a configuration's pools) pay under `billing`, in order,
// each once, "+"-joined ("us-east-2+us-west-2"); "" when no price names one.
std::string price_regions(const PriceBook& prices,
                          const std::vector<const schema::InstanceType*>& instances,
                          schema::BillingMode billing);

// The least reliable price_confidence of the prices `instances` (a configuration's pools) pay
// under `billing`: "unverified", else "user", else "read"; "" where none of them is priced.
std::string prices_confidence(const PriceBook& prices,
                              const std::vector<const schema::InstanceType*>& instances,
                              schema::BillingMode billing);

// Calls `ambiguous(index, billing, why)` for each of `instances` whose price in force under one of
// `billing_modes` is ambiguous (PriceBook::ambiguity), once per instance.
void report_ambiguous_prices(
    const PriceBook& prices, const std::vector<const schema::InstanceType*>& instances,
    const std::vector<schema::BillingMode>& billing_modes,
    const std::function<void(size_t, schema::BillingMode, const std::string&)>& ambiguous);

}  // namespace clustersim
