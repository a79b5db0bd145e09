// Tests of weighted max-min fairness against hand-solved systems. Each case writes the system:
// constraints with capacities, flows as the constraints they use.
#include "sim/engine/max_min_fair.h"

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

}  // namespace
}  // namespace clustersim
