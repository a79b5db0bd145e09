// The sweep's checkpoint_storage axis: it multiplies the candidates (each configuration once per
// value, the volume varying fastest), each row names and is costed on its own value's volume, a
// row equals the same configuration of the scenario that names that volume alone (the shipped
// llama2_7b_spot_* scenarios), and every mistake in it is an error at its file, line and field.
#include <catch2/catch.hpp>
#include <map>
#include <sstream>
#include <tuple>

#include "sim/cost/run_cost.h"
#include "sim/io/volume_words.h"
#include "sim/sweep/configuration_labels.h"
#include "sim/sweep/result_row.h"
#include "tests/cost/cost_fixture.h"
#include "tests/testing/scenario_text.h"
#include "tests/testing/sweep_rows.h"

namespace clustersim {
namespace {

namespace s = schema;
using testing::cost_scenario;
using testing::load_cost;
using testing::scenario_errors;

// Llama-2-7B on 1 or 2 p4d.24xlarge at ZeRO 1 or 3 (4 configurations), checkpoints every hour on
// the volume(s) `sweep` gives; `checkpoint` is cost.checkpoint's body.
std::string swept(const std::string& sweep,
                  const std::string& checkpoint = "checkpoint { interval_s: 3600 }") {
  return cost_scenario("  " + checkpoint + "\n  interruptions_per_node_hour: 0") +
         "sweep {\n  nodes: [1, 2]\n  zero_stage: [1, 3]\n" + sweep + "}\n";
}

// gp3 at its baseline, gp3 bought to 1,000 MiB/s, FSx for Lustre: the three values of the tests.
const char kThreeVolumes[] =
    "  checkpoint_storage { volume { tier: \"aws.ebs.gp3\" capacity_gib: 1000 } }\n"
    "  checkpoint_storage { volume { tier: \"aws.ebs.gp3\" capacity_gib: 1000\n"
    "    provisioned_throughput_mb_per_s: 1048.576 provisioned_iops: 4000 } }\n"
    "  checkpoint_storage { volume { tier: \"aws.fsx-lustre.persistent2-125\" capacity_gib: 2400 } "
    "}\n";

TEST_CASE("three checkpoint volumes triple the candidates, the volume varying fastest") {
  const auto plain = load_cost(swept("",
                                     "checkpoint { volume { tier: \"aws.ebs.gp3\" "
                                     "capacity_gib: 1000 } interval_s: 3600 }"));
  const auto three = load_cost(swept(kThreeVolumes));
  INFO(plain->diagnostics << three->diagnostics);
  REQUIRE(plain->model);
  REQUIRE(three->model);
  const ConfigurationSpace one(*plain->scenario), axis(*three->scenario);
  REQUIRE(one.size() == 4);
  REQUIRE(axis.size() == 3 * 4);
  for (int64_t i = 0; i < axis.size(); ++i) {
    const Configuration c = axis.at(i), base = one.at(i / 3);
    CHECK(c.checkpoint_storage == i % 3);
    CHECK(c.nodes == base.nodes);
    CHECK(c.parallelism.zero_stage() == base.parallelism.zero_stage());
    // Each value's volume of the instance's provider (AWS: its only one).
    CHECK(checkpoint_volume(*three->model, c)->volume ==
          &three->scenario->scenario().sweep().checkpoint_storage(i % 3).volume(0));
  }
}

TEST_CASE("a row names its checkpoint volume and is costed on it") {
  const auto three = load_cost(swept(kThreeVolumes));
  INFO(three->diagnostics);
  REQUIRE(three->model);
  const std::vector<ResultRow> rows = testing::sweep_rows(*three->scenario);
  REQUIRE(rows.size() == 12);
  const int volume = result_column("checkpoint_storage");
  const int index = result_column("index");
  for (size_t i = 0; i < rows.size(); ++i) {
    // The index (what a journal, a shard and a merge key rows on) decodes to the row's volume.
    CHECK(row_number(rows[i], index) == static_cast<double>(i));
  }
  // One configuration (1 node, ZeRO 3: ZeRO 1 does not fit a 40 GiB A100) on each volume: the
  // same step, its own volume and costs.
  const ResultRow &baseline = rows[3], &bought = rows[4], &fsx = rows[5];
  CHECK(row_text(rows[0], volume) == "aws.ebs.gp3 1000 GiB");
  CHECK(row_text(baseline, volume) == "aws.ebs.gp3 1000 GiB");
  CHECK(row_text(bought, volume) == "aws.ebs.gp3 1000 GiB 1000 MiB/s 4000 IOPS");
  CHECK(row_text(fsx, volume) == "aws.fsx-lustre.persistent2-125 2400 GiB");
  const int step = result_column("step_s"), storage = result_column("storage_cost");
  const int hours = result_column("time_to_train_h");
  REQUIRE(row_text(baseline, result_column("status")) == kStatusOk);
  CHECK(row_number(baseline, step) == row_number(bought, step));
  CHECK(row_number(baseline, step) == row_number(fsx, step));
  // Hourly checkpoints, no interruption: the run is the work plus its writes, each at its
  // volume's rate (the baseline's slowest); storage of gp3 (us-east-1) per node-month: 80 USD at
  // the baseline, 120 bought up (80 + 875 MiB/s x 0.04 + 1,000 IOPS x 0.005); FSx per job:
  // 2,400 GiB x 0.145.
  CHECK(row_number(baseline, hours) > row_number(bought, hours));
  for (auto [row, per_month] :
       {std::pair{&baseline, 80.0}, {&bought, 120.0}, {&fsx, 2400 * 0.145}}) {
    CHECK(row_number(*row, storage) ==
          Approx(per_month / 730 * row_number(*row, hours)).epsilon(1e-9));
  }
  // The sweep's summary table shows the volume where the rows use several.
  const std::vector<std::string> keys = summary_columns(rows);
  CHECK(std::find(keys.begin(), keys.end(), "checkpoint_storage") != keys.end());
  CHECK(describe_configuration(bought) ==
        "aws.p4d.24xlarge x 1, TP 1 PP 1 DP 8 mbs 1, ZeRO 3, checkpoints on aws.ebs.gp3 1000 GiB "
        "1000 MiB/s 4000 IOPS, ON_DEMAND");
}

TEST_CASE("a volume in words: tier, capacity, and the performance bought") {
  s::StorageVolume v;
  v.set_tier("aws.ebs.gp3");
  v.set_capacity_gib(1000);
  CHECK(volume_words(v) == "aws.ebs.gp3 1000 GiB");
  v.set_provisioned_throughput_mb_per_s(524.288);  // 500 MiB/s
  CHECK(volume_words(v) == "aws.ebs.gp3 1000 GiB 500 MiB/s");
  v.set_provisioned_iops(2000);
  CHECK(volume_words(v) == "aws.ebs.gp3 1000 GiB 500 MiB/s 2000 IOPS");
}

// The shipped sweep over three volumes against the three scenarios that name one each: the same
// configuration on the same volume has the same row (every cell but the index). Each at 40 spot
// trials, not the scenarios' 400: the rows agree at any count (the same seed), at a tenth of the
// time (the unit tests also run under the sanitizers).
TEST_CASE("a row of the volume sweep equals that configuration in the single-volume scenario") {
  using Key = std::tuple<std::string, double, double, std::string>;
  const auto key = [](const ResultRow& r) {
    return Key{row_text(r, result_column("instance")), row_number(r, result_column("nodes")),
               row_number(r, result_column("zero_stage")), row_text(r, result_column("recompute"))};
  };
  const auto rows_of = [](const std::string& name) {
    Diagnostics diagnostics;
    const auto scenario = load_scenario(testing::source_path("scenarios/" + name + ".textproto"),
                                        testing::shipped_catalog(), &diagnostics);
    INFO(diagnostics.to_string());
    REQUIRE(scenario);
    REQUIRE(scenario->file->message.cost().trials() == 400);
    scenario->file->message.mutable_cost()->set_trials(40);
    return testing::sweep_rows(*scenario);
  };
  const std::vector<ResultRow> axis = rows_of("llama2_7b_spot_checkpoint_volumes");
  REQUIRE(axis.size() == 3 * 24);
  size_t compared = 0;
  for (const char* single :
       {"llama2_7b_spot_notice", "llama2_7b_spot_gp3_provisioned", "llama2_7b_spot_fsx"}) {
    std::map<Key, ResultRow> by_configuration;
    for (ResultRow& r : rows_of(single)) by_configuration[key(r)] = r;
    for (ResultRow r : axis) {
      const auto found = by_configuration.find(key(r));
      REQUIRE(found != by_configuration.end());
      const int volume = result_column("checkpoint_storage");
      if (row_text(r, volume) != row_text(found->second, volume)) continue;
      ResultRow expected = found->second;
      expected[result_column("index")] = r[result_column("index")];
      INFO(single << ": " << describe_configuration(r));
      CHECK(r == expected);
      ++compared;
    }
  }
  CHECK(compared == axis.size());
}

TEST_CASE("the checkpoint_storage axis's mistakes are errors at their fields") {
  // Beside no cost.checkpoint: nothing says when to write.
  CHECK_THAT(scenario_errors(cost_scenario("  interruptions_per_node_hour: 0") + "sweep {\n" +
                             kThreeVolumes + "}\n"),
             Catch::Contains("s.textproto:21:3: sweep.checkpoint_storage: sweeps where "
                             "checkpoints go, which needs cost.checkpoint"));
  // Each value checked as cost.checkpoint.volume: tier, provider, capacity.
  const std::string errors = scenario_errors(
      swept("  checkpoint_storage { volume { tier: \"aws.ebs.gp4\" capacity_gib: 1000 } }\n"
            "  checkpoint_storage { volume { tier: \"aliyun.essd.pl1\" capacity_gib: 1000 } }\n"
            "  checkpoint_storage { volume { tier: \"aws.ebs.gp3\" capacity_gib: 1 } }\n"
            "  checkpoint_storage { }\n"));
  CHECK_THAT(errors, Catch::Contains("s.textproto:24:33: sweep.checkpoint_storage[0].volume[0]."
                                     "tier: unknown storage tier \"aws.ebs.gp4\""));
  CHECK_THAT(errors, Catch::Contains("sweep.checkpoint_storage[1].volume: has none of provider "
                                     "AWS for \"aws.p4d.24xlarge\""));
  CHECK_THAT(errors, Catch::Contains("s.textproto:26:53: sweep.checkpoint_storage[2].volume[0]."
                                     "capacity_gib: a node's share of 2 checkpoints kept (2 x "
                                     "43.9 GiB"));
  CHECK_THAT(errors, Catch::Contains("sweep.checkpoint_storage[3].volume: is required"));
  // The storage rules, at the value's own field.
  const std::string rules = scenario_errors(swept(
      "  checkpoint_storage { volume { tier: \"aws.ebs.gp3\" capacity_gib: 1000 } }\n"
      "  checkpoint_storage { volume { tier: \"aws.ebs.gp3\" capacity_gib: 1000\n"
      "    provisioned_throughput_mb_per_s: 1048.576 } }\n"
      "  checkpoint_storage { volume { tier: \"aws.fsx-lustre.persistent2-125\" capacity_gib: 3000 "
      "} }\n"));
  CHECK_THAT(rules, Catch::Contains("s.textproto:26:5: sweep.checkpoint_storage[1].volume[0]."
                                    "provisioned_throughput_mb_per_s: 1048.576 MB/s needs at least "
                                    "4000 IOPS"));
  CHECK_THAT(rules, Catch::Contains("sweep.checkpoint_storage[2].volume[0].capacity_gib: 3000 GiB "
                                    "is not a capacity"));
}

// Errors of one checkpoint volume `volume` (the body of cost.checkpoint's volume, line 18), ""
// when it loads.
std::string volume_errors(const std::string& volume) {
  return scenario_errors(cost_scenario("  checkpoint { volume { " + volume +
                                       " } interval_s: 3600 }\n  interruptions_per_node_hour: 0"));
}

TEST_CASE("gp3 has at most 0.25 MiB/s per IOPS it has, on closed cases") {
  // 1,000 MiB/s (1,048.576 MB/s) needs 4,000 IOPS exactly.
  const std::string gp3 = "tier: \"aws.ebs.gp3\" capacity_gib: 1000 ";
  CHECK(volume_errors(gp3 + "provisioned_throughput_mb_per_s: 1048.576 provisioned_iops: 4000") ==
        "");
  CHECK(volume_errors(gp3 + "provisioned_throughput_mb_per_s: 1048.576 provisioned_iops: 3999") ==
        "s.textproto:18:64: cost.checkpoint.volume[0].provisioned_throughput_mb_per_s: 1048.576 "
        "MB/s needs at least 4000 IOPS (\"aws.ebs.gp3\" gives at most 0.262144 MB/s per IOPS), "
        "the volume has 3999: give provisioned_iops >= 4000\n");
  // The 3,000 IOPS included allow 750 MiB/s (786.432 MB/s), not a MiB/s more.
  CHECK(volume_errors(gp3 + "provisioned_throughput_mb_per_s: 786.432") == "");
  CHECK_THAT(volume_errors(gp3 + "provisioned_throughput_mb_per_s: 787.48"),
             Catch::Contains("787.48 MB/s needs at least 3004 IOPS") &&
                 Catch::Contains("the volume has 3000: give provisioned_iops >= 3004"));
}

TEST_CASE("FSx for Lustre comes in capacity steps, the error naming the nearest") {
  const auto fsx = [](const std::string& tier, double gib) {
    std::ostringstream text;
    text << "tier: \"aws.fsx-lustre." << tier << "\" capacity_gib: " << gib;
    return volume_errors(text.str());
  };
  // PERSISTENT_2: 1,200 GiB, then multiples of 2,400 up to 100,800.
  for (double gib : {1200, 2400, 4800, 7200, 100800}) CHECK(fsx("persistent2-125", gib) == "");
  CHECK(fsx("persistent2-125", 3000) ==
        "s.textproto:18:64: cost.checkpoint.volume[0].capacity_gib: 3000 GiB is not a capacity "
        "\"aws.fsx-lustre.persistent2-125\" comes in (1200 GiB or a multiple of 2400 GiB): the "
        "nearest are 2400 or 4800 GiB\n");
  CHECK_THAT(fsx("persistent2-125", 1800), Catch::Contains("the nearest are 1200 or 2400 GiB"));
  CHECK_THAT(fsx("persistent2-125", 100000), Catch::Contains("the nearest are 98400 or 100800"));
  // PERSISTENT_1 HDD at 12 MB/s per TiB: multiples of 6,000 GiB.
  CHECK(fsx("persistent1-hdd-12", 12000) == "");
  CHECK_THAT(fsx("persistent1-hdd-12", 7000),
             Catch::Contains("(a multiple of 6000 GiB): the nearest are 6000 or 12000 GiB"));
  CHECK_THAT(fsx("persistent1-hdd-12", 5000),
             Catch::Contains("(a multiple of 6000 GiB): the nearest are 6000 GiB"));
  // PERSISTENT_1 SSD: at least 1,200 GiB (its one bound: "1200..0 GiB" was printed), then steps.
  CHECK_THAT(fsx("persistent1-200", 176),
             Catch::Contains("capacity_gib: must be at least 1200 GiB, "
                             "aws.fsx-lustre.persistent1-200's least\n"));
  CHECK_THAT(fsx("persistent1-200", 1800), Catch::Contains("the nearest are 1200 or 2400 GiB"));
}

TEST_CASE("a volume beside the axis that no value repeats is never simulated") {
  testing::TempDir dir;
  Diagnostics diagnostics;
  const auto loaded = load_scenario(
      dir.write("s.textproto", swept(kThreeVolumes,
                                     "checkpoint { volume { tier: \"aws.ebs.gp3\" capacity_gib: "
                                     "500 } interval_s: 3600 }")),
      testing::shipped_catalog(), &diagnostics);
  REQUIRE(loaded);
  CHECK_THAT(diagnostics.to_string(),
             Catch::Contains("s.textproto:18:16: warning: cost.checkpoint.volume: is never "
                             "simulated: sweep.checkpoint_storage replaces it in every "
                             "configuration"));
  Diagnostics repeated;
  REQUIRE(load_scenario(
      dir.write("r.textproto", swept(kThreeVolumes,
                                     "checkpoint { volume { tier: \"aws.ebs.gp3\" capacity_gib: "
                                     "1000 } interval_s: 3600 }")),
      testing::shipped_catalog(), &repeated));
  CHECK(repeated.to_string().find("never simulated") == std::string::npos);
}

}  // namespace
}  // namespace clustersim
