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

TEST_CASE("a configuration pays an unverified price where any of its pools' is second-hand") {
  CHECK(unverified(s::UNVERIFIED));
  CHECK_FALSE(unverified(s::READ));
  CHECK_FALSE(unverified(s::CONFIDENCE_UNSPECIFIED));  // an override without a confidence
  const PriceBook catalog;  // the catalog's prices alone
  // Alibaba's list prices are third-party (UNVERIFIED); AWS's are read in SkyPilot's catalog.
  const s::InstanceType& aliyun = shipped_instance("aliyun.ecs.gn7e-c16g1.4xlarge");
  const s::InstanceType& p5 = shipped_instance("aws.p5.48xlarge");
  CHECK(prices_confidence(catalog, {&aliyun}, s::ON_DEMAND) == "unverified");
  CHECK(prices_confidence(catalog, {&p5, &aliyun}, s::ON_DEMAND) == "unverified");
  CHECK(prices_confidence(catalog, {&p5}, s::ON_DEMAND) == "read");
  CHECK(prices_confidence(catalog, {&p5}, s::SUBSCRIPTION_MONTHLY).empty());  // not priced
}

// A user's own price is neither the catalog's read price nor a second-hand one, unless its
// source says how far it can be relied on; a configuration reads its least reliable price's.
TEST_CASE("a user's price of no stated confidence reads user, not read") {
  UsedPrice price;
  price.origin = "catalog";
  price.confidence = s::READ;
  CHECK(std::string(price_confidence(price)) == "read");
  price.confidence = s::UNVERIFIED;
  CHECK(std::string(price_confidence(price)) == "unverified");
  price.origin = "s.textproto:3";
  CHECK(std::string(price_confidence(price)) == "unverified");
  price.confidence = s::READ;
  CHECK(std::string(price_confidence(price)) == "read");
  price.confidence = s::CONFIDENCE_UNSPECIFIED;
  CHECK(std::string(price_confidence(price)) == "user");

  auto loaded = load_cost(cost_scenario(
      "  prices {\n"
      "    price { instance: \"aws.p4d.24xlarge\" price { billing: ON_DEMAND currency: USD "
      "per_hour: 20 } }\n  }"));
  REQUIRE(loaded->model);
  const PriceBook& book = loaded->model->prices;
  const s::InstanceType& aliyun = shipped_instance("aliyun.ecs.gn7e-c16g1.4xlarge");
  const s::InstanceType& p4d = shipped_instance("aws.p4d.24xlarge");
  const s::InstanceType& p5 = shipped_instance("aws.p5.48xlarge");
  CHECK(prices_confidence(book, {&p4d}, s::ON_DEMAND) == "user");
  CHECK(prices_confidence(book, {&p5, &p4d}, s::ON_DEMAND) == "user");
  CHECK(prices_confidence(book, {&p4d, &aliyun}, s::ON_DEMAND) == "unverified");
  CHECK(prices_confidence(book, {&p5}, s::ON_DEMAND) == "read");
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
  CHECK(spot->source == "no source given");
}

// A catalog discount is the provider's cut off its list price (Aliyun's preemptible instances): a
// negotiated on-demand rate does not move it. An override's discount is off the on-demand price in
// force. Each price says which it is off (printed under the cost table).
TEST_CASE(
    "a catalog discount is off the catalog's on-demand price, an override's off the one in "
    "force, and each says so") {
  const std::string on_demand_override =
      "price { instance: \"aliyun.ecs.gn7e-c16g1.4xlarge\"\n"
      "  price { billing: ON_DEMAND currency: CNY per_hour: 20 } }\n";
  auto catalog_discount = load_cost(
      cost_scenario("  billing: [ON_DEMAND, SPOT]", "instance: \"aliyun.ecs.gn7e-c16g1.4xlarge\""),
      on_demand_override);
  REQUIRE(catalog_discount->model);
  const PriceBook& book = catalog_discount->model->prices;
  const s::InstanceType& gn7e = shipped_instance("aliyun.ecs.gn7e-c16g1.4xlarge");
  CHECK(book.price(gn7e, s::ON_DEMAND)->per_hour == 20);
  const auto spot = book.price(gn7e, s::SPOT);
  CHECK(spot->per_hour == Approx(34.742 * 0.2));  // not 20 x 0.2
  CHECK(spot->origin == "catalog");
  CHECK(spot->basis == "80% off the catalog's ON_DEMAND 34.742 CNY/h (catalog)");
  CHECK(book.price(gn7e, s::ON_DEMAND)->basis.empty());

  auto override_discount = load_cost(
      cost_scenario("  billing: [ON_DEMAND, SPOT]", "instance: \"aliyun.ecs.gn7e-c16g1.4xlarge\""),
      on_demand_override +
          "price { instance: \"aliyun.ecs.gn7e-c16g1.4xlarge\"\n"
          "  price { billing: SPOT currency: CNY discount_fraction: 0.5 } }\n");
  REQUIRE(override_discount->model);
  const auto half = override_discount->model->prices.price(gn7e, s::SPOT);
  CHECK(half->per_hour == 10);
  CHECK_THAT(half->basis, Catch::StartsWith("50% off the ON_DEMAND 20 CNY/h (") &&
                              Catch::EndsWith("/p.textproto:1)"));
}

// cost_scenario on aws.p3.8xlarge nodes, in FP16 (its V100s have no BF16).
std::string p3_scenario(const std::string& cost) {
  std::string text = cost_scenario(cost, "instance: \"aws.p3.8xlarge\"");
  return text.replace(text.find("BF16"), 4, "FP16");
}

TEST_CASE("an instance priced in several regions needs prices.region to pick one") {
  // The catalog lists aws.p3.8xlarge on spot at 1.2635 USD/h in us-east-2 and 2.7475 in
  // us-west-2, on demand at 12.24 in us-east-1. The first spot price was taken silently.
  const s::InstanceType& p3 = shipped_instance("aws.p3.8xlarge");
  auto unset = load_cost(p3_scenario("  billing: [ON_DEMAND, SPOT]"));
  CHECK(unset->model == nullptr);
  CHECK_THAT(unset->diagnostics,
             Catch::StartsWith("s.textproto:11:3: cluster.instance: SPOT price of "
                               "\"aws.p3.8xlarge\" (") &&
                 Catch::Contains("topologies/instances_aws.textproto:") &&
                 Catch::EndsWith(") is ambiguous: SPOT prices in 2 regions: us-east-2 (1.2635 "
                                 "USD/h), us-west-2 (2.7475 USD/h): set cost.prices.region (or "
                                 "region in a --prices file) to the one you rent in\n"));
  CHECK(load_cost(p3_scenario(""))->model != nullptr);  // on demand alone: one price

  const std::string west =
      p3_scenario("  billing: [ON_DEMAND, SPOT]\n  prices { region: \"us-west-2\" }");
  auto chosen = load_cost(west);
  REQUIRE(chosen->model);
  const auto spot = chosen->model->prices.price(p3, s::SPOT);
  CHECK(spot->per_hour == 2.7475);
  CHECK(spot->region == "us-west-2");
  const auto on_demand = chosen->model->prices.price(p3, s::ON_DEMAND);
  CHECK(on_demand->per_hour == 12.24);  // its only on-demand price, whatever the region
  CHECK(on_demand->region == "us-east-1");
  // A configuration's regions, each once, in its pools' order; none for an unpriced mode.
  const s::InstanceType& p5 = shipped_instance("aws.p5.48xlarge");
  const PriceBook& book = chosen->model->prices;
  CHECK(price_regions(book, {&p3, &p3}, s::SPOT) == "us-west-2");
  CHECK(price_regions(book, {&p3, &p5}, s::SPOT) == "us-west-2+us-east-1");  // p5: us-east-1
  CHECK(price_regions(book, {&p3}, s::SUBSCRIPTION_MONTHLY).empty());
  // A --prices file's region wins over the scenario's.
  auto file = load_cost(west, "region: \"us-east-2\"");
  REQUIRE(file->model);
  CHECK(file->model->prices.price(p3, s::SPOT)->per_hour == 1.2635);

  auto elsewhere = load_cost(p3_scenario("  billing: SPOT\n  prices { region: \"us-east-1\" }"));
  CHECK_THAT(elsewhere->diagnostics,
             Catch::Contains("(2.7475 USD/h), none in region \"us-east-1\": set "
                             "cost.prices.region"));
  auto typo = load_cost(p3_scenario("  prices { region: \"us-west2\" }"));
  CHECK_THAT(typo->diagnostics,
             Catch::Contains("s.textproto:18:12: cost.prices.region: \"us-west2\" is named by no "
                             "catalog price (did you mean \"us-west-2\"?) (regions: "));
}

}  // namespace
}  // namespace clustersim
