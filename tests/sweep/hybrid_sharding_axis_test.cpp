// Tests of hybrid sharding (HSDP) as a sweep axis: listed groups, auto_parallelism's whole-node
// groups, the located errors of the axis, its result column, and a swept row equal to the same
// layout run alone.
#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <tuple>

#include "sim/sweep/configuration_space.h"
#include "sim/sweep/evaluation.h"
#include "sim/sweep/result_row.h"
#include "tests/testing/scenario_text.h"
#include "tests/testing/shipped_catalog.h"
#include "tests/testing/temp_dir.h"

namespace clustersim {
namespace {

// Llama-2-7B on 4 p4de nodes (32 A100 80GB), with `rest` (parallelism, sweep).
std::string llama(const std::string& rest) {
  return R"(model: "llama2-7b"
job { global_batch_size: 64 sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 10 }
cluster { instance: "aws.p4de.24xlarge" nodes: 4 }
)" + rest;
}

TEST_CASE("listed shard groups: one configuration each, those not dividing DP pruned") {
  const testing::TempDir dir;
  const auto space = expand_configurations(*testing::load_valid_scenario(
      dir, llama("parallelism { zero_stage: 3 fsdp2: true }\n"
                 "sweep { tensor_parallel: [1, 2] data_parallel_shard: [8, 16, 32] }")));
  CHECK(space.total == 6);
  // TP 2 leaves DP 16, which 32 does not divide.
  CHECK(space.pruned.at("hybrid sharding's groups must divide the data-parallel ranks") == 1);
  std::set<std::tuple<int, int>> layouts;  // (TP, shard)
  for (const Configuration& c : space.valid) {
    layouts.emplace(c.parallelism.tensor_parallel(), c.parallelism.data_parallel_shard());
  }
  CHECK(layouts == std::set<std::tuple<int, int>>{{1, 8}, {1, 16}, {1, 32}, {2, 8}, {2, 16}});
}

TEST_CASE("auto_parallelism's hybrid sharding: groups filling whole nodes, beside all ranks") {
  const testing::TempDir dir;
  const auto space = expand_configurations(*testing::load_valid_scenario(
      dir, llama("parallelism { zero_stage: 3 fsdp2: true }\n"
                 "sweep { auto_parallelism { micro_batch_size: [1] max_pipeline_parallel: 2 "
                 "hybrid_sharding: true } }")));
  std::set<std::tuple<int, int, int>> layouts;  // (TP, PP, shard; 0: all the ranks)
  for (const Configuration& c : space.valid) {
    const schema::Parallelism& p = c.parallelism;
    layouts.emplace(p.tensor_parallel(), p.pipeline_parallel(), p.data_parallel_shard());
  }
  // TP 1 PP 1 (DP 32): groups of 1 and 2 nodes (8 and 16 ranks); TP 8 (DP 4): 1 and 2 ranks. Under
  // TP_PP_DP a replica of PP 2 spans 2 x TP GPUs: TP 1 PP 2 (DP 16) fills a node with 4 ranks.
  for (const auto& layout : std::vector<std::tuple<int, int, int>>{{1, 1, 0},
                                                                   {1, 1, 8},
                                                                   {1, 1, 16},
                                                                   {8, 1, 0},
                                                                   {8, 1, 1},
                                                                   {8, 1, 2},
                                                                   {1, 2, 4},
                                                                   {1, 2, 8}}) {
    INFO(std::get<0>(layout) << " " << std::get<1>(layout) << " " << std::get<2>(layout));
    CHECK(layouts.count(layout) == 1);
  }
  // No group smaller than a node, nor of all the ranks (that is the layout without one).
  CHECK(layouts.count({1, 1, 4}) == 0);
  CHECK(layouts.count({1, 1, 32}) == 0);
  // Without the flag: the same layouts, all sharded over every rank.
  const auto plain = expand_configurations(*testing::load_valid_scenario(
      dir, llama("parallelism { zero_stage: 3 fsdp2: true }\n"
                 "sweep { auto_parallelism { micro_batch_size: [1] max_pipeline_parallel: 2 } "
                 "}")));
  size_t without_shard = 0;
  for (const auto& layout : layouts) without_shard += std::get<2>(layout) == 0;
  CHECK(plain.valid.size() == without_shard);
  // The same nodes as the one pool of sweep.pool: the same layouts.
  const auto pool = expand_configurations(*testing::load_valid_scenario(dir, R"(model: "llama2-7b"
job { global_batch_size: 64 sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 10 }
parallelism { zero_stage: 3 fsdp2: true }
sweep { pool { instance: "aws.p4de.24xlarge" nodes: [4] }
        auto_parallelism { micro_batch_size: [1] max_pipeline_parallel: 2 hybrid_sharding: true } })"));
  CHECK(pool.valid.size() == space.valid.size());
}

TEST_CASE("bad hybrid-sharding axes are errors at their field") {
  const std::string zero3 = "parallelism { zero_stage: 3 fsdp2: true }\n";
  CHECK(testing::scenario_errors(llama(zero3 + "sweep { data_parallel_shard: [8, 0, -2] }")) ==
        "s.textproto:5:34: sweep.data_parallel_shard[1]: must be >= 1, got 0\n"
        "s.textproto:5:37: sweep.data_parallel_shard[2]: must be >= 1, got -2\n");
  CHECK(testing::scenario_errors(
            llama(zero3 + "sweep { tensor_parallel: [1, 2] data_parallel_shard: [8, 64, 12] }")) ==
        "s.textproto:5:58: sweep.data_parallel_shard[1]: 64 divides none of the sweep's "
        "data-parallel degrees (16, 32)\n"
        "s.textproto:5:62: sweep.data_parallel_shard[2]: 12 divides none of the sweep's "
        "data-parallel degrees (16, 32)\n");
  CHECK(testing::scenario_errors(
            llama(zero3 + "sweep { auto_parallelism { } data_parallel_shard: [48] }")) ==
        "s.textproto:5:30: sweep.data_parallel_shard[0]: 48 divides none of the sweep's GPU "
        "counts (32), so no data-parallel degree\n");
  CHECK(testing::scenario_errors(llama("sweep { zero_stage: [1, 2] data_parallel_shard: [8] }")) ==
        "s.textproto:4:28: sweep.data_parallel_shard: hybrid sharding needs zero_stage 3 among the "
        "sweep's ZeRO stages (parallelism.zero_stage or sweep.zero_stage), which are 1, 2\n");
  CHECK(testing::scenario_errors(llama("sweep { auto_parallelism { hybrid_sharding: true } }")) ==
        "s.textproto:4:28: sweep.auto_parallelism.hybrid_sharding: hybrid sharding needs "
        "zero_stage 3 among the sweep's ZeRO stages (parallelism.zero_stage or sweep.zero_stage), "
        "which are 0\n");
  CHECK(testing::scenario_errors(llama(
            zero3 +
            "sweep { auto_parallelism { hybrid_sharding: true } data_parallel_shard: [8] }")) ==
        "s.textproto:5:52: sweep.data_parallel_shard: cannot be listed beside "
        "auto_parallelism.hybrid_sharding (which chooses it)\n");
}

// The rows of `text`'s valid configurations, in order.
std::vector<ResultRow> step_rows(const testing::TempDir& dir, const std::string& text) {
  const auto loaded = testing::load_valid_scenario(dir, text);
  const ExpandedConfigurations space = expand_configurations(*loaded);
  Evaluator evaluator(testing::shipped_catalog(), *loaded);
  std::vector<ResultRow> rows;
  for (const Configuration& c : space.valid)
    rows.push_back(make_step_row(c, evaluator.evaluate(c)));
  return rows;
}

TEST_CASE("a swept HSDP row is the same layout run alone, bit for bit, memory per shard group") {
  const testing::TempDir dir;
  const std::string layout = "parallelism { zero_stage: 3 fsdp2: true ";
  const auto swept = step_rows(dir, llama(layout + "}\nsweep { data_parallel_shard: [8, 32] }"));
  REQUIRE(swept.size() == 2);
  const auto alone = step_rows(dir, llama(layout + "data_parallel_shard: 8 }"));
  REQUIRE(alone.size() == 1);
  for (size_t column = 1; column < result_columns().size(); ++column) {
    INFO(result_columns()[column].key);
    CHECK(swept[0][column] == alone[0][column]);
  }
  const auto number = [](const ResultRow& row, const char* key) {
    return row_number(row, result_column(key));
  };
  CHECK(number(swept[0], "data_parallel_shard") == 8);
  CHECK(number(swept[1], "data_parallel_shard") == 32);
  CHECK(number(swept[1], "data_parallel") == 32);
  // Model states sharded over 8 ranks instead of 32: more memory per GPU.
  CHECK(number(swept[0], "memory_gib") > number(swept[1], "memory_gib"));
}

TEST_CASE("a shard group of one rank holds the whole model and runs (auto_parallelism tries it)") {
  // TP 8 on 4 p4de nodes: DP 4, and a group of one rank fills a node, so auto_parallelism's
  // hybrid sharding lists it. Its gathers and reduce-scatters within the group were collectives
  // of one GPU: the step aborted ("a transfer from a GPU to itself"; tools/input_audit.py).
  const testing::TempDir dir;
  const auto rows = step_rows(dir, llama("parallelism { zero_stage: 3 fsdp2: true "
                                         "tensor_parallel: 8 }\n"
                                         "sweep { data_parallel_shard: [1, 2, 4] }"));
  REQUIRE(rows.size() == 3);
  const auto number = [](const ResultRow& row, const char* key) {
    return row_number(row, result_column(key));
  };
  for (const ResultRow& row : rows) CHECK(row_text(row, result_column("status")) == kStatusOk);
  CHECK(number(rows[0], "data_parallel_shard") == 1);
  // Unsharded model states: the most memory of the three.
  CHECK(number(rows[0], "memory_gib") > number(rows[1], "memory_gib"));
  CHECK(number(rows[1], "memory_gib") > number(rows[2], "memory_gib"));
  CHECK(number(rows[0], "step_s") > 0);
}

TEST_CASE("the layout columns show the shard group only when a row hybrid-shards") {
  const testing::TempDir dir;
  const std::string zero3 = "parallelism { zero_stage: 3 fsdp2: true ";
  const auto swept = step_rows(dir, llama(zero3 + "}\nsweep { data_parallel_shard: [8, 32] }"));
  const std::vector<std::string> hybrid = layout_columns(swept);
  const auto dp = std::find(hybrid.begin(), hybrid.end(), "data_parallel");
  REQUIRE(dp + 1 < hybrid.end());
  CHECK(*(dp + 1) == "data_parallel_shard");
  // Shard groups of all the data-parallel ranks (32 of DP 32), or none given: no column, so
  // `run`'s and the summary's tables of such layouts are unchanged.
  const std::vector<std::string> plain = layout_columns({swept[1]});
  CHECK(std::find(plain.begin(), plain.end(), "data_parallel_shard") == plain.end());
  CHECK(plain == layout_columns(step_rows(dir, llama(zero3 + "}"))));
  CHECK(plain.size() + 1 == hybrid.size());
}

TEST_CASE("a model that fits only with a larger shard group is out of memory with smaller ones") {
  // Llama 3 70B on 4 p4de nodes (32 A100 80GB): 70e9 parameters x 16 bytes of model states are
  // 140 GB per GPU over one node (8 ranks), 70 GB over 2 nodes, 35 GB over all 4.
  const testing::TempDir dir;
  const auto rows = step_rows(dir, R"(model: "llama3-70b"
job { global_batch_size: 32 sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 10 }
cluster { instance: "aws.p4de.24xlarge" nodes: 4 }
parallelism { zero_stage: 3 fsdp2: true recompute: RECOMPUTE_FULL }
sweep { data_parallel_shard: [8, 32] })");
  REQUIRE(rows.size() == 2);
  CHECK(row_text(rows[0], result_column("status")) == kStatusOutOfMemory);
  CHECK(row_text(rows[0], result_column("limiting")).rfind("GPU memory (OOM by ", 0) == 0);
  CHECK(row_text(rows[1], result_column("status")) == kStatusOk);
}

}  // namespace
}  // namespace clustersim
