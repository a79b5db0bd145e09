// Every row of a scenario's sweep against the shipped catalog, in the order the sweep delivers
// them (two threads: the rows are the same for any thread count), for the tests of sim/sweep.
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "sim/cost/cost_model.h"
#include "sim/sweep/sweep_runner.h"
#include "tests/testing/shipped_catalog.h"

namespace clustersim::testing {

inline std::vector<ResultRow> sweep_rows(const LoadedScenario& scenario) {
  Diagnostics diagnostics;
  const auto cost = load_cost_model(scenario, shipped_catalog(), nullptr, &diagnostics);
  INFO(diagnostics.to_string());
  REQUIRE(cost != nullptr);
  std::vector<ResultRow> all;
  std::string error;
  run_sweep(
      shipped_catalog(), scenario, *cost, {.threads = 2},
      [&](std::vector<ResultRow>& rows, int64_t, const SweepCounts&) {
        all.insert(all.end(), rows.begin(), rows.end());
        return true;
      },
      &error);
  REQUIRE(error.empty());
  return all;
}

}  // namespace clustersim::testing
