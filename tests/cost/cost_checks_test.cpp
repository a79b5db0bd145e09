// Bad cost input is reported at file:line with the field's path.
#include "sim/cost/cost_checks.h"

#include <catch2/catch.hpp>

#include "tests/cost/cost_fixture.h"

namespace clustersim {
namespace {

using testing::cost_scenario;
using testing::load_cost;

TEST_CASE("a negative price override is an error at its line") {
  auto loaded =
      load_cost(cost_scenario("  prices {\n    price { instance: \"aws.p4d.24xlarge\"\n"
                              "      price { billing: SPOT currency: USD per_hour: -3 } }\n  }"));
  CHECK(loaded->model == nullptr);
  CHECK(loaded->diagnostics ==
        "s.textproto:20:43: cost.prices.price[0].price.per_hour: must be > 0, got -3\n");
}

// An empty --prices file, or one of comments only, priced everything at the catalog's prices
// without a word; a `prices { }` block likewise.
TEST_CASE("a price file or prices block that sets nothing is an error naming it") {
  auto file = load_cost(cost_scenario(""), "# the negotiated rates, to come\n\n");
  CHECK(file->model == nullptr);
  CHECK(file->diagnostics ==
        "p.textproto:1:1: lists no prices: it sets none of price, report_currency, exchange_rate "
        "and region\n");
  auto block = load_cost(cost_scenario("  prices { }"));
  CHECK(block->model == nullptr);
  CHECK(block->diagnostics ==
        "s.textproto:18:3: cost.prices: lists no prices: it sets none of price, report_currency, "
        "exchange_rate and region\n");
  // A file setting only its region or report currency is not empty.
  CHECK(load_cost(cost_scenario(""), "region: \"us-east-1\"")->model != nullptr);
}

TEST_CASE("a spot discount above 100% is an error") {
  auto loaded = load_cost(
      cost_scenario("  prices { price { instance: \"aws.p4d.24xlarge\" price { billing: SPOT "
                    "currency: USD discount_fraction: 1.2 } } }"));
  CHECK_THAT(loaded->diagnostics,
             Catch::Contains("s.textproto:18:") &&
                 Catch::Contains("cost.prices.price[0].price.discount_fraction: must be"));
}

TEST_CASE("an on-demand price given as a discount in a --prices file is an error, not a crash") {
  // The price book looked the on-demand price up to take the discount off, which looked itself
  // up again: `cost`, `sweep` and `regress` with such a --prices file died of a stack overflow.
  auto loaded = load_cost(cost_scenario(""),
                          "price { instance: \"aws.p4d.24xlarge\"\n"
                          "  price { billing: ON_DEMAND currency: USD discount_fraction: 0.5 } }");
  CHECK(loaded->model == nullptr);
  CHECK(loaded->diagnostics ==
        "p.textproto:2:44: price[0].price.discount_fraction: applies to other billing modes than "
        "ON_DEMAND: give per_hour\n");
}

TEST_CASE("a checkpoint interval of 0 is an error") {
  auto loaded = load_cost(
      cost_scenario("  checkpoint {\n    volume { tier: \"aws.ebs.gp3\" capacity_gib: 500 }\n"
                    "    interval_s: 0\n  }"));
  CHECK_THAT(loaded->diagnostics,
             Catch::Contains("s.textproto:20:5: cost.checkpoint.interval_s: must be > 0"));
}

// A checkpoint volume was never compared with the checkpoint: 1 GiB took Llama-2-7B's 87.9 GiB
// (6.74e9 parameters x 14 bytes: BF16 weights, fp32 master weights and Adam's two moments). It
// holds the checkpoints kept: 2 unless `keep` says otherwise.
TEST_CASE("a checkpoint volume must hold the checkpoints kept, or a node's share of them") {
  const auto on = [](const std::string& volume, const std::string& keep = "") {
    return load_cost(cost_scenario("  checkpoint {\n    volume { " + volume +
                                   " }\n    interval_s: 3600" + keep +
                                   "\n  }\n  interruptions_per_node_hour: 0"));
  };
  auto block = on("tier: \"aws.ebs.gp3\" capacity_gib: 80");
  CHECK(block->model == nullptr);
  CHECK(block->diagnostics ==
        "s.textproto:19:34: cost.checkpoint.volume[0].capacity_gib: a node's share of 2 "
        "checkpoints kept (2 x 43.9 GiB: 87.9 GiB of weights and optimizer states of "
        "\"llama2-7b\" over 2 nodes, the most the scenario has) does not fit in 80 GiB "
        "(\"aws.ebs.gp3\" is a volume of each node)\n");
  CHECK(on("tier: \"aws.ebs.gp3\" capacity_gib: 88")->model != nullptr);
  CHECK(on("tier: \"aws.ebs.gp3\" capacity_gib: 44", " keep: 1")->model != nullptr);
  // A shared file system of any capacity (FSx's others come in 1,200 GiB steps): the whole of each.
  auto shared = on("tier: \"aws.fsx-lustre.intelligent-tiering\" capacity_gib: 170");
  CHECK(shared->diagnostics ==
        "s.textproto:19:57: cost.checkpoint.volume[0].capacity_gib: 2 checkpoints kept (2 x "
        "87.9 GiB of weights and optimizer states of \"llama2-7b\") do not fit in 170 GiB\n");
  CHECK(on("tier: \"aws.fsx-lustre.intelligent-tiering\" capacity_gib: 176")->model != nullptr);
  CHECK(on("tier: \"aws.fsx-lustre.intelligent-tiering\" capacity_gib: 88", " keep: 1")->model !=
        nullptr);
  CHECK(on("tier: \"aws.ebs.gp3\" capacity_gib: 500", " keep: 0")->diagnostics ==
        "s.textproto:20:22: cost.checkpoint.keep: must be in [1, 1000], got 0\n");
}

// Throughput or IOPS bought above a volume's baseline: only where the tier sells it, between the
// baseline at the volume's capacity and the tier's ceiling.
TEST_CASE(
    "a volume's provisioned throughput and IOPS lie between its baseline and the tier's "
    "ceiling") {
  const auto on = [](const std::string& volume) {
    return load_cost(
               cost_scenario("  checkpoint {\n    volume { " + volume +
                             " }\n    interval_s: 3600\n  }\n  interruptions_per_node_hour: 0"))
        ->diagnostics;
  };
  const std::string gp3 = "tier: \"aws.ebs.gp3\" capacity_gib: 500 ";
  CHECK(on(gp3 + "provisioned_throughput_mb_per_s: 1048.576 provisioned_iops: 4000") == "");
  // 2,000 MiB/s, AWS's limit since 2025 (it was 1,000 MiB/s), and one MB/s beyond it.
  CHECK(on(gp3 + "provisioned_throughput_mb_per_s: 2097.152 provisioned_iops: 8000") == "");
  CHECK(on(gp3 + "provisioned_throughput_mb_per_s: 2098") ==
        "s.textproto:19:52: cost.checkpoint.volume[0].provisioned_throughput_mb_per_s: must be in "
        "[0, 2097.152], got 2098\n");
  CHECK(on(gp3 + "provisioned_throughput_mb_per_s: 100") ==
        "s.textproto:19:52: cost.checkpoint.volume[0].provisioned_throughput_mb_per_s: is below "
        "\"aws.ebs.gp3\"'s baseline at this capacity (131.072): give at least that, or leave it "
        "out\n");
  CHECK(on(gp3 + "provisioned_iops: -5") ==
        "s.textproto:19:52: cost.checkpoint.volume[0].provisioned_iops: must be > 0, got -5\n");
  CHECK(on("tier: \"aws.fsx-lustre.persistent2-125\" capacity_gib: 1200 "
           "provisioned_throughput_mb_per_s: 500") ==
        "s.textproto:19:72: cost.checkpoint.volume[0].provisioned_throughput_mb_per_s: "
        "\"aws.fsx-lustre.persistent2-125\" sells no performance above its baseline (its catalog "
        "entry has no provisioned_max_throughput_mb_per_s)\n");
}

// gp3 is priced in USD: results in CNY (Alibaba instances alone) need a USD rate.
TEST_CASE("a priced checkpoint volume in another currency needs an exchange rate") {
  const std::string aliyun = "instance: \"aliyun.ecs.ebmgn7e.32xlarge\"";
  const std::string volumes =
      "  checkpoint {\n    volume { tier: \"aliyun.essd.pl1\" capacity_gib: 1000 }\n"
      "    volume { tier: \"aws.ebs.gp3\" capacity_gib: 1000 }\n    interval_s: 3600\n  }\n"
      "  interruptions_per_node_hour: 0\n";
  CHECK(load_cost(cost_scenario(volumes, aliyun))->diagnostics ==
        "s.textproto:20:14: cost.checkpoint.volume[1].tier: \"aws.ebs.gp3\" is priced in USD, "
        "results in CNY: give an exchange_rate for USD (in cost.prices or --prices)\n");
  CHECK(load_cost(cost_scenario(volumes + "  prices { exchange_rate { currency: USD "
                                          "in_report_currency: 7.2 } }\n",
                                aliyun))
            ->diagnostics == "");
}

TEST_CASE("a preemption rate or checkpoint interval beyond what a run can mean is refused") {
  // 1e-300 preemptions an hour printed a 300-digit optimal interval; 1e300 s an interval that no
  // run reaches. 0 preemptions stays "none".
  auto rate = load_cost(cost_scenario("  billing: SPOT\n  preemptions_per_instance_hour: 1e-300"));
  CHECK_THAT(
      rate->diagnostics,
      Catch::Contains("s.textproto:19:3: cost.preemptions_per_instance_hour: must be in [") &&
          Catch::Contains("got 1e-300"));
  auto storm = load_cost(cost_scenario("  billing: SPOT\n  preemptions_per_instance_hour: 4000"));
  CHECK_THAT(storm->diagnostics,
             Catch::Contains("cost.preemptions_per_instance_hour: must be in ["));
  auto interval = load_cost(
      cost_scenario("  checkpoint {\n    volume { tier: \"aws.ebs.gp3\" capacity_gib: 500 }\n"
                    "    interval_s: 1e300\n  }"));
  CHECK_THAT(interval->diagnostics,
             Catch::Contains("s.textproto:20:5: cost.checkpoint.interval_s: must be in ["));
  auto none = load_cost(cost_scenario("  billing: SPOT\n  preemptions_per_instance_hour: 0"));
  CHECK_THAT(none->diagnostics, !Catch::Contains("preemptions_per_instance_hour"));
}

TEST_CASE("a fault rate is a number of interruptions a node-hour: 0 or within range") {
  const auto diagnostics = [](const std::string& cost) {
    return load_cost(cost_scenario(cost))->diagnostics;
  };
  CHECK_THAT(
      diagnostics("  interruptions_per_node_hour: -1"),
      Catch::Contains("s.textproto:18:3: cost.interruptions_per_node_hour: must be >= 0, got -1"));
  CHECK(diagnostics("  interruptions_per_node_hour: nan") ==
        "s.textproto:18:3: cost.interruptions_per_node_hour: must be a finite number >= 0, got "
        "nan\n");
  CHECK_THAT(diagnostics("  interruptions_per_node_hour: 1e-300"),
             Catch::Contains("s.textproto:18:3: cost.interruptions_per_node_hour: must be in ["));
  CHECK(diagnostics("  interruptions_per_node_hour: inf") ==
        "s.textproto:18:3: cost.interruptions_per_node_hour: must be a finite number >= 0, got "
        "inf\n");
  // Faults without a checkpoint restart the run from the beginning.
  CHECK_THAT(
      diagnostics("  interruptions_per_node_hour: 0.01\n"
                  "  restart { acquisition_s: 0 container_start_s: 60 }"),
      Catch::Contains("s.textproto:18:3: cost.interruptions_per_node_hour: needs a checkpoint"));
  // Absent with a checkpoint: the default rate, so the restart must be said.
  const std::string checkpoint =
      "  checkpoint { volume { tier: \"aws.ebs.gp3\" capacity_gib: 500 } }\n";
  CHECK_THAT(diagnostics(checkpoint),
             Catch::Contains("cost.restart: is required: runs are interrupted by faults "
                             "(interruptions_per_node_hour absent: the default rate"));
  CHECK(
      diagnostics(checkpoint + "  restart { acquisition_s: 600 container_start_s: 300 }").empty());
  // 0: nothing interrupts an on-demand run, so no optimum: an interval is needed.
  CHECK_THAT(diagnostics(checkpoint + "  interruptions_per_node_hour: 0"),
             Catch::Contains("cost.checkpoint.interval_s: is required when "
                             "nothing interrupts a run"));
}

TEST_CASE("a billing mode listed twice is an error at its position") {
  // Each configuration was priced and listed twice in that mode.
  auto loaded = load_cost(cost_scenario("  billing: [ON_DEMAND, SPOT, ON_DEMAND]"));
  CHECK(loaded->diagnostics == "s.textproto:18:30: cost.billing[2]: ON_DEMAND is listed twice\n");
}

TEST_CASE("spot preemptions need a checkpoint and a restart") {
  auto loaded = load_cost(cost_scenario("  billing: SPOT\n  preemptions_per_instance_hour: 0.1"));
  CHECK_THAT(loaded->diagnostics, Catch::Contains("cost.restart: is required") &&
                                      Catch::Contains("cost.checkpoint: is required"));
}

TEST_CASE("an override of an unknown instance names the closest one") {
  auto loaded = load_cost(
      cost_scenario("", "instance: \"aws.p4d.24xlarge\""),
      "price { instance: \"aws.p4d.24xlrge\" price { billing: SPOT currency: USD per_hour: 3 } }");
  CHECK_THAT(loaded->diagnostics,
             Catch::Contains("p.textproto:1:9: price[0].instance: unknown instance type "
                             "\"aws.p4d.24xlrge\" (did you mean \"aws.p4d.24xlarge\"?)"));
}

TEST_CASE("mixing currencies without an exchange rate is an error at the instance") {
  const std::string sweep =
      "instance: \"aws.p4d.24xlarge\"\n}\nsweep {\n  instance: [\"aws.p4d.24xlarge\", "
      "\"aliyun.ecs.ebmgn7e.32xlarge\"]";
  auto mixed = load_cost(cost_scenario("", sweep));
  CHECK_THAT(mixed->diagnostics,
             Catch::Contains("s.textproto:20:1: cost: the instances price in several currencies"));
  auto no_rate = load_cost(cost_scenario("  prices { report_currency: USD }", sweep));
  CHECK_THAT(no_rate->diagnostics,
             Catch::Contains("s.textproto:14:") &&
                 Catch::Contains("sweep.instance[1]: ON_DEMAND price of "
                                 "\"aliyun.ecs.ebmgn7e.32xlarge\" is in CNY, results in USD: "
                                 "give an exchange_rate for CNY"));
  auto rate_in_file = load_cost(cost_scenario("", sweep),
                                "report_currency: USD\nexchange_rate { currency: CNY "
                                "in_report_currency: 0.14 }");
  CHECK(rate_in_file->diagnostics == "");
  REQUIRE(rate_in_file->model != nullptr);
  CHECK(rate_in_file->model->currency == schema::USD);
}

TEST_CASE("an exchange rate outside [1e-6, 1e6] is an error at its line") {
  // A rate of 1e300 times a price overflowed every cost to inf.
  const std::string sweep =
      "instance: \"aws.p4d.24xlarge\"\n}\nsweep {\n  instance: [\"aws.p4d.24xlarge\", "
      "\"aliyun.ecs.ebmgn7e.32xlarge\"]";
  auto huge = load_cost(cost_scenario("", sweep),
                        "report_currency: USD\nexchange_rate { currency: CNY "
                        "in_report_currency: 1e300 }");
  CHECK(huge->diagnostics ==
        "p.textproto:2:31: exchange_rate[0].in_report_currency: must be in [1e-06, 1000000], got "
        "1e+300\n");
}

// Both were accepted and never read, without a word (a price file is shared by scenarios: a
// warning, not an error). An ON_DEMAND override that a compared mode's discount applies to is read.
TEST_CASE("a rate of the report currency and a price of a mode not priced are warned of") {
  auto rate = load_cost(cost_scenario(""), "exchange_rate { currency: USD in_report_currency: 7 }");
  CHECK(rate->diagnostics ==
        "p.textproto:1:17: warning: exchange_rate[0].currency: USD is the currency costs are "
        "reported in, so this rate is never used: to report in another, set report_currency\n");
  REQUIRE(rate->model != nullptr);
  auto spot =
      load_cost(cost_scenario("  prices { price { instance: \"aws.p4d.24xlarge\" price { "
                              "billing: SPOT currency: USD per_hour: 9 } } }"));
  CHECK(spot->diagnostics ==
        "s.textproto:18:57: warning: cost.prices.price[0].price.billing: SPOT is not among the "
        "billing modes priced (ON_DEMAND), so this price is never used\n");
  auto priced =
      load_cost(cost_scenario("  billing: [ON_DEMAND, SPOT]\n  prices { price { instance: "
                              "\"aws.p4d.24xlarge\" price { billing: SPOT currency: USD "
                              "per_hour: 9 } } }"));
  CHECK(priced->diagnostics == "");
  auto base_of_discount = load_cost(
      cost_scenario("  billing: SPOT\n  prices {\n    price { instance: \"aws.p4d.24xlarge\" price "
                    "{ billing: ON_DEMAND currency: USD per_hour: 30 } }\n    price { instance: "
                    "\"aws.p4d.24xlarge\" price { billing: SPOT currency: USD "
                    "discount_fraction: 0.6 } }\n  }"));
  CHECK(base_of_discount->diagnostics == "");
  auto unread_base = load_cost(
      cost_scenario("  billing: SPOT\n  prices {\n    price { instance: \"aws.p4d.24xlarge\" price "
                    "{ billing: ON_DEMAND currency: USD per_hour: 30 } }\n  }"));
  CHECK_THAT(unread_base->diagnostics,
             Catch::Contains("warning: cost.prices.price[0].price.billing: ON_DEMAND is not among "
                             "the billing modes priced (SPOT)"));
}

// Saving on a preemption's notice, and the restart after a fault.
const std::string kRestart = "  restart { acquisition_s: 600 container_start_s: 300 }\n";
const std::string kNoticeCheckpoint =
    "  checkpoint { volume { tier: \"aws.ebs.gp3\" capacity_gib: 500 }\n"
    "    save_on_preemption_notice: true }";

TEST_CASE("saving on a preemption notice needs spot preemptions to save from") {
  auto on_demand = load_cost(cost_scenario(kRestart + kNoticeCheckpoint));
  CHECK(on_demand->model == nullptr);
  CHECK(on_demand->diagnostics ==
        "s.textproto:20:5: cost.checkpoint.save_on_preemption_notice: needs SPOT billing (only "
        "spot instances are preempted), which billing omits\n");
  auto no_preemptions = load_cost(cost_scenario("  billing: SPOT\n" + kRestart + kNoticeCheckpoint));
  CHECK(no_preemptions->model != nullptr);
  CHECK(no_preemptions->diagnostics ==
        "s.textproto:21:5: warning: cost.checkpoint.save_on_preemption_notice: changes nothing: no "
        "preemptions (preemptions_per_instance_hour is 0)\n");
  auto spot = load_cost(cost_scenario("  billing: SPOT\n  preemptions_per_instance_hour: 0.05\n" +
                                      kRestart + kNoticeCheckpoint));
  CHECK(spot->diagnostics.empty());
  // The notice of the instance's provider, from the catalog (AWS: 120 s).
  CHECK(spot->model->spot_notice_s.at(schema::AWS) == 120);
}

TEST_CASE("a restart after a fault is checked like the restart, and needed only where paid") {
  const auto diagnostics = [](const std::string& cost) {
    return load_cost(cost_scenario(cost))->diagnostics;
  };
  const std::string checkpoint =
      "  checkpoint { volume { tier: \"aws.ebs.gp3\" capacity_gib: 500 } }\n";
  CHECK(diagnostics(checkpoint + "  restart_after_fault { acquisition_s: -1 container_start_s: 60 }") ==
        "s.textproto:19:25: cost.restart_after_fault.acquisition_s: must be in [0, 2592000], got "
        "-1\n");
  CHECK(diagnostics(checkpoint + "  restart_after_fault { acquisition_s: 0 container_start_s: nan }") ==
        "s.textproto:19:42: cost.restart_after_fault.container_start_s: must be a finite number in "
        "[0, 2592000], got nan\n");
  CHECK(diagnostics(checkpoint + "  restart_after_fault { acquisition_s: 0 container_start_s: 1e12 }") ==
        "s.textproto:19:42: cost.restart_after_fault.container_start_s: must be in [0, 2592000], "
        "got 1e+12\n");
  CHECK(diagnostics(checkpoint + "  restart_after_fault { acquisition_s: 0 }") ==
        "s.textproto:19:3: cost.restart_after_fault.container_start_s: is required\n");
  // Faults only, each restarting in place: `restart` is never paid, so not required.
  CHECK(diagnostics(checkpoint + "  restart_after_fault { acquisition_s: 0 container_start_s: 60 }")
            .empty());
  // Spot preemptions still pay `restart`.
  CHECK(diagnostics(checkpoint +
                    "  restart_after_fault { acquisition_s: 0 container_start_s: 60 }\n"
                    "  billing: SPOT\n  preemptions_per_instance_hour: 0.05") ==
        "s.textproto:17:1: cost.restart: is required: runs are interrupted by spot preemptions\n");
  // No faults: never paid.
  CHECK(diagnostics("  checkpoint { volume { tier: \"aws.ebs.gp3\" capacity_gib: 500 } "
                    "interval_s: 3600 }\n"
                    "  restart_after_fault { acquisition_s: 0 container_start_s: 60 }\n"
                    "  interruptions_per_node_hour: 0") ==
        "s.textproto:19:3: warning: cost.restart_after_fault: is never paid: no faults are "
        "modelled (interruptions_per_node_hour is 0, or absent without a checkpoint)\n");
}

}  // namespace
}  // namespace clustersim
