// Invariants of a sweep's answer that no single figure pins down (metamorphic relations, tag
// [invariant]): a configuration's rows do not depend on the rest of the space, so widening an axis
// keeps every row and never makes the best worse; every priced row costs its billed hours times
// its price per hour; a spot row is never faster than its on-demand row (as fast when every node is
// owned: owned nodes are not preempted), a subscription takes the on-demand time; the answer's
// fastest and cheapest are the minima over every ranked row.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <tuple>

#include "sim/sweep/ranking.h"
#include "tests/testing/scenario_text.h"
#include "tests/testing/shipped_catalog.h"
#include "tests/testing/sweep_rows.h"

namespace clustersim {
namespace {

using testing::TempDir;

std::vector<ResultRow> invariant_sweep_rows(const std::string& text) {
  const TempDir dir;
  return testing::sweep_rows(*testing::load_valid_scenario(dir, text));
}

// Every cell but the index, which names the configuration's place in its own space only.
std::vector<Table::Cell> without_index(const ResultRow& row) {
  return {row.begin() + 1, row.end()};
}

double column(const ResultRow& row, const char* key) {
  return row_number(row, result_column(key));
}

// The ranked row with the least `key`, ties to the lower index (what TopRows answers with).
const ResultRow* least(const std::vector<ResultRow>& rows, const char* key) {
  const ResultRow* best = nullptr;
  for (const ResultRow& row : rows) {
    if (!is_ranked(row) || std::isnan(column(row, key))) continue;
    if (best == nullptr || column(row, key) < column(*best, key)) best = &row;
  }
  return best;
}

// A 1.7B model on one or two instance types, auto layouts: `axes` widens or narrows the space.
std::string auto_scenario(const std::string& nodes, const std::string& auto_parallelism) {
  return R"(name: "invariant"
model: "gpt-1.7b"
job { global_batch_size: 64 sequence_length: 2048 precision: BF16 optimizer: ADAM
      token_budget: 1e9 }
cluster { fabric: "single-switch" }
parallelism { distributed_optimizer: true }
sweep { instance: ["aws.g5.12xlarge", "aws.p4d.24xlarge"] nodes: [)" +
         nodes + "]\n        auto_parallelism { " + auto_parallelism + " } }\n";
}

TEST_CASE(
    "a wider sweep keeps every row of the narrower one, cell for cell, and its best is no worse",
    "[invariant]") {
  const std::vector<ResultRow> narrow =
      invariant_sweep_rows(auto_scenario("1, 2", "micro_batch_size: [1]"));
  const std::vector<ResultRow> wide = invariant_sweep_rows(auto_scenario(
      "1, 2, 4", "micro_batch_size: [1, 4] max_virtual_stages: 2 max_context_parallel: 2"));
  REQUIRE(narrow.size() > 20);
  REQUIRE(wide.size() > 3 * narrow.size());
  std::map<std::vector<Table::Cell>, int> in_wide;
  for (const ResultRow& row : wide) ++in_wide[without_index(row)];
  int missing = 0;
  for (const ResultRow& row : narrow) missing += in_wide.count(without_index(row)) == 0;
  CHECK(missing == 0);
  for (const char* key : {"time_to_train_h", "cost"}) {
    INFO(key);
    const ResultRow *narrow_best = least(narrow, key), *wide_best = least(wide, key);
    REQUIRE(narrow_best != nullptr);
    REQUIRE(wide_best != nullptr);
    CHECK(column(*wide_best, key) <= column(*narrow_best, key));
    // The answer's list, fed the rows in any order, has the same first row.
    TopRows top(result_column(key), 3);
    for (auto row = wide.rbegin(); row != wide.rend(); ++row) top.offer(*row);
    REQUIRE(!top.rows().empty());
    CHECK(top.rows().front() == *wide_best);
  }
}

// Llama-2-7B on 1 or 2 p4d nodes, one of them owned, beside 0 to 2 rented p5, under on-demand,
// spot (preempted) and a monthly subscription priced by the scenario.
const char kBillingScenario[] = R"(name: "billing"
model: "llama2-7b"
job { global_batch_size: 256 sequence_length: 4096 precision: BF16 optimizer: ADAM
      token_budget: 1e10 }
cluster { fabric: "single-switch" }
parallelism { tensor_parallel: 8 distributed_optimizer: true recompute: RECOMPUTE_SELECTIVE }
sweep {
  pool { instance: "aws.p4d.24xlarge" nodes: [1, 2] owned_nodes: 1 }
  pool { instance: "aws.p5.48xlarge" nodes: [0, 1, 2] }
}
cost {
  billing: [ON_DEMAND, SPOT, SUBSCRIPTION_MONTHLY]
  prices {
    price { instance: "aws.p4d.24xlarge"
            price { billing: SUBSCRIPTION_MONTHLY currency: USD per_hour: 15 } }
    price { instance: "aws.p5.48xlarge"
            price { billing: SUBSCRIPTION_MONTHLY currency: USD per_hour: 40 } }
  }
  preemptions_per_instance_hour: 0.2
  restart { acquisition_s: 600 container_start_s: 300 }
  checkpoint { volume { tier: "aws.ebs.gp3" capacity_gib: 1000 } }
  trials: 20
}
)";

TEST_CASE(
    "every priced row costs its billed hours times its price, spot is never faster than on "
    "demand (equal when every node is owned) and a subscription takes the on-demand time",
    "[invariant]") {
  const std::vector<ResultRow> rows = invariant_sweep_rows(kBillingScenario);
  // (index) -> billing -> row
  std::map<double, std::map<std::string, const ResultRow*>> by_configuration;
  int priced = 0;
  for (const ResultRow& row : rows) {
    const std::string& billing = row_text(row, result_column("billing"));
    by_configuration[column(row, "index")][billing] = &row;
    const double hours = column(row, "time_to_train_h"), cost = column(row, "cost");
    if (std::isnan(hours) || std::isnan(cost)) continue;
    ++priced;
    const double period = billing == "SUBSCRIPTION_MONTHLY" ? 730 : 0;
    const double billed = period > 0 ? std::ceil(hours / period) * period : hours;
    INFO(column(row, "index") << " " << billing);
    // The instances' billed hours, and the checkpoint storage for the run's wall time (gp3 is
    // priced) where it checkpoints during the run; none where its interval is beyond the run (an
    // on-demand run here, only faults interrupting it: a final save only).
    const double storage = column(row, "storage_cost");
    if (std::isnan(column(row, "checkpoint_interval_h"))) {
      CHECK(storage == 0);
    } else {
      REQUIRE(storage > 0);
    }
    CHECK(cost == Approx(billed * column(row, "price_per_hour") + storage).epsilon(1e-12));
    CHECK(column(row, "cost_p95") >= cost);
    CHECK(column(row, "time_to_train_p95_h") >= hours);
    // The run simulation's clock ticks in microseconds: its time rounds to the nearest one.
    CHECK(hours * 3600 >= column(row, "steps") * column(row, "step_s") - 1e-6);
  }
  CHECK(priced >= 3 * 5);  // 6 clusters, one out of memory at most
  int spot_rows = 0, all_owned = 0;
  for (const auto& [index, modes] : by_configuration) {
    INFO(index);
    REQUIRE(modes.size() == 3);
    const double on_demand = column(*modes.at("ON_DEMAND"), "time_to_train_h");
    if (std::isnan(on_demand)) continue;
    ++spot_rows;
    const double spot = column(*modes.at("SPOT"), "time_to_train_h");
    CHECK(spot >= on_demand);
    // Nothing rented (the one owned p4d alone): nothing to preempt.
    if (row_text(*modes.at("SPOT"), result_column("nodes_added")) == "none") {
      ++all_owned;
      CHECK(spot == on_demand);
    }
    CHECK(column(*modes.at("SUBSCRIPTION_MONTHLY"), "time_to_train_h") == on_demand);
  }
  CHECK(spot_rows >= 5);
  CHECK(all_owned == 1);
}

}  // namespace
}  // namespace clustersim
