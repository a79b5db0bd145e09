// Tests of weighted max-min fairness against hand-solved systems. Each case writes the system:
// constraints with capacities, flows as the constraints they use.
#include "sim/engine/max_min_fair.h"

#include <bit>
#include <catch2/catch.hpp>

namespace clustersim {
namespace {

using Use = MaxMinFair::Use;

// The rates `m` gives `flows`.
std::vector<double> solve(MaxMinFair& m, const std::vector<std::vector<Use>>& flows,
                          double unconstrained_rate) {
  const std::vector<std::span<const Use>> spans(flows.begin(), flows.end());
  std::vector<double> rates;
  m.solve(spans, unconstrained_rate, &rates);
  return rates;
}

TEST_CASE("two equal flows on one link each get half") {
  // link0 = 10; f0 = {link0}, f1 = {link0}  =>  5, 5
  MaxMinFair m;
  const std::vector<double> capacities{10};
  m.set_capacities(capacities);
  CHECK(solve(m, {{{0, 1}}, {{0, 1}}}, 1e30) == std::vector<double>{5, 5});
}

TEST_CASE("a flow bottlenecked elsewhere leaves its unused share to the others") {
  // link0 = 10, link1 = 2; f0 = {link0, link1}, f1 = {link0}, f2 = {link0}
  // link1 limits f0 to 2; link0's remaining 8 splits 4 / 4.
  MaxMinFair m;
  const std::vector<double> capacities{10, 2};
  m.set_capacities(capacities);
  CHECK(solve(m, {{{0, 1}, {1, 1}}, {{0, 1}}, {{0, 1}}}, 1e30) == std::vector<double>{2, 4, 4});
}

TEST_CASE("a flow crossing a link twice consumes twice its rate there") {
  // link0 = 12; f0 uses link0 twice, f1 once: 2r + r = 12  =>  r = 4 for both.
  MaxMinFair m;
  const std::vector<double> capacities{12};
  m.set_capacities(capacities);
  CHECK(solve(m, {{{0, 2}}, {{0, 1}}}, 1e30) == std::vector<double>{4, 4});
}

TEST_CASE("a flow without constraints gets the unconstrained rate") {
  MaxMinFair m;
  const std::vector<double> capacities{1};
  m.set_capacities(capacities);
  CHECK(solve(m, {{}, {{0, 1}}}, 99) == std::vector<double>{99, 1});
}

TEST_CASE("the result does not depend on the order of flows") {
  // Parking lot: link0 = 1, link1 = 1; long flow on both, one short flow on each: all get 1/2.
  MaxMinFair m;
  const std::vector<double> capacities{1, 1};
  m.set_capacities(capacities);
  CHECK(solve(m, {{{0, 1}, {1, 1}}, {{0, 1}}, {{1, 1}}}, 1e30) ==
        std::vector<double>{0.5, 0.5, 0.5});
  CHECK(solve(m, {{{1, 1}}, {{0, 1}}, {{0, 1}, {1, 1}}}, 1e30) ==
        std::vector<double>{0.5, 0.5, 0.5});
}

TEST_CASE("a flow alone gets, bit for bit, the rate the rounds give it beside another") {
  // Capacities whose quotients round; the second flow uses other constraints, so the rounds
  // give the first the same bottleneck as when it is alone (where the solver takes a shortcut).
  MaxMinFair m;
  const std::vector<double> capacities{1e10 / 3, 7.77e9, 2.9e10 / 7, 1e9};
  m.set_capacities(capacities);
  for (const std::vector<MaxMinFair::Use>& flow :
       {std::vector<MaxMinFair::Use>{{0, 1}, {1, 2}, {2, 3}}, {{1, 3}, {2, 1}}, {{0, 7}},
        {{2, 1}, {0, 3}}}) {
    const std::vector<double> alone = solve(m, {flow}, 1e30);
    const std::vector<double> beside = solve(m, {flow, {{3, 1}}}, 1e30);
    CHECK(alone.size() == 1);
    CHECK(std::bit_cast<uint64_t>(alone[0]) == std::bit_cast<uint64_t>(beside[0]));
  }
}

}  // namespace
}  // namespace clustersim
