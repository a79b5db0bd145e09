// The run-level simulation against closed forms: no preemption, Daly's expected run time under
// exponential failures, Young/Daly's optimal checkpoint interval; and its determinism.
#include "sim/cost/run_simulation.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "sim/cost/checkpoint_interval.h"

namespace clustersim {
namespace {

RunSpec hundred_hours() {
  RunSpec spec;
  spec.work_s = 100 * 3600.0;
  spec.interval_s = 3600;
  spec.checkpoint_write_s = 120;
  spec.restart_s = 600;
  spec.nodes = 4;
  return spec;
}

TEST_CASE("without preemptions a run is its work plus one pause per checkpoint") {
  const RunOutcome run = simulate_run(hundred_hours(), 7);
  CHECK(run.interruptions == 0);
  CHECK(run.checkpoints == 99);  // none after the last segment
  CHECK(run.wall_s == Approx(100 * 3600.0 + 99 * 120).epsilon(1e-12));
}

TEST_CASE("asynchronous checkpoints shorter than the interval cost no training time") {
  RunSpec spec = hundred_hours();
  spec.pauses_training = false;
  CHECK(simulate_run(spec, 7).wall_s == Approx(100 * 3600.0).epsilon(1e-12));
  spec.checkpoint_write_s = 4800;  // longer than the interval: training waits for the writer
  CHECK(simulate_run(spec, 7).wall_s == Approx(3600 + 98 * 4800.0 + 3600).epsilon(1e-12));
}

TEST_CASE("a run not expected to finish is answered unsimulated") {
  // 20 preemptions an hour on one node (M = 180 s) against a 1,620 s restart, checkpoints of
  // 720 s every 509 s: Daly's E[T] = M e^(R/M) (e^((tau + C)/M) - 1) W / tau, about 2.6e6 W.
  // Simulated, 400 trials each ran to the give-up at 100 W: `cost` took minutes.
  RunSpec spec;
  spec.work_s = 81 * 3600.0;
  spec.interval_s = 509;
  spec.checkpoint_write_s = 720;
  spec.restart_s = 1620;
  spec.interruptions_per_node_hour = 20;
  CHECK(run_problem(spec) ==
        "a run of 0.00925 years of training not expected to finish: an interruption every 180 s "
        "against a restart of 1.62e+03 s and checkpoints every 509 s of training expect more than "
        "100 times the training in wall time");
  spec.interruptions_per_node_hour = 0.05;  // M = 72,000 s: E[T] about 2.5 W
  CHECK(run_problem(spec).empty());
}

TEST_CASE("the mean run time under preemptions matches Daly's expected time") {
  // Daly (2006), exponential failures at rate 1/M, failures also during checkpoints and restarts:
  //   E[T] = M e^(R/M) (e^((tau + C)/M) - 1) W / tau.
  RunSpec spec = hundred_hours();
  spec.interruptions_per_node_hour = 0.05;  // 4 nodes: M = 5 h
  const double m = 3600 / (spec.nodes * spec.interruptions_per_node_hour);
  const double expected = m * std::exp(spec.restart_s / m) *
                          (std::exp((spec.interval_s + spec.checkpoint_write_s) / m) - 1) *
                          spec.work_s / spec.interval_s;
  const RunStatistics stats = simulate_runs(spec, 400, 1);
  // The last segment writes no checkpoint: one C less than the formula counts.
  CHECK(stats.mean_s == Approx(expected).epsilon(0.01));
  CHECK(stats.mean_interruptions == Approx(expected / m).epsilon(0.05));
  CHECK(stats.p50_s <= stats.p95_s);
}

TEST_CASE("a fixed seed gives the same p50 and p95, another seed gives others") {
  RunSpec spec = hundred_hours();
  spec.interruptions_per_node_hour = 0.05;
  const RunStatistics a = simulate_runs(spec, 50, 42), b = simulate_runs(spec, 50, 42);
  CHECK(a.p50_s == b.p50_s);
  CHECK(a.p95_s == b.p95_s);
  CHECK(a.mean_s == b.mean_s);
  CHECK(simulate_runs(spec, 50, 1000).p95_s != a.p95_s);
}

TEST_CASE("the simulated optimal checkpoint interval is Young/Daly's for small failure rates") {
  // C / M = 0.005: Young's first order is within a few percent of the exact optimum.
  RunSpec spec;
  spec.work_s = 400 * 3600.0;
  spec.checkpoint_write_s = 300;
  spec.restart_s = 300;
  spec.nodes = 8;
  spec.interruptions_per_node_hour = 0.0125 * 0.9;  // M = 10 h / 0.9
  const double young = young_daly_interval_s(spec.checkpoint_write_s, job_failures_per_s(spec));
  CHECK(young == Approx(std::sqrt(2 * 300 * 36000 / 0.9)));
  CHECK(simulated_optimal_interval_s(spec, 200, 1) == Approx(young).epsilon(0.10));
}

TEST_CASE("a run that cannot outpace its preemptions is reported as never finishing") {
  RunSpec spec = hundred_hours();
  spec.checkpoint_write_s = 10 * 3600;  // a preemption every 15 minutes on 4 nodes
  spec.interruptions_per_node_hour = 1;
  const RunOutcome run = simulate_run(spec, 1);
  CHECK(std::isinf(run.wall_s));
  CHECK(run.checkpoints == 0);
}

}  // namespace
}  // namespace clustersim
