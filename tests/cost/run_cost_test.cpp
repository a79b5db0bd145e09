// Run cost: spot without preemptions is price x time, costs scale with prices, subscriptions pay
// whole periods, other currencies are converted, each billing mode's checkpoint interval defaults
// to the optimum for its own interruption rate, faults interrupt every mode (owned nodes too) as
// their closed form says, owned nodes are never preempted, modes of one interruption rate share
// one planned run.
#include "sim/cost/run_cost.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "sim/cost/interruption_rate.h"
#include "sim/util/number_format.h"
#include "tests/cost/cost_fixture.h"

namespace clustersim {
namespace {

namespace s = schema;
using testing::cost_scenario;
using testing::load_cost;

// Hourly checkpoints, no fault (the tests of prices and preemptions).
const std::string kCheckpoint =
    "  checkpoint { volume { tier: \"aws.ebs.gp3\" capacity_gib: 500 } interval_s: 3600 }\n"
    "  interruptions_per_node_hour: 0\n";

StepResult step(double seconds) {
  StepResult result;
  result.step_s = seconds;
  return result;
}

MemoryEstimate memory() {
  MemoryEstimate estimate;
  estimate.weights_bytes = 14e9 / 8;
  estimate.optimizer_bytes = 84e9 / 16;
  return estimate;
}

struct Costed {
  std::unique_ptr<testing::LoadedCost> loaded;
  Configuration configuration;
  CheckpointPlan plan;
  RunCost cost;
};

Costed cost_of(const std::string& cost_block, s::BillingMode billing, double step_s = 10,
               const std::string& prices = "") {
  Costed c{load_cost(cost_scenario(cost_block), prices), {}, {}, {}};
  INFO(c.loaded->diagnostics);
  REQUIRE(c.loaded->model);
  c.configuration = expand_configurations(*c.loaded->scenario).valid.at(0);
  c.plan = plan_checkpoints(*c.loaded->model, c.configuration, memory(), step(step_s));
  c.cost = run_cost(*c.loaded->model, c.configuration, c.plan, billing);
  return c;
}

TEST_CASE("with no preemption, spot costs the spot price times the run's time") {
  const Costed c =
      cost_of("  billing: SPOT\n  preemptions_per_instance_hour: 0\n" + kCheckpoint, s::SPOT);
  // 1e9 tokens / (64 x 4096) = 3815 steps of 10 s, one checkpoint pause per hour of training.
  CHECK(c.cost.steps == 3815);
  CHECK(c.cost.work_s == 38150);
  // The run simulation's clock ticks in microseconds.
  CHECK(c.cost.time.p50_s == Approx(38150 + 10 * c.plan.cost.write_s).margin(1e-5));
  CHECK(c.cost.time.p95_s == c.cost.time.p50_s);
  CHECK(c.cost.per_instance_hour == 2.4655);  // catalog spot price of p4d.24xlarge
  // The two nodes' spot price and their two 500 GiB gp3 volumes at 0.08 USD per GiB-month.
  CHECK(c.cost.storage_cost_p50 == Approx(2 * 500 * 0.08 / 730 * c.cost.time.p50_s / 3600));
  CHECK(c.cost.cost_p50 ==
        Approx(2.4655 * 2 * c.cost.time.p50_s / 3600 + c.cost.storage_cost_p50).epsilon(1e-12));
  CHECK(c.cost.instance_hours == Approx(2 * c.cost.time.p50_s / 3600));
  CHECK(c.cost.cost_per_million_tokens == Approx(c.cost.cost_p50 / (3815 * 64 * 4096 / 1e6)));
}

TEST_CASE("the instances' cost of a run is linear in the price override") {
  const auto price = [](const std::string& per_hour) {
    return "price { instance: \"aws.p4d.24xlarge\" price { billing: SPOT currency: USD per_hour: " +
           per_hour + " } }";
  };
  const std::string spot =
      "  billing: SPOT\n  preemptions_per_instance_hour: 0.2\n"
      "  restart { acquisition_s: 300 container_start_s: 120 }\n" +
      kCheckpoint + "  trials: 50\n";
  const Costed one = cost_of(spot, s::SPOT, 10, price("3"));
  const Costed three = cost_of(spot, s::SPOT, 10, price("9"));
  CHECK(one.cost.time.mean_interruptions > 0);
  // The checkpoint storage (gp3, priced) is the same in both.
  CHECK(three.cost.storage_cost_p50 == one.cost.storage_cost_p50);
  CHECK(three.cost.cost_p50 - three.cost.storage_cost_p50 ==
        Approx(3 * (one.cost.cost_p50 - one.cost.storage_cost_p50)).epsilon(1e-12));
  CHECK(three.cost.cost_p95 - three.cost.storage_cost_p95 ==
        Approx(3 * (one.cost.cost_p95 - one.cost.storage_cost_p95)).epsilon(1e-12));
  CHECK_THAT(one.cost.price->origin, Catch::EndsWith("/p.textproto:1"));
}

TEST_CASE("a subscription pays whole periods") {
  const Costed c = cost_of(
      "  billing: SUBSCRIPTION_MONTHLY\n"
      "  prices { price { instance: \"aws.p4d.24xlarge\" price { billing: SUBSCRIPTION_MONTHLY "
      "currency: USD per_hour: 15 } } }\n",
      s::SUBSCRIPTION_MONTHLY, 1000);  // 3815 steps of 1000 s: 44 days, two months
  CHECK(c.cost.billed_periods == 2);
  CHECK(c.cost.cost_p50 == 2 * 730 * 2 * 15);
}

TEST_CASE("prices in another currency are converted at the exchange rate") {
  const Costed c = cost_of(
      "  prices {\n    report_currency: CNY\n    exchange_rate { currency: USD "
      "in_report_currency: 7 }\n  }\n",
      s::ON_DEMAND);
  CHECK(c.cost.per_instance_hour == Approx(21.957642 * 7));
  CHECK(c.cost.cost_p50 == Approx(21.957642 * 7 * 2 * 38150 / 3600.0));
}

TEST_CASE("without a set interval, spot runs checkpoint at the simulated optimum") {
  const Costed c = cost_of(
      "  billing: SPOT\n  preemptions_per_instance_hour: 0.1\n"
      "  restart { acquisition_s: 300 container_start_s: 120 }\n"
      "  checkpoint { volume { tier: \"aws.ebs.gp3\" capacity_gib: 500 } }\n  trials: 20\n"
      "  interruptions_per_node_hour: 0\n",
      s::SPOT);
  const CheckpointInterval& chosen = c.cost.checkpoint;
  CHECK(chosen.simulated_optimum);
  CHECK(chosen.young_daly_s == Approx(std::sqrt(2 * c.plan.cost.write_s / (2 * 0.1 / 3600))));
  CHECK(chosen.interval_s > chosen.young_daly_s / 4);
  CHECK(chosen.interval_s < chosen.young_daly_s * 4);
}

// Faults interrupt every billing mode: on demand at 0.01 an hour per node, spot at 0.1
// preemptions besides.
const std::string kFaultsAndPreemptions =
    "  billing: [ON_DEMAND, SPOT]\n  preemptions_per_instance_hour: 0.1\n"
    "  interruptions_per_node_hour: 0.01\n"
    "  restart { acquisition_s: 300 container_start_s: 120 }\n"
    "  checkpoint { volume { tier: \"aws.ebs.gp3\" capacity_gib: 500 } }\n  trials: 400\n";

// The on-demand rows checkpointed at the interval simulated for spot's preemption rate, and were
// never interrupted.
TEST_CASE("each billing mode checkpoints at the optimum for its own interruption rate") {
  const Costed on_demand = cost_of(kFaultsAndPreemptions, s::ON_DEMAND);
  const Costed spot = cost_of(kFaultsAndPreemptions, s::SPOT);
  const double write_s = on_demand.plan.cost.write_s;
  REQUIRE(write_s > 0);
  CHECK(on_demand.cost.interruptions_per_hour == Approx(2 * 0.01));
  CHECK(spot.cost.interruptions_per_hour == Approx(2 * (0.01 + 0.1)));
  const CheckpointInterval &slow = on_demand.cost.checkpoint, &fast = spot.cost.checkpoint;
  CHECK(slow.young_daly_s == Approx(std::sqrt(2 * write_s / (2 * 0.01 / 3600))));
  CHECK(fast.young_daly_s == Approx(std::sqrt(2 * write_s / (2 * 0.11 / 3600))));
  CHECK(slow.simulated_optimum);
  CHECK(fast.simulated_optimum);
  // Each within the search's range around its own Young/Daly, which are sqrt(11) apart.
  CHECK(slow.interval_s > slow.young_daly_s / 4);
  CHECK(slow.interval_s < slow.young_daly_s * 4);
  CHECK(slow.interval_s > 1.5 * fast.interval_s);
  CHECK(on_demand.cost.time.mean_interruptions > 0);
  // The same faults and preemptions besides: spot is never faster.
  CHECK(spot.cost.time.mean_s > on_demand.cost.time.mean_s);
  CHECK(spot.cost.time.p50_s >= on_demand.cost.time.p50_s);
  CHECK(spot.cost.time.mean_interruptions > on_demand.cost.time.mean_interruptions);
}

// On demand and both subscriptions see only faults: one planned run (one interval search, one set
// of trials) serves all three, bit for bit; spot's preemptions besides get a run of their own.
TEST_CASE("billing modes of the same interruption rate share one planned run") {
  const auto loaded = load_cost(cost_scenario(
      "  billing: [ON_DEMAND, SUBSCRIPTION_MONTHLY, SPOT, SUBSCRIPTION_YEARLY]\n"
      "  preemptions_per_instance_hour: 0.1\n  interruptions_per_node_hour: 0.01\n"
      "  restart { acquisition_s: 300 container_start_s: 120 }\n"
      "  checkpoint { volume { tier: \"aws.ebs.gp3\" capacity_gib: 500 } }\n  trials: 50\n"));
  INFO(loaded->diagnostics);
  REQUIRE(loaded->model);
  const Configuration c = expand_configurations(*loaded->scenario).valid.at(0);
  const CheckpointPlan plan = plan_checkpoints(*loaded->model, c, memory(), step(10));
  // In the order of first use: the faults of 2 nodes, then spot's faults and preemptions.
  REQUIRE(plan.runs.size() == 2);
  CHECK(plan.runs[0].rate.nodes == 2);
  CHECK(plan.runs[0].rate.per_node_hour == 0.01);
  CHECK(plan.runs[1].rate.per_node_hour == Approx(0.11));
  const RunCost on_demand = run_cost(*loaded->model, c, plan, s::ON_DEMAND);
  const RunCost spot = run_cost(*loaded->model, c, plan, s::SPOT);
  CHECK(on_demand.checkpoint.simulated_optimum);
  CHECK(on_demand.time.mean_interruptions > 0);
  for (s::BillingMode billing : {s::SUBSCRIPTION_MONTHLY, s::SUBSCRIPTION_YEARLY}) {
    const RunCost subscription = run_cost(*loaded->model, c, plan, billing);
    CHECK(subscription.checkpoint.interval_s == on_demand.checkpoint.interval_s);
    CHECK(subscription.checkpoint.young_daly_s == on_demand.checkpoint.young_daly_s);
    CHECK(subscription.time.mean_s == on_demand.time.mean_s);
    CHECK(subscription.time.p50_s == on_demand.time.p50_s);
    CHECK(subscription.time.p95_s == on_demand.time.p95_s);
    CHECK(subscription.time.mean_interruptions == on_demand.time.mean_interruptions);
  }
  CHECK(on_demand.checkpoint.interval_s == plan.runs[0].checkpoint.interval_s);
  CHECK(spot.checkpoint.interval_s == plan.runs[1].checkpoint.interval_s);
  CHECK(spot.checkpoint.interval_s < on_demand.checkpoint.interval_s);
  CHECK(spot.time.mean_s > on_demand.time.mean_s);
  // A plan made for on demand alone gives on demand the same run: sharing changes no number.
  const auto alone = load_cost(cost_scenario(
      "  billing: ON_DEMAND\n  interruptions_per_node_hour: 0.01\n"
      "  restart { acquisition_s: 300 container_start_s: 120 }\n"
      "  checkpoint { volume { tier: \"aws.ebs.gp3\" capacity_gib: 500 } }\n  trials: 50\n"));
  REQUIRE(alone->model);
  const Configuration single = expand_configurations(*alone->scenario).valid.at(0);
  const CheckpointPlan single_plan = plan_checkpoints(*alone->model, single, memory(), step(10));
  REQUIRE(single_plan.runs.size() == 1);
  const RunCost by_itself = run_cost(*alone->model, single, single_plan, s::ON_DEMAND);
  CHECK(by_itself.checkpoint.interval_s == on_demand.checkpoint.interval_s);
  CHECK(by_itself.time.mean_s == on_demand.time.mean_s);
}

// Poisson faults at rate l over the job, a restart R (and a checkpoint load L once one is
// durable), segments of tau training and a write C: each segment of length a expects
// e^(l (R + L)) (e^(l a) - 1) / l of wall time (Daly 2006, eq. 14, segment by segment; the last
// segment writes no checkpoint, the first restarts without a load).
TEST_CASE("an on-demand run's mean time is the closed form of its Poisson faults") {
  const Costed c = cost_of(
      "  interruptions_per_node_hour: 0.05\n"
      "  restart { acquisition_s: 300 container_start_s: 120 }\n"
      "  checkpoint { volume { tier: \"aws.ebs.gp3\" capacity_gib: 500 } interval_s: 3600 }\n"
      "  trials: 2000\n",
      s::ON_DEMAND);
  const double rate = 2 * 0.05 / 3600, tau = 3600, write = c.plan.cost.write_s;
  double expected = 0;
  for (double done = 0; done < c.cost.work_s; done += tau) {
    const double training = std::min(tau, c.cost.work_s - done);
    const double length = training + (done + training < c.cost.work_s ? write : 0);
    const double restart = 420 + (done > 0 ? c.plan.cost.load_s : 0);
    expected += std::exp(rate * restart) * std::expm1(rate * length) / rate;
  }
  CHECK(c.cost.checkpoint.interval_s == 3600);  // the scenario's, for every mode
  CHECK_FALSE(c.cost.checkpoint.simulated_optimum);
  // 2000 trials of about 1.1 faults each: the mean within 1%.
  CHECK(c.cost.time.mean_s == Approx(expected).epsilon(0.01));
  CHECK(c.cost.time.mean_interruptions == Approx(rate * expected).epsilon(0.05));
  CHECK(c.cost.time.p95_s > c.cost.time.p50_s);
}

TEST_CASE("a fault rate of 0 is the uninterrupted run, and absent the default per GPU") {
  // 419 unexpected interruptions in 54 days on 16,384 GPUs (Llama 3).
  CHECK(kDefaultInterruptionsPerGpuHour == Approx(1.97328e-5).epsilon(1e-5));
  const Costed none = cost_of(kCheckpoint, s::ON_DEMAND);
  // As before faults were modelled: the work and ten hourly checkpoint pauses, to the microsecond.
  CHECK(none.cost.interruptions_per_hour == 0);
  CHECK(none.cost.time.p50_s == Approx(38150 + 10 * none.plan.cost.write_s).margin(1e-5));
  CHECK(none.cost.time.p95_s == none.cost.time.p50_s);
  CHECK(none.cost.time.mean_interruptions == 0);
  CHECK(none.cost.cost_p50 ==
        Approx(21.957642 * 2 * none.cost.time.p50_s / 3600 + none.cost.storage_cost_p50)
            .epsilon(1e-12));
  // Absent with a checkpoint: 2 nodes of 8 GPUs at the default.
  const Costed absent = cost_of(
      "  restart { acquisition_s: 300 container_start_s: 120 }\n"
      "  checkpoint { volume { tier: \"aws.ebs.gp3\" capacity_gib: 500 } }\n  trials: 50\n",
      s::ON_DEMAND);
  CHECK(absent.cost.interruptions_per_hour == Approx(16 * kDefaultInterruptionsPerGpuHour));
  CHECK(absent.cost.checkpoint.simulated_optimum);
  CHECK(absent.cost.time.mean_s >= 38150);
  // Nothing interrupts the run at 0 and no interval is set: the optimum is no checkpoint at all.
  const Costed never = cost_of(
      "  billing: [ON_DEMAND, SPOT]\n  preemptions_per_instance_hour: 0.1\n"
      "  interruptions_per_node_hour: 0\n"
      "  restart { acquisition_s: 300 container_start_s: 120 }\n"
      "  checkpoint { volume { tier: \"aws.ebs.gp3\" capacity_gib: 500 } }\n  trials: 20\n",
      s::ON_DEMAND);
  CHECK(never.cost.checkpoint.interval_s == 0);
  CHECK(never.cost.time.p50_s == Approx(38150).margin(1e-5));
}

// A run whose interval is at least its training wrote no checkpoint, yet its volume was billed
// for the whole run and its interval printed as if it checkpointed.
TEST_CASE("an interval beyond the run writes no checkpoint during it and bills no volume") {
  // The scenario's daily interval against 38,150 s of training, nothing interrupting.
  const Costed daily = cost_of(
      "  checkpoint { volume { tier: \"aws.ebs.gp3\" capacity_gib: 500 } interval_s: 86400 }\n"
      "  interruptions_per_node_hour: 0\n",
      s::ON_DEMAND);
  CHECK(daily.cost.checkpoint.interval_s == 86400);
  CHECK_FALSE(daily.cost.checkpoint.periodic);
  CHECK_FALSE(daily.cost.writes_during_run);
  CHECK(daily.cost.time.p50_s == Approx(38150).margin(1e-5));  // no write pause
  REQUIRE(daily.cost.storage_per_hour);
  CHECK(*daily.cost.storage_per_hour == Approx(2 * 500 * 0.08 / 730));
  CHECK(daily.cost.storage_cost_p50 == 0);
  CHECK(daily.cost.cost_p50 == Approx(21.957642 * 2 * 38150 / 3600).epsilon(1e-9));
  // The optimum for the default faults (16 GPUs: one every 3,200 h; a Young/Daly interval of
  // hours) against a run of 3,815 s of training: beyond it, as every point the search tries.
  const Costed short_run = cost_of(
      "  restart { acquisition_s: 300 container_start_s: 120 }\n"
      "  checkpoint { volume { tier: \"aws.ebs.gp3\" capacity_gib: 500 } }\n  trials: 20\n",
      s::ON_DEMAND, 1);
  CHECK(short_run.cost.checkpoint.simulated_optimum);
  CHECK(short_run.cost.checkpoint.interval_s > short_run.cost.work_s);
  CHECK_FALSE(short_run.cost.checkpoint.periodic);
  CHECK(short_run.cost.storage_cost_p50 == 0);
  // Hourly checkpoints of the same run are written during it, and its volume billed.
  const Costed hourly = cost_of(kCheckpoint, s::ON_DEMAND, 10);
  CHECK(hourly.cost.checkpoint.periodic);
  CHECK(hourly.cost.writes_during_run);
  CHECK(hourly.cost.storage_cost_p50 > 0);
}

// The run-never-finishes cause travels as a flag beside its text (was found in the text).
TEST_CASE("a run not expected to finish is flagged, one of too large a budget is not") {
  const Costed forced = cost_of(
      "  checkpoint { volume { tier: \"aws.ebs.gp3\" capacity_gib: 500 } interval_s: 1 }\n"
      "  interruptions_per_node_hour: 0\n",
      s::ON_DEMAND);
  CHECK_FALSE(forced.cost.unsimulated.empty());
  CHECK(forced.cost.never_finishes);
  // Steps of 10^8 s: 3.8e11 s of training, beyond the run simulation's span.
  const Costed long_steps = cost_of(kCheckpoint, s::ON_DEMAND, 1e8);
  CHECK_FALSE(long_steps.cost.unsimulated.empty());
  CHECK_FALSE(long_steps.cost.never_finishes);
}

// The volume was checked against the share of the scenario's most nodes only: the configurations
// on fewer nodes, whose share is larger, were costed as if theirs fitted.
TEST_CASE("each configuration's share of the checkpoint must fit its volume") {
  const std::string scenario = R"(model: "llama2-7b"
job { global_batch_size: 64 sequence_length: 4096 precision: BF16 optimizer: ADAM token_budget: 1e9 }
cluster { instance: "aws.p4d.24xlarge" nodes: 1 }
parallelism { zero_stage: 1 }
sweep { nodes: [1, 2] }
cost {
  checkpoint { volume { tier: "aws.ebs.gp3" capacity_gib: 44 } interval_s: 3600 keep: 1 }
  interruptions_per_node_hour: 0
}
)";
  auto loaded = load_cost(scenario);
  INFO(loaded->diagnostics);
  REQUIRE(loaded->model);  // the two-node configurations' 43.9 GiB shares fit
  int checked = 0;
  for (const Configuration& c : expand_configurations(*loaded->scenario).valid) {
    const CheckpointPlan plan = plan_checkpoints(*loaded->model, c, memory(), step(10));
    if (c.nodes == 1) {
      CHECK(plan.over_volume ==
            "a checkpoint (87.9 GiB of weights and optimizer states of \"llama2-7b\") does not "
            "fit in 44 GiB");
    } else {
      CHECK(plan.over_volume.empty());
      CHECK(plan.cost.write_s > 0);
    }
    ++checked;
  }
  CHECK(checked >= 2);
}

// 2 owned p4d nodes beside `p5_nodes` rented p5 nodes, one preemption per spot instance every 10
// hours and no fault, the interval at the simulated optimum.
std::unique_ptr<testing::LoadedCost> owned_mix(int p5_nodes, const std::string& faults = "0") {
  auto loaded = load_cost(
      "name: \"t\"\nmodel: \"llama2-7b\"\njob { global_batch_size: 64 sequence_length: 4096 "
      "precision: BF16 optimizer: ADAM token_budget: 1e9 }\n"
      "cluster {\n  fabric: \"single-switch\"\n"
      "  pool { instance: \"aws.p4d.24xlarge\" nodes: 2 owned_nodes: 2 }\n" +
      (p5_nodes > 0
           ? "  pool { instance: \"aws.p5.48xlarge\" nodes: " + std::to_string(p5_nodes) + " }\n"
           : "") +
      "}\nparallelism { tensor_parallel: 8 distributed_optimizer: true }\n"
      "cost {\n  billing: [ON_DEMAND, SPOT]\n  preemptions_per_instance_hour: 0.1\n"
      "  restart { acquisition_s: 300 container_start_s: 120 }\n"
      "  checkpoint { volume { tier: \"aws.ebs.gp3\" capacity_gib: 500 } }\n  trials: 20\n"
      "  interruptions_per_node_hour: " +
      faults + "\n}\n");
  INFO(loaded->diagnostics);
  REQUIRE(loaded->model);
  return loaded;
}

TEST_CASE("owned nodes are not spot instances: only the rented nodes are preempted",
          "[invariant]") {
  SECTION("every node owned: the spot run is the on-demand run, never preempted") {
    const auto loaded = owned_mix(0);
    const Configuration c = expand_configurations(*loaded->scenario).valid.at(0);
    const CheckpointPlan plan = plan_checkpoints(*loaded->model, c, memory(), step(10));
    const RunCost spot = run_cost(*loaded->model, c, plan, s::SPOT);
    const RunCost on_demand = run_cost(*loaded->model, c, plan, s::ON_DEMAND);
    // Before: both owned nodes preempted at 0.1 an hour each, 2.65 times a run on average, the
    // p50 run 47,435 s against 41,389 s.
    CHECK(spot.time.mean_interruptions == 0);
    CHECK(spot.time.p50_s == on_demand.time.p50_s);
    CHECK(spot.time.p95_s == on_demand.time.p95_s);
  }
  SECTION("every node owned, with faults: interrupted as on demand, never preempted") {
    const auto loaded = owned_mix(0, "0.01");
    const Configuration c = expand_configurations(*loaded->scenario).valid.at(0);
    const CheckpointPlan plan = plan_checkpoints(*loaded->model, c, memory(), step(10));
    const RunCost spot = run_cost(*loaded->model, c, plan, s::SPOT);
    const RunCost on_demand = run_cost(*loaded->model, c, plan, s::ON_DEMAND);
    CHECK(spot.interruptions_per_hour == Approx(2 * 0.01));
    CHECK(on_demand.time.mean_interruptions > 0);
    CHECK(spot.time.mean_interruptions == on_demand.time.mean_interruptions);
    CHECK(spot.time.p50_s == on_demand.time.p50_s);
    CHECK(spot.checkpoint.interval_s == on_demand.checkpoint.interval_s);
  }
  SECTION("one rented p5 beside 2 owned p4d: the failure rate and the runs of one spot node") {
    const auto loaded = owned_mix(1);
    const Configuration c = expand_configurations(*loaded->scenario).valid.at(0);
    const CheckpointPlan plan = plan_checkpoints(*loaded->model, c, memory(), step(10));
    const RunCost spot = run_cost(*loaded->model, c, plan, s::SPOT);
    // Young/Daly at one node's 0.1 preemptions an hour (was the 3 nodes' 0.3).
    CHECK(spot.checkpoint.young_daly_s == Approx(std::sqrt(2 * plan.cost.write_s / (0.1 / 3600))));
    RunSpec one_node;
    one_node.work_s = spot.work_s;
    one_node.interval_s = spot.checkpoint.interval_s;
    one_node.checkpoint_write_s = plan.cost.write_s;
    one_node.checkpoint_load_s = plan.cost.load_s;
    one_node.restart_s = 420;
    one_node.nodes = 1;
    one_node.interruptions_per_node_hour = 0.1;
    const RunStatistics expected = simulate_runs(one_node, 20, 1);
    CHECK(spot.time.p50_s == expected.p50_s);
    CHECK(spot.time.p95_s == expected.p95_s);
    CHECK(spot.time.mean_interruptions == expected.mean_interruptions);
  }
}

// Spot on AWS (a notice of 120 s) with faults at 0.05 a node-hour besides 0.1 preemptions an
// instance-hour: a third of the interruptions are faults. Checkpoints on `volume`.
std::string spot_with_faults(const std::string& checkpoint_extra, const std::string& extra = "",
                             const std::string& volume = "tier: \"aws.ebs.gp3\" capacity_gib: 500") {
  return "  billing: [ON_DEMAND, SPOT]\n  preemptions_per_instance_hour: 0.1\n"
         "  interruptions_per_node_hour: 0.05\n"
         "  restart { acquisition_s: 300 container_start_s: 120 }\n"
         "  checkpoint { volume { " + volume + " } interval_s: 3600" + checkpoint_extra +
         " }\n  trials: 200\n" + extra;
}

// FSx for Lustre at 200 MB/s per TiB: 12,000 GiB write the 87.9 GiB checkpoint in about 40 s.
const std::string kFastVolume = "tier: \"aws.fsx-lustre.persistent1-200\" capacity_gib: 12000";
const std::string kSave = " save_on_preemption_notice: true";

TEST_CASE("a spot run saves in the notice where its write fits, and the on-demand run is as before") {
  const Costed plain = cost_of(spot_with_faults("", "", kFastVolume), s::SPOT);
  const Costed saving = cost_of(spot_with_faults(kSave, "", kFastVolume), s::SPOT);
  REQUIRE(saving.plan.cost.write_s < 120);
  CHECK(saving.plan.notice_save.fits);
  CHECK(describe(saving.plan.notice_save) ==
        "yes: " + format_fixed(saving.plan.cost.write_s, 1) + " s in 120 s");
  CHECK(saving.cost.interruptions_per_hour == plain.cost.interruptions_per_hour);
  // Two thirds of the interruptions lose no training: the run is shorter.
  CHECK(saving.cost.time.mean_s < plain.cost.time.mean_s);
  // Faults give no notice: the on-demand run is the same, bit for bit.
  const Costed plain_od = cost_of(spot_with_faults("", "", kFastVolume), s::ON_DEMAND);
  const Costed saving_od = cost_of(spot_with_faults(kSave, "", kFastVolume), s::ON_DEMAND);
  CHECK(saving_od.cost.time.mean_s == plain_od.cost.time.mean_s);
  CHECK(saving_od.cost.time.p95_s == plain_od.cost.time.p95_s);
  CHECK(saving_od.cost.cost_p50 == plain_od.cost.cost_p50);
}

TEST_CASE("a write longer than the notice saves nothing: the spot run loses work as before") {
  // gp3 at its baseline throughput: 43.9 GiB a node in about 360 s, three times AWS's notice.
  const Costed slow = cost_of(spot_with_faults(kSave), s::SPOT);
  const Costed plain = cost_of(spot_with_faults(""), s::SPOT);
  REQUIRE(slow.plan.cost.write_s > 120);
  CHECK_FALSE(slow.plan.notice_save.fits);
  CHECK(describe(slow.plan.notice_save) ==
        "no: " + format_fixed(slow.plan.cost.write_s, 1) + " s > 120 s");
  CHECK(slow.cost.time.mean_s == plain.cost.time.mean_s);
  CHECK(slow.cost.time.p95_s == plain.cost.time.p95_s);
  NoticeSave unknown;
  unknown.enabled = true;
  CHECK(describe(unknown) == "no: no notice known");
  CHECK(describe(NoticeSave{}) == "");
}

TEST_CASE("faults that restart in place pay their own restart, preemptions the shared one") {
  const std::string in_place = "  restart_after_fault { acquisition_s: 0 container_start_s: 120 }\n";
  // On demand only faults interrupt: a restart of 120 s instead of 420 s, shorter.
  const Costed od = cost_of(spot_with_faults(""), s::ON_DEMAND);
  const Costed od_in_place = cost_of(spot_with_faults("", in_place), s::ON_DEMAND);
  CHECK(od_in_place.cost.time.mean_s < od.cost.time.mean_s);
  // The same as giving every interruption the in-place restart, bit for bit.
  const Costed od_all = cost_of(
      "  billing: [ON_DEMAND, SPOT]\n  preemptions_per_instance_hour: 0.1\n"
      "  interruptions_per_node_hour: 0.05\n"
      "  restart { acquisition_s: 0 container_start_s: 120 }\n"
      "  checkpoint { volume { tier: \"aws.ebs.gp3\" capacity_gib: 500 } interval_s: 3600 }\n"
      "  trials: 200\n",
      s::ON_DEMAND);
  CHECK(od_in_place.cost.time.mean_s == od_all.cost.time.mean_s);
  // On spot the preemptions (two thirds) still pay 420 s: between the two.
  const Costed spot = cost_of(spot_with_faults(""), s::SPOT);
  const Costed spot_in_place = cost_of(spot_with_faults("", in_place), s::SPOT);
  const Costed spot_all = cost_of(
      "  billing: [ON_DEMAND, SPOT]\n  preemptions_per_instance_hour: 0.1\n"
      "  interruptions_per_node_hour: 0.05\n"
      "  restart { acquisition_s: 0 container_start_s: 120 }\n"
      "  checkpoint { volume { tier: \"aws.ebs.gp3\" capacity_gib: 500 } interval_s: 3600 }\n"
      "  trials: 200\n",
      s::SPOT);
  CHECK(spot_in_place.cost.time.mean_s < spot.cost.time.mean_s);
  CHECK(spot_in_place.cost.time.mean_s > spot_all.cost.time.mean_s);
}

}  // namespace
}  // namespace clustersim
