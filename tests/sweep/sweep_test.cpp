// Tests of the parallel sweep: the same rows for any thread count, chunk size or sharding; the
// results file round trip and merge; the rankings against brute force; and the
// regression comparison.
#include <catch2/catch.hpp>
#include <functional>
#include <random>

#include "sim/cost/cost_model.h"
#include "sim/sweep/ranking.h"
#include "sim/sweep/regression.h"
#include "sim/sweep/results_file.h"
#include "sim/sweep/results_merge.h"
#include "sim/sweep/sweep_runner.h"
#include "sim/sweep/sweep_summary.h"
#include "tests/testing/scenario_text.h"
#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

using testing::TempDir;

// 2 instances x 3 node counts x auto layouts x 2 recomputations of a 1.7B model: fits and OOMs.
const char kScenario[] = R"(name: "small"
model: "gpt-1.7b"
job { global_batch_size: 64 sequence_length: 2048 precision: BF16 optimizer: ADAM
      token_budget: 1e9 }
cluster { fabric: "single-switch" }
sweep { instance: ["aws.g5.12xlarge", "aws.p4d.24xlarge"] nodes: [1, 2, 3]
        auto_parallelism { micro_batch_size: [1, 4] }
        recompute: [RECOMPUTE_NONE, RECOMPUTE_FULL] }
)";

// The scenario kScenario, and `extra`.
std::unique_ptr<LoadedScenario> load_small(const TempDir& dir, const std::string& extra = "") {
  return testing::load_valid_scenario(dir, kScenario + extra, "small.textproto");
}

struct SweepRun {
  std::vector<ResultRow> rows;
  SweepCounts counts;
  int chunks = 0;
};

SweepRun sweep(const LoadedScenario& scenario, SweepOptions options) {
  SweepRun run;
  std::string error;
  Diagnostics diagnostics;
  const auto cost = load_cost_model(scenario, testing::shipped_catalog(), nullptr, &diagnostics);
  REQUIRE(cost != nullptr);
  run.counts = run_sweep(
      testing::shipped_catalog(), scenario, *cost, options,
      [&](std::vector<ResultRow>& rows, int64_t, const SweepCounts&) {
        ++run.chunks;
        run.rows.insert(run.rows.end(), rows.begin(), rows.end());
        return true;
      },
      &error);
  CHECK(error.empty());
  return run;
}

TEST_CASE("a sweep gives the same rows for any thread count and chunk size") {
  TempDir dir;
  auto scenario = load_small(dir);
  const SweepRun one = sweep(*scenario, {.threads = 1, .chunk = 1024});
  const SweepRun two = sweep(*scenario, {.threads = 2, .chunk = 7});
  const SweepRun adaptive = sweep(*scenario, {.threads = 2});
  CHECK(adaptive.rows == one.rows);
  REQUIRE(one.rows.size() > 20);
  CHECK(two.chunks > one.chunks);
  CHECK(one.rows == two.rows);
  CHECK(one.counts.simulated == two.counts.simulated);
  CHECK(one.counts.simulated > 0);
  CHECK(one.counts.simulated < one.counts.configurations);  // some configurations do not fit
  CHECK(one.counts.rows == static_cast<int64_t>(one.rows.size()));
  for (size_t i = 1; i < one.rows.size(); ++i) {
    CHECK(row_number(one.rows[i - 1], 0) < row_number(one.rows[i], 0));
  }
}

TEST_CASE("an interruption stops a sweep at once, the chunk under way discarded") {
  TempDir dir;
  auto scenario = load_small(dir);
  Diagnostics diagnostics;
  const auto cost = load_cost_model(*scenario, testing::shipped_catalog(), nullptr, &diagnostics);
  Interruption interruption;
  int chunks = 0;
  std::string error;
  const SweepCounts counts = run_sweep(
      testing::shipped_catalog(), *scenario, *cost,
      {.threads = 2, .chunk = 5, .interruption = &interruption},
      [&](std::vector<ResultRow>&, int64_t, const SweepCounts&) {
        if (++chunks == 2) interruption.request();  // as a signal arriving during chunk 3
        return true;
      },
      &error);
  CHECK(counts.interrupted);
  CHECK(chunks == 2);
  CHECK(error.empty());
  const SweepRun whole = sweep(*scenario, {.chunk = 5});
  CHECK_FALSE(whole.counts.interrupted);
  CHECK(whole.chunks > 2);
}

TEST_CASE("the shards of a sweep together hold exactly the rows of the whole sweep") {
  TempDir dir;
  auto scenario = load_small(dir);
  const SweepRun whole = sweep(*scenario, {.threads = 2});
  std::vector<ResultRow> joined;
  int64_t candidates = 0;
  for (int k = 0; k < 3; ++k) {
    const SweepRun shard = sweep(*scenario, {.shard = k, .shard_count = 3});
    for (const ResultRow& row : shard.rows) CHECK(static_cast<int>(row_number(row, 0)) % 3 == k);
    candidates += shard.counts.candidates;
    joined.insert(joined.end(), shard.rows.begin(), shard.rows.end());
  }
  std::sort(joined.begin(), joined.end(), [](const ResultRow& a, const ResultRow& b) {
    return row_number(a, 0) < row_number(b, 0);
  });
  CHECK(joined == whole.rows);
  CHECK(candidates == whole.counts.candidates);
  // A run resumed at a candidate index yields the rest of the rows.
  const SweepRun rest = sweep(*scenario, {.first_index = 50});
  CHECK(rest.rows.front() ==
        *std::find_if(whole.rows.begin(), whole.rows.end(),
                      [](const ResultRow& r) { return row_number(r, 0) >= 50; }));
  CHECK(shard_candidates(100, 1, 3, 0) == 33);   // 1, 4, ..., 97
  CHECK(shard_candidates(100, 0, 3, 50) == 17);  // 51, 54, ..., 99
}

TEST_CASE("each configuration has a row per billing mode, adjacent, priced by mode") {
  TempDir dir;
  auto scenario =
      load_small(dir, "cost { billing: [ON_DEMAND, SPOT] preemptions_per_instance_hour: 0 }\n");
  const SweepRun run = sweep(*scenario, {});
  const SweepRun on_demand = sweep(*load_small(dir), {});
  REQUIRE(run.rows.size() == 2 * on_demand.rows.size());
  const int billing = result_column("billing"), cost = result_column("cost");
  const int hours = result_column("time_to_train_h");
  int cheaper = 0;
  for (size_t i = 0; i < on_demand.rows.size(); ++i) {
    const ResultRow& a = run.rows[2 * i];
    const ResultRow& b = run.rows[2 * i + 1];
    CHECK(row_number(a, 0) == row_number(on_demand.rows[i], 0));
    CHECK(row_number(b, 0) == row_number(a, 0));
    CHECK(row_text(a, billing) == "ON_DEMAND");
    CHECK(row_text(b, billing) == "SPOT");
    // Without preemptions a spot run takes exactly as long, at the spot price.
    if (row_number(a, hours) == row_number(a, hours)) {
      CHECK(row_number(b, hours) == row_number(a, hours));
      cheaper += row_number(b, cost) < row_number(a, cost);
    }
  }
  CHECK(cheaper > 0);
}

// Writes `rows` as a complete results file of `summary` at `path`.
void write_file(const std::string& path, const std::vector<ResultRow>& rows,
                const SweepSummary& summary) {
  std::string error;
  auto writer = ResultsWriter::create(path, &error);
  REQUIRE(writer != nullptr);
  REQUIRE(writer->append(rows, &error));
  REQUIRE(writer->commit(summary, &error));
}

// The summary of a complete run (or shard) with `counts`.
SweepSummary complete_summary(const LoadedScenario& scenario, const SweepCounts& counts) {
  SweepSummary summary;
  summary.scenario_name = "small";
  summary.scenario_text = kScenario;
  summary.tool_version = "test";
  summary.catalog = testing::shipped_catalog().fingerprint();
  summary.candidates = ConfigurationSpace(scenario).size();
  summary.complete = true;
  summary.next_index = summary.candidates;
  summary.configurations = counts.configurations;
  summary.rows = counts.rows;
  summary.simulated = counts.simulated;
  summary.pruned = counts.pruned;
  return summary;
}

// merge_results' kinds of file: a training sweep's only.
const std::vector<ResultsKind>& training_kind() {
  static const std::vector<ResultsKind> kinds = {{&result_columns(), "a training sweep"}};
  return kinds;
}

TEST_CASE("results files round-trip every cell, merged shards equal a single run's file") {
  TempDir dir;
  auto scenario = load_small(dir);
  const SweepRun whole = sweep(*scenario, {});
  const SweepSummary summary = complete_summary(*scenario, whole.counts);
  write_file(dir.path() + "/whole.h5", whole.rows, summary);
  ResultsFile single;
  std::string error;
  REQUIRE(read_results(dir.path() + "/whole.h5", &single, &error));
  CHECK(single.rows == whole.rows);
  CHECK(single.summary == summary);

  std::vector<std::string> shards;
  for (int k = 0; k < 2; ++k) {
    const SweepRun shard = sweep(*scenario, {.shard = k, .shard_count = 2});
    SweepSummary part = complete_summary(*scenario, shard.counts);
    part.shard = k;
    part.shard_count = 2;
    shards.push_back(dir.path() + "/shard" + std::to_string(k) + ".h5");
    write_file(shards.back(), shard.rows, part);
  }
  REQUIRE(merge_results({shards[1], shards[0]}, dir.path() + "/merged.h5", training_kind(),
                        &error));
  ResultsFile merged;
  REQUIRE(read_results(dir.path() + "/merged.h5", &merged, &error));
  CHECK(merged.rows == single.rows);
  CHECK(merged.summary == single.summary);

  CHECK_FALSE(merge_results({shards[0]}, dir.path() + "/half.h5", training_kind(), &error));
  CHECK(error == "shard 2/2 is missing");
  CHECK_FALSE(
      merge_results({shards[0], shards[0]}, dir.path() + "/twice.h5", training_kind(), &error));
  CHECK(error == shards[0] + ": shard 1/2 is also in " + shards[0]);
}

TEST_CASE("merge of a shard of 2^31 - 1 says which shard is missing, without a slot for each") {
  // A file written with `--shard 1/2147483647` before --shard was bounded: merge made a slot per
  // declared shard and stopped with std::bad_alloc.
  TempDir dir;
  auto scenario = load_small(dir);
  const SweepRun run = sweep(*scenario, {.shard = 0, .shard_count = 2});
  SweepSummary part = complete_summary(*scenario, run.counts);
  part.shard_count = 2147483647;
  write_file(dir.path() + "/first.h5", run.rows, part);
  std::string error;
  CHECK_FALSE(merge_results({dir.path() + "/first.h5"}, dir.path() + "/m.h5", training_kind(),
                            &error));
  CHECK(error == "shard 2/2147483647 is missing");
}

TEST_CASE("a results file keeps the options and other inputs that change its rows") {
  TempDir dir;
  SweepSummary summary;
  summary.options = "--max-rate";
  summary.other_inputs = "trace 1234";
  write_file(dir.path() + "/with.h5", {}, summary);
  ResultsFile file;
  std::string error;
  REQUIRE(read_results(dir.path() + "/with.h5", &file, &error));
  CHECK(file.summary == summary);
  summary.options = summary.other_inputs = "";  // not written: read back as none
  write_file(dir.path() + "/without.h5", {}, summary);
  REQUIRE(read_results(dir.path() + "/without.h5", &file, &error));
  CHECK(file.summary == summary);
}

TEST_CASE("merge refuses a shard of another sweep, naming the file and what differs") {
  TempDir dir;
  auto scenario = load_small(dir);
  std::vector<SweepRun> runs;
  for (int k = 0; k < 2; ++k) runs.push_back(sweep(*scenario, {.shard = k, .shard_count = 2}));
  // Shard k of 2 (or of `count`), its summary changed by `change`; returns its path.
  int written = 0;
  const auto shard = [&](int k, const std::function<void(SweepSummary*)>& change = {}) {
    SweepSummary part = complete_summary(*scenario, runs[k].counts);
    part.shard = k;
    part.shard_count = 2;
    if (change) change(&part);
    const std::string path = dir.path() + "/s" + std::to_string(written++) + ".h5";
    write_file(path, runs[k].rows, part);
    return path;
  };
  const std::string first = shard(0);
  std::string error;
  REQUIRE(merge_results({first, shard(1)}, dir.path() + "/m.h5", training_kind(), &error));
  // Merges `first` with shard 2 changed by `change`: the changed file's name and ": ", as the
  // error starts.
  const auto refused = [&](const std::function<void(SweepSummary*)>& change) {
    const std::string other = shard(1, change);
    CHECK_FALSE(merge_results({first, other}, dir.path() + "/m.h5", training_kind(), &error));
    return other + ": ";
  };
  std::string other = refused([](SweepSummary* s) { s->prices = "prices { }"; });
  CHECK(error == other + "not a shard of the same sweep as " + first +
                     ": they differ in the --prices file's text");
  other = refused([](SweepSummary* s) { s->tool_version = "other"; });
  CHECK(error == other + "not a shard of the same sweep as " + first +
                     ": they differ in the clustersim version (test in " + first + ", other here)");
  other = refused([](SweepSummary* s) {
    s->catalog = "another";
    s->scenario_text += "# edited";
  });
  CHECK(error == other + "not a shard of the same sweep as " + first +
                     ": they differ in the scenario file's text and the catalog (its fingerprint)");
  other = refused([](SweepSummary* s) { s->options = "--max-rate"; });
  CHECK(error == other + "not a shard of the same sweep as " + first +
                     ": they differ in the options (none in " + first + ", --max-rate here)");
  other = refused([](SweepSummary* s) { s->other_inputs = "trace 1"; });
  CHECK(error == other + "not a shard of the same sweep as " + first +
                     ": they differ in the files the scenario reads (none in " + first +
                     ", trace 1 here)");
  other = refused([](SweepSummary* s) { s->shard_count = 3; });
  CHECK(error == other + "shard 2/3, but " + first + " is one of 2 shards");
  other = refused([](SweepSummary* s) { s->complete = false; });
  CHECK(error == other + "shard 2/2 is not complete (resume it first)");
  // The refused merges left the first merge's file as it was.
  ResultsFile merged;
  REQUIRE(read_results(dir.path() + "/m.h5", &merged, &error));
  CHECK(merged.summary.configurations == runs[0].counts.configurations +
                                             runs[1].counts.configurations);
}

// A ranked row with the given index, time to train and cost.
ResultRow point(int index, double hours, double cost) {
  ResultRow row(result_columns().size());
  row[0] = static_cast<double>(index);
  row[result_column("status")] = std::string(kStatusOk);
  row[result_column("time_to_train_h")] = hours;
  row[result_column("cost")] = cost;
  return row;
}

TEST_CASE("the Pareto front keeps exactly the non-dominated rows, in any arrival order") {
  std::mt19937 random(42);
  // Cost falling with time, plus noise; coarse values make ties.
  std::uniform_int_distribution<int> hours(1, 30), noise(0, 20);
  std::vector<ResultRow> rows;
  for (int i = 0; i < 400; ++i) {
    const int t = hours(random);
    rows.push_back(point(i, t, 300 / t + noise(random)));
  }
  std::vector<int64_t> expected;
  const int time = result_column("time_to_train_h"), cost = result_column("cost");
  for (const ResultRow& a : rows) {
    const bool dominated = std::any_of(rows.begin(), rows.end(), [&](const ResultRow& b) {
      const double at = row_number(a, time), ac = row_number(a, cost);
      const double bt = row_number(b, time), bc = row_number(b, cost);
      return bt <= at && bc <= ac && (bt < at || bc < ac);
    });
    if (!dominated) expected.push_back(static_cast<int64_t>(row_number(a, 0)));
  }
  for (int order = 0; order < 2; ++order) {
    ParetoFront front;
    for (const ResultRow& row : rows) front.offer(row);
    std::vector<int64_t> kept;
    for (const ResultRow& row : front.rows())
      kept.push_back(static_cast<int64_t>(row_number(row, 0)));
    std::sort(kept.begin(), kept.end());
    CHECK(kept == expected);
    std::shuffle(rows.begin(), rows.end(), random);
  }
  CHECK(expected.size() >= 5);
}

TEST_CASE("the best-N list equals sorting every ranked row, ties by index") {
  std::vector<ResultRow> rows;
  for (int i = 0; i < 50; ++i) rows.push_back(point(i, (i * 37) % 11, 1));
  rows[3][result_column("status")] = std::string(kStatusOutOfMemory);  // not ranked
  TopRows top(result_column("time_to_train_h"), 5);
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) top.offer(*it);
  // Time 0 at i = 0, 11, 22, 33, 44; then time 1 at i = 3 (OOM, skipped), 14, ...
  std::vector<int> kept;
  for (const ResultRow& row : top.rows()) kept.push_back(static_cast<int>(row_number(row, 0)));
  CHECK(kept == std::vector<int>{0, 11, 22, 33, 44});
}

TEST_CASE("regression: equal rows pass, a figure beyond its tolerance or a new status drifts") {
  const std::vector<ResultRow> baseline = {point(0, 10, 100), point(1, 20, 50)};
  std::vector<ResultRow> current = baseline;
  CHECK(compare_results(baseline, current, {}).passed());
  current[1][result_column("time_to_train_h")] = 20.1;  // 0.5% slower
  const RegressionReport strict = compare_results(baseline, current, {});
  REQUIRE(strict.drifts.size() == 1);
  CHECK(strict.drifts[0].index == 1);
  CHECK(strict.drifts[0].column == "time_to_train_h");
  CHECK(strict.drifts[0].difference == Approx(0.1 / 20.1));
  CHECK(compare_results(baseline, current, {{"time_to_train_h", 0.01}}).passed());
  current[0][result_column("status")] = std::string(kStatusOutOfMemory);
  current.pop_back();
  const RegressionReport report = compare_results(baseline, current, {{"time_to_train_h", 0.01}});
  CHECK(report.drifts.size() == 1);
  CHECK(report.drifts[0].column == "status");
  CHECK(report.missing == std::vector<int64_t>{1});
}

TEST_CASE("regression: rows pair by configuration, not position, when the sweep changed") {
  // The baseline swept nodes [1, 2, 4]; the current sweep [8, 1, 2]: its indices all moved.
  auto on_nodes = [](int index, int nodes, double hours) {
    ResultRow row = point(index, hours, 100);
    row[result_column("nodes")] = static_cast<double>(nodes);
    row[result_column("billing")] = std::string("ON_DEMAND");
    return row;
  };
  const std::vector<ResultRow> baseline = {on_nodes(0, 1, 40), on_nodes(1, 2, 20),
                                           on_nodes(2, 4, 10)};
  std::vector<ResultRow> current = {on_nodes(0, 8, 5), on_nodes(1, 1, 40), on_nodes(2, 2, 20)};
  const RegressionReport same = compare_results(baseline, current, {});
  CHECK(same.compared == 2);
  CHECK(same.drifts.empty());
  CHECK(same.missing == std::vector<int64_t>{2});  // the baseline's 4 nodes
  CHECK(same.added == std::vector<int64_t>{0});    // the 8 nodes
  current[2][result_column("time_to_train_h")] = 21.0;  // 2 nodes drifted: named at its index now
  const RegressionReport drifted = compare_results(baseline, current, {});
  REQUIRE(drifted.drifts.size() == 1);
  CHECK(drifted.drifts[0].index == 2);
  CHECK(drifted.drifts[0].baseline == "20");
  // Another billing mode is another row of the configuration: not paired with on demand.
  current[1][result_column("billing")] = std::string("SPOT");
  const RegressionReport billing = compare_results(baseline, current, {});
  CHECK(billing.compared == 1);
  CHECK(billing.missing == std::vector<int64_t>{0, 2});
  CHECK(billing.added == std::vector<int64_t>{0, 1});
}

TEST_CASE("regression: a row's name sets it apart from the rows described alike") {
  // Rows described by their node count alone: the two of 2 nodes differ in recompute and
  // schedule, which their names add; the one of 4 nodes keeps its description.
  auto on = [](int nodes, const char* recompute, const char* schedule) {
    ResultRow row = point(0, 1, 1);
    row[result_column("nodes")] = static_cast<double>(nodes);
    row[result_column("recompute")] = std::string(recompute);
    row[result_column("schedule")] = std::string(schedule);
    row[result_column("virtual_stages")] = 1.0;
    return row;
  };
  const std::vector<ResultRow> rows = {on(2, "RECOMPUTE_FULL", "ONE_F_ONE_B"),
                                       on(4, "RECOMPUTE_FULL", "GPIPE"),
                                       on(2, "RECOMPUTE_SELECTIVE", "GPIPE")};
  const std::vector<std::string> names =
      row_names({&rows[0], &rows[1], &rows[2]}, result_columns(), [](const ResultRow& r) {
        return std::to_string(static_cast<int>(row_number(r, result_column("nodes")))) + " nodes";
      });
  CHECK(names == std::vector<std::string>{
                     "2 nodes, schedule ONE_F_ONE_B, recompute RECOMPUTE_FULL", "4 nodes",
                     "2 nodes, schedule GPIPE, recompute RECOMPUTE_SELECTIVE"});
  // A column the baseline lacks names nothing.
  CHECK(row_names({&rows[0], &rows[2]}, result_columns(),
                  [](const ResultRow&) { return std::string("alike"); }, {"schedule"}) ==
        std::vector<std::string>{"alike, recompute RECOMPUTE_FULL",
                                 "alike, recompute RECOMPUTE_SELECTIVE"});
}

TEST_CASE("regression: a drift names the current row it was found in") {
  const std::vector<ResultRow> baseline = {point(0, 10, 100), point(1, 20, 50)};
  std::vector<ResultRow> current = baseline;
  current[1][result_column("cost")] = 60.0;
  const RegressionReport report = compare_results(baseline, current, {});
  REQUIRE(report.drifts.size() == 1);
  CHECK(report.drifts[0].row == 1);
}

TEST_CASE("regression: a column the baseline was written without is not compared") {
  const std::vector<ResultRow> baseline = {point(0, 10, 100)};  // its pool_placement empty
  std::vector<ResultRow> current = baseline;
  current[0][result_column("pool_placement")] = std::string("aws.p5.48xlarge: stage 1");
  const RegressionReport all = compare_results(baseline, current, {});
  REQUIRE(all.drifts.size() == 1);
  CHECK(all.drifts[0].column == "pool_placement");
  CHECK(compare_results(baseline, current, {}, {"pool_placement"}).passed());
  current[0][result_column("status")] = std::string(kStatusOutOfMemory);  // still compared
  CHECK(compare_results(baseline, current, {}, {"pool_placement"}).drifts.size() == 1);
}

}  // namespace
}  // namespace clustersim
