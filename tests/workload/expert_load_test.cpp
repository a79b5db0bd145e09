// Tests of the experts' loads under an unbalanced router and a capacity factor
// (sim/workload/expert_load): the hot-expert closed forms, dropping, padding, and the routing
// settings refused.
#include "sim/workload/expert_load.h"

#include <catch2/catch.hpp>

#include "tests/testing/parse_message.h"
#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

const schema::Transformer& mixtral() {  // 8 experts, top-2
  return testing::shipped_catalog().models().find("mixtral-8x7b")->value->transformer();
}

ExpertLoad load(const std::string& routing, int expert_parallel) {
  return expert_load(mixtral(), testing::parse_message<schema::ExpertRouting>(routing),
                     expert_parallel);
}

TEST_CASE("a balanced router loads every rank alike and drops nothing") {
  for (int ep : {1, 2, 8}) {
    const ExpertLoad l = load("", ep);
    CHECK(l.busiest_rank == 1);
    CHECK(l.sent == 1);
    CHECK(l.dropped == 0);
  }
}

TEST_CASE("the rank of the hot expert runs its extra tokens less what its other experts lack") {
  // One expert per rank: the rank runs (1 + v) times the mean.
  CHECK(load("max_violation: 0.5", 8).busiest_rank == Approx(1.5));
  // Two per rank: the hot one's 1 + v and another's (8 - 1 - v) / 7.
  const ExpertLoad two = load("max_violation: 0.5", 4);
  CHECK(two.hot_expert == Approx(1.5));
  CHECK(two.other_experts == Approx(6.5 / 7));
  CHECK(two.busiest_rank == Approx((1.5 + 6.5 / 7) / 2));
  // Every expert on one rank: the imbalance stays inside it.
  CHECK(load("max_violation: 0.5", 1).busiest_rank == Approx(1));
  CHECK(load("max_violation: 0.5", 8).dropped == 0);
}

TEST_CASE("a capacity factor caps the hot expert and drops its excess") {
  const ExpertLoad l = load("max_violation: 0.5 capacity_factor: 1.25", 8);
  CHECK(l.busiest_rank == Approx(1.25));
  CHECK(l.dropped == Approx(0.25 / 8));  // of the hot expert's 1.5, 0.25 of one expert's mean
  CHECK(l.sent == Approx(1 - 0.25 / 8));
  // A capacity below the mean drops from every expert.
  const ExpertLoad low = load("capacity_factor: 0.5", 8);
  CHECK(low.busiest_rank == Approx(0.5));
  CHECK(low.dropped == Approx(0.5));
}

TEST_CASE("padded to capacity, every expert runs and every rank sends the whole capacity") {
  const ExpertLoad l = load("capacity_factor: 1.25 pad_to_capacity: true", 4);
  CHECK(l.busiest_rank == Approx(1.25));
  CHECK(l.sent == Approx(1.25));
  CHECK(l.dropped == 0);
}

TEST_CASE("routing settings a router cannot have are refused with the field") {
  auto problem = [](const std::string& text, const std::string& model = "mixtral-8x7b") {
    const RoutingProblem p = expert_routing_problem(
        testing::shipped_catalog().models().find(model)->value->transformer(),
        testing::parse_message<schema::ExpertRouting>(text));
    return p.field + ": " + p.reason;
  };
  CHECK(problem("max_violation: 0.1", "llama2-7b") ==
        ": the model has no mixture-of-experts layers");
  CHECK(problem("max_violation: -0.1") == "max_violation: must be at least 0");
  // Top-2 of 8: one expert gets at most every token, 4 times the mean.
  CHECK(problem("max_violation: 3") == ": ");
  CHECK(problem("max_violation: 3.5") ==
        "max_violation: the busiest expert would take more than every token (1 + max_violation "
        "at most num_experts / experts_per_token = 4)");
  CHECK(problem("capacity_factor: 0") == "capacity_factor: must be above 0");
  CHECK(problem("pad_to_capacity: true") == "pad_to_capacity: needs capacity_factor");
  CHECK(problem("consecutive_experts: true") == ": ");
  CHECK(problem("consecutive_experts: true max_violation: 0.1") ==
        "consecutive_experts: is a perfectly balanced gate: not with max_violation or "
        "capacity_factor");
  CHECK(problem("consecutive_experts: true capacity_factor: 1.5") ==
        "consecutive_experts: is a perfectly balanced gate: not with max_violation or "
        "capacity_factor");
}

}  // namespace
}  // namespace clustersim
