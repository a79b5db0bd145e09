// Price lookup with user overrides and currency conversion.
#include "sim/cost/price_book.h"

#include <set>

#include <algorithm>

namespace clustersim {
namespace {

namespace s = schema;

std::string source_text(const s::Price& price) {
  const s::Source& source = price.source();
  std::string text = source.citation();
  if (source.has_date()) text += (text.empty() ? "" : ", ") + source.date();
  return text;
}

}  // namespace

std::optional<UsedPrice> catalog_price(const s::InstanceType& instance, s::BillingMode billing) {
  const auto& prices = instance.price();
  const auto found = std::find_if(prices.begin(), prices.end(),
                                  [&](const s::Price& p) { return p.billing() == billing; });
  if (found == prices.end()) return std::nullopt;
  const s::Price& price = *found;
  UsedPrice used{price.per_hour(), price.currency(), "catalog", source_text(price),
                 price.source().confidence()};
  if (price.has_discount_fraction()) {
    if (billing == s::ON_DEMAND) return std::nullopt;  // rejected by the catalog checks
    const std::optional<UsedPrice> on_demand = catalog_price(instance, s::ON_DEMAND);
    if (!on_demand) return std::nullopt;
    used.per_hour = on_demand->per_hour * (1 - price.discount_fraction());
    used.currency = on_demand->currency;
  }
  return used;
}

void PriceBook::add_layer(Layer layer) { layers_.push_back(std::move(layer)); }

std::optional<UsedPrice> PriceBook::override_price(const s::InstanceType& instance,
                                                   s::BillingMode billing) const {
  for (auto layer = layers_.rbegin(); layer != layers_.rend(); ++layer) {
    const auto& overrides = layer->prices->price();
    for (int i = 0; i < overrides.size(); ++i) {
      const s::PriceOverride& o = overrides[i];
      if (o.instance() != instance.name() || o.price().billing() != billing) continue;
      const std::string source = o.price().has_source() ? source_text(o.price()) : "user override";
      const s::Confidence confidence = o.price().source().confidence();
      if (!o.price().has_discount_fraction()) {
        return UsedPrice{o.price().per_hour(), o.price().currency(), layer->origins[i], source,
                         confidence};
      }
      const std::optional<UsedPrice> on_demand = price(instance, s::ON_DEMAND);
      if (!on_demand || billing == s::ON_DEMAND) return std::nullopt;
      return UsedPrice{on_demand->per_hour * (1 - o.price().discount_fraction()),
                       on_demand->currency, layer->origins[i], source, confidence};
    }
  }
  return std::nullopt;
}

std::optional<UsedPrice> PriceBook::price(const s::InstanceType& instance,
                                          s::BillingMode billing) const {
  std::optional<UsedPrice> user = override_price(instance, billing);
  return user ? user : catalog_price(instance, billing);
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
    const std::vector<s::BillingMode>& billing_modes, const std::function<void()>& several_currencies,
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

}  // namespace clustersim
