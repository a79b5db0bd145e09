// Price lookup: catalog prices and discounts, user overrides in precedence order, their origin.
#include "sim/cost/price_book.h"

#include <catch2/catch.hpp>

#include "tests/cost/cost_fixture.h"

namespace clustersim {
namespace {

namespace s = schema;
using testing::cost_scenario;
using testing::load_cost;

using testing::shipped_instance;

TEST_CASE("catalog prices: absolute, a discount off on-demand, or none") {
  const auto spot = catalog_price(shipped_instance("aws.p5.48xlarge"), s::SPOT);
  REQUIRE(spot);
  CHECK(spot->per_hour == 17.6289);
  CHECK(spot->currency == s::USD);
  CHECK(spot->origin == "catalog");
  CHECK(spot->source.rfind("skypilot-org/skypilot-catalog", 0) == 0);
  // Aliyun gn7e: spot given as a discount of 0.8 off 34.742 CNY/h.
  const auto discounted = catalog_price(shipped_instance("aliyun.ecs.gn7e-c16g1.4xlarge"), s::SPOT);
  REQUIRE(discounted);
  CHECK(discounted->per_hour == Approx(34.742 * 0.2));
  CHECK(discounted->currency == s::CNY);
  CHECK_FALSE(catalog_price(shipped_instance("aws.g5.48xlarge"), s::SPOT));
  CHECK_FALSE(catalog_price(shipped_instance("aws.p5.48xlarge"), s::SUBSCRIPTION_MONTHLY));
}

TEST_CASE("a --prices file wins over the scenario, which wins over the catalog") {
  const std::string scenario = cost_scenario(
      "  prices {\n"
      "    price { instance: \"aws.p4d.24xlarge\" price { billing: ON_DEMAND currency: USD "
      "per_hour: 20 } }\n"
      "    price { instance: \"aws.p4d.24xlarge\" price { billing: SPOT currency: USD "
      "per_hour: 5 } }\n  }");
  auto scenario_only = load_cost(scenario);
  REQUIRE(scenario_only->model);
  const PriceBook& book = scenario_only->model->prices;
  CHECK(book.price(shipped_instance("aws.p4d.24xlarge"), s::ON_DEMAND)->per_hour == 20);
  CHECK_THAT(book.price(shipped_instance("aws.p4d.24xlarge"), s::SPOT)->origin,
             Catch::EndsWith("/s.textproto:20"));
  CHECK(book.price(shipped_instance("aws.p5.48xlarge"), s::ON_DEMAND)->per_hour == 55.04);

  auto with_file = load_cost(scenario,
                             "price { instance: \"aws.p4d.24xlarge\"\n"
                             "  price { billing: SPOT currency: USD discount_fraction: 0.6 } }");
  REQUIRE(with_file->model);
  const auto spot = with_file->model->prices.price(shipped_instance("aws.p4d.24xlarge"), s::SPOT);
  CHECK(spot->per_hour == Approx(20 * 0.4));  // off the scenario's on-demand price
  CHECK_THAT(spot->origin, Catch::EndsWith("/p.textproto:1"));
  CHECK(spot->source == "user override");
}

}  // namespace
}  // namespace clustersim
