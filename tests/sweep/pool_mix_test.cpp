// Tests of clusters made of pools (issue 17): one pool is the plain cluster bit for bit, the
// shipped scenario where a mix wins, owned capacity and availability caps in the rows, the load
// errors of a mix (CPU-only pool, tensor parallelism across pools, a GPU too small, a layout that
// does not divide a pool), a pool's replica count, and the rows' pool_placement (exact text,
// empty for one pool, the same after HDF5 and CSV).
#include <catch2/catch.hpp>
#include <sstream>

#include "sim/sweep/pool_placement.h"
#include "sim/sweep/ranking.h"
#include "sim/sweep/results_file.h"
#include "tests/testing/scenario_text.h"
#include "tests/testing/shipped_catalog.h"
#include "tests/testing/sweep_rows.h"

namespace clustersim {
namespace {

using testing::sweep_rows;
using testing::TempDir;

std::unique_ptr<LoadedScenario> load(const std::string& path) {
  Diagnostics diagnostics;
  auto loaded = load_scenario(path, testing::shipped_catalog(), &diagnostics);
  INFO(diagnostics.to_string());
  REQUIRE(loaded != nullptr);
  return loaded;
}

using testing::scenario_errors;

const char kJob[] = R"(name: "t"
model: "llama2-7b"
job { global_batch_size: 64 sequence_length: 4096 precision: BF16 optimizer: ADAM
      token_budget: 1e9 }
)";

TEST_CASE("a cluster of one pool is the plain cluster of its instance, bit for bit") {
  const TempDir dir;
  const std::string rest = R"(
parallelism { distributed_optimizer: true recompute: RECOMPUTE_SELECTIVE }
sweep { tensor_parallel: [2, 4, 8] pipeline_parallel: [1, 2] }
cost { billing: [ON_DEMAND, SPOT] preemptions_per_instance_hour: 0.05 trials: 20
       restart { acquisition_s: 600 container_start_s: 300 }
       checkpoint { volume { tier: "aws.ebs.gp3" capacity_gib: 1000 } } }
)";
  const auto plain = load(dir.write(
      "plain.textproto", kJob +
                             std::string("cluster { instance: \"aws.p4d.24xlarge\" nodes: 2 "
                                         "fabric: \"single-switch\" }") +
                             rest));
  const auto pooled = load(
      dir.write("pool.textproto", kJob +
                                      std::string("cluster { pool { instance: \"aws.p4d.24xlarge\" "
                                                  "nodes: 2 } fabric: \"single-switch\" }") +
                                      rest));
  const std::vector<ResultRow> a = sweep_rows(*plain), b = sweep_rows(*pooled);
  REQUIRE(a.size() == 12);
  CHECK(a == b);
  CHECK(std::any_of(a.begin(), a.end(), [](const ResultRow& r) {
    return row_text(r, result_column("status")) == kStatusOk;
  }));
}

TEST_CASE(
    "with p5 spot capacity capped at 2 nodes the fastest run under the budget mixes p5 "
    "and p4d") {
  const auto scenario = load(testing::source_path("scenarios/mix_p5_p4d_spot_cap.textproto"));
  const std::vector<ResultRow> rows = sweep_rows(*scenario);
  // 4 x 4 combinations of pool sizes less the empty one, x 3 TP x 2 micro-batch sizes; the first
  // is 2 p4d alone (the last pool's count varies fastest).
  REQUIRE(rows.size() == 15 * 6);
  CHECK(row_text(rows.front(), result_column("instance")) == "aws.p4d.24xlarge");
  CHECK(row_number(rows.front(), result_column("nodes")) == 2);
  CHECK(row_number(rows.front(), result_column("pools")) == 1);
  TopRows fastest(result_column("time_to_train_h"), 1);
  const ResultRow* fastest_capped = nullptr;  // faster rows the availability cap leaves out
  const ResultRow* fastest_p5_only = nullptr;
  const ResultRow* fastest_p4d_only = nullptr;
  const int time = result_column("time_to_train_h");
  const auto faster = [&](const ResultRow* best, const ResultRow& r) {
    return !best || row_number(r, time) < row_number(*best, time);
  };
  for (const ResultRow& r : rows) {
    fastest.offer(r);
    const std::string& status = row_text(r, result_column("status"));
    const std::string& instance = row_text(r, result_column("instance"));
    if (status == kStatusOverAvailability && faster(fastest_capped, r)) fastest_capped = &r;
    const bool available = row_number(r, result_column("nodes")) <= 2;
    if (instance == "aws.p5.48xlarge" && available && faster(fastest_p5_only, r)) {
      fastest_p5_only = &r;
    }
    if (status != kStatusOk) continue;
    if (instance == "aws.p4d.24xlarge" && faster(fastest_p4d_only, r)) fastest_p4d_only = &r;
  }
  REQUIRE(fastest.rows().size() == 1);
  const ResultRow& best = fastest.rows().front();
  CHECK(row_number(best, result_column("pools")) == 2);
  const std::string& mix = row_text(best, result_column("instance"));
  CHECK(mix.find("aws.p5.48xlarge x 2") != std::string::npos);
  CHECK(mix.find("aws.p4d.24xlarge") != std::string::npos);
  CHECK(row_text(best, result_column("limiting_pool")).size() > 0);
  // Why: the p5 nodes to be had alone (at most 2) are slower and over the budget, the p4d alone
  // slower, and what is faster still rents more p5 than spot capacity allows.
  REQUIRE(fastest_p5_only);
  REQUIRE(fastest_p4d_only);
  CHECK(row_number(*fastest_p5_only, time) > row_number(best, time));
  CHECK(row_text(*fastest_p5_only, result_column("status")) == kStatusOverCost);
  CHECK(row_number(*fastest_p4d_only, time) > row_number(best, time));
  REQUIRE(fastest_capped);
  CHECK(row_number(*fastest_capped, time) < row_number(best, time));
  CHECK(row_number(best, result_column("cost")) <= 1200);
}

TEST_CASE("owned nodes are priced at zero or at their own rate, and the row says what to add") {
  const TempDir dir;
  const auto run = [&](const std::string& owned_price) {
    const auto scenario =
        load(dir.write("owned.textproto", kJob + std::string(R"(cluster { fabric: "single-switch" }
parallelism { tensor_parallel: 8 distributed_optimizer: true recompute: RECOMPUTE_SELECTIVE }
sweep {
  pool { instance: "aws.p4d.24xlarge" nodes: [2] owned_nodes: 2 )") +
                                              owned_price + R"( }
  pool { instance: "aws.p5.48xlarge" nodes: [0, 1] }
})"));
    return sweep_rows(*scenario);
  };
  const std::vector<ResultRow> zero = run(""), own = run("owned_price: OWNED_AT_OWN_RATE");
  REQUIRE(zero.size() == 2);
  REQUIRE(own.size() == 2);
  const int price = result_column("price_per_hour"), added = result_column("nodes_added");
  // Only the owned p4d: nothing to pay at zero; 2 x the p4d price at its own rate.
  CHECK(row_text(zero[0], added) == "none");
  CHECK(row_number(zero[0], price) == 0);
  CHECK(row_number(own[0], price) == Approx(2 * 21.957642));
  // Adding one p5 pays for it alone (at zero), or for all three nodes.
  CHECK(row_text(zero[1], added) == "1 aws.p5.48xlarge");
  CHECK(row_number(zero[1], price) == Approx(55.04));
  CHECK(row_number(own[1], price) == Approx(55.04 + 2 * 21.957642));
  const int step = result_column("step_s");
  CHECK(row_number(zero[1], step) == row_number(own[1], step));
}

TEST_CASE("a pool of a CPU-only instance is an error at its instance") {
  CHECK(scenario_errors(kJob + std::string(R"(cluster {
  pool { instance: "aws.p4d.24xlarge" nodes: 1 }
  pool { instance: "aliyun.ecs.r6.8xlarge" nodes: 2 }
})")) == "s.textproto:7:10: cluster.pool[1].instance: \"aliyun.ecs.r6.8xlarge\" has no GPU "
         "(gpu_count is 0): a pool needs GPUs to train\n");
}

TEST_CASE("tensor parallelism spanning pools is an error at its degree") {
  CHECK(scenario_errors(kJob + std::string(R"(cluster {
  pool { instance: "aws.p5.48xlarge" nodes: 1 }
  pool { instance: "aws.p4d.24xlarge" nodes: 1 }
}
parallelism { tensor_parallel: 16 })")) ==
        "s.textproto:9:15: parallelism.tensor_parallel: 16 would span pools: pool 1 "
        "(\"aws.p5.48xlarge\") has NVLink domains of 8 GPUs, and a tensor-parallel group stays "
        "inside one pool's NVLink domain\n");
}

TEST_CASE("pools whose model does not fit in the smaller GPU under the layout are an error") {
  // Llama-2-7B data-parallel with the distributed optimizer: 16 bytes of weights, fp32 gradients
  // and sharded states per parameter and the activations, about 65 GiB per GPU: the 80 GiB
  // H100s hold it, the 40 GiB A100s do not.
  const std::string errors = scenario_errors(kJob + std::string(R"(cluster {
  pool { instance: "aws.p5.48xlarge" nodes: 1 }
  pool { instance: "aws.p4d.24xlarge" nodes: 1 }
}
parallelism { distributed_optimizer: true })"));
  CHECK(errors.rfind("s.textproto:7:10: cluster.pool[1].instance: the model does not fit in the "
                     "memory of \"aws.p4d.24xlarge\"'s A100-SXM4-40GB under TP 1 CP 1 PP 1 mbs 1, "
                     "ZeRO 0, recompute RECOMPUTE_NONE: it needs ",
                     0) == 0);
  CHECK(errors.find("GiB per GPU of the 39.4 GiB it has (every pool's GPU holds the whole "
                    "layout)\n") != std::string::npos);
  CHECK(errors.find("pool[0]") == std::string::npos);
}

TEST_CASE(
    "every error at its field: pools beside a one-type cluster, a stated link without "
    "bandwidth, fewer nodes than owned") {
  CHECK(scenario_errors(kJob + std::string(R"(cluster {
  instance: "aws.p5.48xlarge"
  pool { instance: "aws.p5.48xlarge" nodes: 1 }
  inter_pool { kind: STATED }
}
sweep { pool { instance: "aws.p4d.24xlarge" nodes: [1, 4] owned_nodes: 2 } })")) ==
        "s.textproto:6:3: cluster.instance: cannot be given beside pools (a pool names its "
        "instance and nodes)\n"
        "s.textproto:10:9: sweep.pool: replaces cluster.pool: give one of them\n"
        "s.textproto:8:3: cluster.inter_pool.bandwidth_gbit_per_s: is required\n"
        "s.textproto:10:53: sweep.pool[0].nodes[0]: is below owned_nodes (2)\n");
}

TEST_CASE("swept pools whose every count is 0 are an error at the last pool's nodes") {
  // No combination held a node: the sweep said "no valid configuration among 0: " and no field.
  CHECK(scenario_errors(kJob + std::string(R"(sweep {
  pool { instance: "aws.p5.48xlarge" nodes: [0] }
  pool { instance: "aws.p4d.24xlarge" nodes: [0] }
})")) == "s.textproto:7:39: sweep.pool[1].nodes: every pool's nodes are 0, so no combination "
         "holds a node (a 0 leaves its pool out): give one pool a count above 0\n");
  CHECK(scenario_errors(kJob + std::string(R"(sweep {
  pool { instance: "aws.p5.48xlarge" nodes: [0] }
  pool { instance: "aws.p4d.24xlarge" nodes: [0, 1] }
})")) == "");
}

TEST_CASE("a pool's node counts are listed once each") {
  // A count listed twice gave each of its mixes twice (tools/input_audit.py).
  CHECK(scenario_errors(kJob + std::string(R"(sweep {
  pool { instance: "aws.p5.48xlarge" nodes: [1, 2, 1] }
  pool { instance: "aws.p4d.24xlarge" nodes: [1] }
})")) == "s.textproto:6:52: sweep.pool[0].nodes[2]: 1 is listed twice\n");
}

// One p5 node (8 H100) then one p4d node (8 A100); the layout on line 9.
const std::string kOneNodeEach = kJob + std::string(R"(cluster {
  pool { instance: "aws.p5.48xlarge" nodes: 1 }
  pool { instance: "aws.p4d.24xlarge" nodes: 1 }
}
)");

TEST_CASE("a pool's replicas are its GPUs over tensor x context x pipeline parallel, or none") {
  const PoolShare two_nodes{nullptr, 2, 0, false, 8, 1};  // 16 GPUs
  const auto replicas = [&](int tp, int cp, int pp, const PoolShare& pool) {
    schema::Parallelism p;
    p.set_tensor_parallel(tp);
    p.set_context_parallel(cp);
    p.set_pipeline_parallel(pp);
    return pool_replicas(pool, p);
  };
  CHECK(replicas(8, 1, 2, two_nodes) == 1);
  CHECK(replicas(2, 2, 2, two_nodes) == 2);
  CHECK(replicas(1, 1, 1, two_nodes) == 16);
  CHECK(replicas(4, 1, 3, PoolShare{nullptr, 3, 0, false, 8, 1}) == 2);  // 24 GPUs over 12
  CHECK(replicas(8, 1, 2, PoolShare{nullptr, 1, 0, false, 8, 1}) == std::nullopt);
  CHECK(replicas(3, 1, 1, two_nodes) == std::nullopt);
  // A layout that does not divide a pool's GPUs is an error at its pipeline degree.
  CHECK(scenario_errors(kOneNodeEach + "parallelism { tensor_parallel: 8 pipeline_parallel: 2 }") ==
        "s.textproto:9:34: parallelism.pipeline_parallel: tensor x context x pipeline parallel "
        "does not divide every pool's GPUs: 16 does not divide the 8 GPUs of aws.p5.48xlarge x "
        "1\n");
}

// The one valid configuration of kOneNodeEach with `parallelism`.
Configuration only_configuration(const TempDir& dir, const std::string& parallelism) {
  const auto loaded = testing::load_valid_scenario(dir, kOneNodeEach + parallelism);
  const ExpandedConfigurations space = expand_configurations(*loaded);
  REQUIRE(space.valid.size() == 1);
  return space.valid.front();
}

TEST_CASE("the placement names each pool's replicas and micro-batches, or its stages and layers") {
  const TempDir dir;
  Evaluation e;
  const Configuration replicas =
      only_configuration(dir, "parallelism { tensor_parallel: 8 distributed_optimizer: true }");
  CHECK(describe_pool_placement(replicas, e) ==
        "aws.p5.48xlarge: 1 replica + aws.p4d.24xlarge: 1 replica");  // not simulated (OOM)
  e.pools = PoolStepResult{};
  e.pools->micro_batches = {40, 24};
  e.pools->pool_micro_batches = {40, 24};
  CHECK(describe_pool_placement(replicas, e) ==
        "aws.p5.48xlarge: 1 replica takes 40 of 64 micro-batches + aws.p4d.24xlarge: 1 replica "
        "takes 24 of 64 micro-batches");
  // Two replicas a pool: 39 split 20 + 19, the step timing each as the busiest.
  const Configuration two_each = only_configuration(dir, "parallelism { tensor_parallel: 4 }");
  e.pools->micro_batches = {20, 12};
  e.pools->pool_micro_batches = {39, 24};
  CHECK(describe_pool_placement(two_each, e) ==
        "aws.p5.48xlarge: 2 replicas take 39 of 63 micro-batches (at most 20 each) + "
        "aws.p4d.24xlarge: 2 replicas take 24 of 63 micro-batches");

  Evaluation across;
  const Configuration stages = only_configuration(
      dir, "parallelism { tensor_parallel: 4 pipeline_parallel: 4 pool_placement: "
           "PIPELINE_ACROSS_POOLS }");
  CHECK(describe_pool_placement(stages, across) ==
        "aws.p5.48xlarge: stages 1-2 + aws.p4d.24xlarge: stages 3-4");
  across.stages = PipelineAcrossPoolsResult{};
  across.stages->stage_layers = {10, 9, 7, 6};
  CHECK(describe_pool_placement(stages, across) ==
        "aws.p5.48xlarge: stages 1-2 (layers 10+9) + aws.p4d.24xlarge: stages 3-4 (layers 7+6)");
  // What the pools are: the row's pools_as cell (regress pairs rows by it, labels say it).
  const int pools_as = result_column("pools_as");
  CHECK(row_text(configuration_row(stages), pools_as) == "PIPELINE_ACROSS_POOLS");
  CHECK(row_text(configuration_row(two_each), pools_as) == "DATA_PARALLEL_POOLS");
  CHECK(row_text(configuration_row(replicas), pools_as) == "DATA_PARALLEL_POOLS");

  const auto one_pool = testing::load_valid_scenario(
      dir, kJob + std::string("cluster { pool { instance: \"aws.p4d.24xlarge\" nodes: 2 } }\n"
                              "parallelism { tensor_parallel: 8 }"));
  const ExpandedConfigurations plain = expand_configurations(*one_pool);
  REQUIRE(plain.valid.size() == 1);
  CHECK(describe_pool_placement(plain.valid.front(), e) == "");
  CHECK(row_text(configuration_row(plain.valid.front()), pools_as).empty());
}

TEST_CASE("rows state a mix's placement, empty for one pool, the same after HDF5 and CSV") {
  const TempDir dir;
  // ZeRO-3's lockstep deals every replica the same micro-batches: 64 over 4; stage_layers fix
  // the pipeline's split. Neither depends on a GPU's speed.
  std::vector<ResultRow> rows = sweep_rows(*testing::load_valid_scenario(
      dir, kOneNodeEach + "parallelism { tensor_parallel: 2 pipeline_parallel: 2 zero_stage: 3 }"));
  for (ResultRow& row : sweep_rows(*testing::load_valid_scenario(
           dir, kOneNodeEach + "parallelism { tensor_parallel: 8 pipeline_parallel: 2 "
                            "pool_placement: PIPELINE_ACROSS_POOLS stage_layers: [20, 12] }"))) {
    rows.push_back(std::move(row));
  }
  for (ResultRow& row : sweep_rows(*testing::load_valid_scenario(
           dir, kJob + std::string("cluster { instance: \"aws.p4d.24xlarge\" nodes: 1 }\n"
                                   "parallelism { tensor_parallel: 8 }")))) {
    rows.push_back(std::move(row));
  }
  REQUIRE(rows.size() == 3);
  const int placement = result_column("pool_placement");
  const std::vector<std::string> expected = {
      "aws.p5.48xlarge: 2 replicas take 32 of 64 micro-batches + aws.p4d.24xlarge: 2 replicas "
      "take 32 of 64 micro-batches",
      "aws.p5.48xlarge: stage 1 (layers 20) + aws.p4d.24xlarge: stage 2 (layers 12)", ""};
  for (size_t i = 0; i < rows.size(); ++i) {
    INFO(i);
    CHECK(row_text(rows[i], placement) == expected[i]);
    CHECK(row_text(rows[i], result_column("status")) == kStatusOk);
  }
  CHECK(std::holds_alternative<std::monostate>(rows[2][placement]));  // no cell, not ""

  std::string error;
  const std::string path = dir.path() + "/r.h5";
  auto writer = ResultsWriter::create(path, &error);
  REQUIRE(writer->append(rows, &error));
  SweepSummary summary;
  summary.shard_count = 1;
  summary.rows = summary.configurations = 3;
  REQUIRE(writer->commit(summary, &error));
  ResultsFile file;
  REQUIRE(read_results(path, &file, &error));
  CHECK(file.rows == rows);
  CHECK(file.absent_columns.empty());

  std::ostringstream csv;
  StreamingTable table(&csv, OutputFormat::kCsv, result_column_keys());
  for (const ResultRow& row : rows) table.add_row(row);
  table.finish();
  std::istringstream lines(csv.str());
  std::vector<std::vector<std::string>> cells;  // no cell holds a comma: none is quoted
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string>& fields = cells.emplace_back();
    std::istringstream in(line + ",");
    for (std::string field; std::getline(in, field, ',');) fields.push_back(field);
    REQUIRE(fields.size() == result_columns().size());
  }
  REQUIRE(cells.size() == 4);
  CHECK(cells[0][placement] == "pool_placement");
  for (size_t i = 0; i < rows.size(); ++i) CHECK(cells[i + 1][placement] == expected[i]);
}

}  // namespace
}  // namespace clustersim
