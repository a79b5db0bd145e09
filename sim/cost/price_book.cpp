// Price lookup with user overrides and currency conversion.
#include "sim/cost/price_book.h"

#include <algorithm>
#include <set>

#include "sim/util/number_format.h"

namespace clustersim {
namespace {

namespace s = schema;

std::string source_text(const s::Price& price) {
  const s::Source& source = price.source();
  std::string text = source.citation();
  if (source.has_date()) text += (text.empty() ? "" : ", ") + source.date();
  return text;
}

// "80% off the catalog's ON_DEMAND 34.742 CNY/h (catalog)": what a discount applied to.
std::string discount_basis(double fraction, const std::string& whose, const UsedPrice& on_demand) {
  return format_number(100 * fraction) + "% off " + whose + " ON_DEMAND " +
         format_number(on_demand.per_hour) + " " + s::Currency_Name(on_demand.currency) + "/h (" +
         on_demand.origin + ")";
}

}  // namespace

std::vector<const s::Price*> catalog_prices(const s::InstanceType& instance, s::BillingMode billing,
                                            const std::string& region) {
  std::vector<const s::Price*> of_mode, in_region;
  for (const s::Price& p : instance.price()) {
    if (p.billing() != billing) continue;
    of_mode.push_back(&p);
    if (!region.empty() && p.region() == region) in_region.push_back(&p);
  }
  return in_region.empty() ? of_mode : in_region;
}

std::optional<UsedPrice> catalog_price(const s::InstanceType& instance, s::BillingMode billing,
                                       const std::string& region) {
  const std::vector<const s::Price*> prices = catalog_prices(instance, billing, region);
  if (prices.size() != 1) return std::nullopt;  // none, or ambiguous
  const s::Price& price = *prices.front();
  UsedPrice used{price.per_hour(),
                 price.currency(),
                 "catalog",
                 price.region(),
                 source_text(price),
                 price.source().confidence(),
                 ""};
  if (price.has_discount_fraction()) {
    if (billing == s::ON_DEMAND) return std::nullopt;  // rejected by the catalog checks
    const std::optional<UsedPrice> on_demand = catalog_price(instance, s::ON_DEMAND, region);
    if (!on_demand) return std::nullopt;
    used.per_hour = on_demand->per_hour * (1 - price.discount_fraction());
    used.currency = on_demand->currency;
    used.basis = discount_basis(price.discount_fraction(), "the catalog's", *on_demand);
  }
  return used;
}

std::string ambiguous_prices(s::BillingMode billing, const std::vector<const s::Price*>& prices) {
  if (prices.size() < 2) return "";
  std::string text =
      s::BillingMode_Name(billing) + " prices in " + std::to_string(prices.size()) + " regions:";
  for (const s::Price* p : prices) {
    text += (p == prices.front() ? " " : ", ") + p->region() + " (" +
            (p->has_per_hour()
                 ? format_number(p->per_hour()) + " " + s::Currency_Name(p->currency()) + "/h"
                 : format_number(100 * p->discount_fraction()) + "% off on-demand") +
            ")";
  }
  return text;
}

void PriceBook::add_layer(Layer layer) { layers_.push_back(std::move(layer)); }

const s::Price* PriceBook::find_override(const s::InstanceType& instance, s::BillingMode billing,
                                         std::string* origin) const {
  for (auto layer = layers_.rbegin(); layer != layers_.rend(); ++layer) {
    const auto& overrides = layer->prices->price();
    for (int i = 0; i < overrides.size(); ++i) {
      const s::PriceOverride& o = overrides[i];
      if (o.instance() != instance.name() || o.price().billing() != billing) continue;
      *origin = layer->origins[i];
      return &o.price();
    }
  }
  return nullptr;
}

std::optional<UsedPrice> PriceBook::override_price(const s::InstanceType& instance,
                                                   s::BillingMode billing) const {
  std::string origin;
  const s::Price* o = find_override(instance, billing, &origin);
  if (o == nullptr) return std::nullopt;
  const std::string source = o->has_source() ? source_text(*o) : "no source given";
  UsedPrice used{
      o->per_hour(), o->currency(), origin, o->region(), source, o->source().confidence(), ""};
  if (!o->has_discount_fraction()) return used;
  // Refused by check_price_file; looking up the on-demand price it is off would recurse forever.
  if (billing == s::ON_DEMAND) return std::nullopt;
  const std::optional<UsedPrice> on_demand = price(instance, s::ON_DEMAND);
  if (!on_demand) return std::nullopt;
  used.per_hour = on_demand->per_hour * (1 - o->discount_fraction());
  used.currency = on_demand->currency;
  used.basis = discount_basis(o->discount_fraction(), "the", *on_demand);
  if (!o->has_region()) used.region = on_demand->region;
  return used;
}

std::string PriceBook::ambiguity(const s::InstanceType& instance, s::BillingMode billing) const {
  std::string origin;
  const s::Price* o = find_override(instance, billing, &origin);
  if (o == nullptr) {
    const std::vector<const s::Price*> listed = catalog_prices(instance, billing, region());
    if (listed.size() != 1) return ambiguous_prices(billing, listed);
    o = listed.front();
  }
  if (!o->has_discount_fraction() || billing == s::ON_DEMAND) return "";
  return ambiguity(instance, s::ON_DEMAND);
}

bool PriceBook::reads_override(const s::InstanceType& instance, s::BillingMode billing,
                               const std::vector<s::BillingMode>& compared) const {
  std::string origin;
  for (s::BillingMode mode : compared) {
    if (mode == billing) return true;
    const s::Price* o = find_override(instance, mode, &origin);
    if (billing == s::ON_DEMAND && o != nullptr && o->has_discount_fraction()) return true;
  }
  return false;
}

std::string PriceBook::region() const {
  for (auto layer = layers_.rbegin(); layer != layers_.rend(); ++layer) {
    if (layer->prices->has_region()) return layer->prices->region();
  }
  return "";
}

std::optional<UsedPrice> PriceBook::price(const s::InstanceType& instance,
                                          s::BillingMode billing) const {
  std::optional<UsedPrice> user = override_price(instance, billing);
  return user ? user : catalog_price(instance, billing, region());
}

std::optional<s::Currency> PriceBook::report_currency() const {
  for (auto layer = layers_.rbegin(); layer != layers_.rend(); ++layer) {
    if (layer->prices->has_report_currency()) return layer->prices->report_currency();
  }
  return std::nullopt;
}

std::optional<double> PriceBook::exchange_rate(s::Currency from, s::Currency report) const {
  if (from == report) return 1.0;
  for (auto layer = layers_.rbegin(); layer != layers_.rend(); ++layer) {
    for (const s::ExchangeRate& rate : layer->prices->exchange_rate()) {
      if (rate.currency() == from) return rate.in_report_currency();
    }
  }
  return std::nullopt;
}

s::Currency resolve_report_currency(
    const PriceBook& prices, const std::vector<const s::InstanceType*>& instances,
    const std::vector<s::BillingMode>& billing_modes,
    const std::function<void()>& several_currencies,
    const std::function<void(size_t, s::BillingMode, s::Currency, s::Currency)>& missing_rate) {
  std::set<int> used;
  for (const s::InstanceType* instance : instances) {
    for (s::BillingMode billing : billing_modes) {
      if (auto price = prices.price(*instance, billing)) used.insert(price->currency);
    }
  }
  s::Currency currency = s::CURRENCY_UNSPECIFIED;
  if (auto report = prices.report_currency()) {
    currency = *report;
  } else if (used.size() == 1) {
    currency = static_cast<s::Currency>(*used.begin());
  } else if (used.size() > 1) {
    several_currencies();
  }
  if (currency == s::CURRENCY_UNSPECIFIED) return currency;
  for (size_t i = 0; i < instances.size(); ++i) {
    for (s::BillingMode billing : billing_modes) {
      const auto price = prices.price(*instances[i], billing);
      if (!price || prices.exchange_rate(price->currency, currency)) continue;
      missing_rate(i, billing, price->currency, currency);
      break;
    }
  }
  return currency;
}

std::string price_regions(const PriceBook& prices,
                          const std::vector<const s::InstanceType*>& instances,
                          s::BillingMode billing) {
  std::set<std::string> seen;
  std::string text;
  for (const s::InstanceType* instance : instances) {
    const std::optional<UsedPrice> price = prices.price(*instance, billing);
    if (!price || price->region.empty() || !seen.insert(price->region).second) continue;
    text += (text.empty() ? "" : "+") + price->region;
  }
  return text;
}

const char* price_confidence(const UsedPrice& price) {
  if (price.origin != "catalog" && price.confidence == s::CONFIDENCE_UNSPECIFIED) return "user";
  return catalog_price_confidence(price.confidence);
}

const char* catalog_price_confidence(s::Confidence confidence) {
  return unverified(confidence) ? "unverified" : "read";
}

std::string prices_confidence(const PriceBook& prices,
                              const std::vector<const s::InstanceType*>& instances,
                              s::BillingMode billing) {
  // From the most reliable to the least: the row reads its least reliable price's.
  static const std::vector<std::string> kOrder = {"", "read", "user", "unverified"};
  size_t least = 0;
  for (const s::InstanceType* instance : instances) {
    const std::optional<UsedPrice> price = prices.price(*instance, billing);
    if (!price) continue;
    const size_t rank =
        std::find(kOrder.begin(), kOrder.end(), price_confidence(*price)) - kOrder.begin();
    least = std::max(least, rank);
  }
  return kOrder[least];
}

void report_ambiguous_prices(
    const PriceBook& prices, const std::vector<const s::InstanceType*>& instances,
    const std::vector<s::BillingMode>& billing_modes,
    const std::function<void(size_t, s::BillingMode, const std::string&)>& ambiguous) {
  for (size_t i = 0; i < instances.size(); ++i) {
    for (s::BillingMode billing : billing_modes) {
      const std::string why = prices.ambiguity(*instances[i], billing);
      if (why.empty()) continue;
      ambiguous(i, billing, why);
      break;
    }
  }
}

}  // namespace clustersim
