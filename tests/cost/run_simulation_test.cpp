// The run-level simulation against closed forms: no preemption, Daly's expected run time under
// exponential failures, Young/Daly's optimal checkpoint interval, preemptions saved in their
// notice and the mix of faults and preemptions; and its determinism.
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
        "against a restart of 1.62e+03 s and checkpoints of 720 s every 509 s of training expect "
        "more than 100 times the training in wall time");
  CHECK(finish_problem(spec) == run_problem(spec));
  spec.interruptions_per_node_hour = 0.05;  // M = 72,000 s: E[T] about 2.5 W
  CHECK(run_problem(spec).empty());
  CHECK(finish_problem(spec).empty());
}

TEST_CASE("a run whose checkpoint writes alone outlast 100 times its training names them") {
  // Checkpoints of 144 s every second of training: 145 W without any interruption. The message
  // named only the interruptions ("an interruption every inf s") and not the writes.
  RunSpec spec;
  spec.work_s = 72 * 3600.0;
  spec.interval_s = 1;
  spec.checkpoint_write_s = 144;
  CHECK(finish_problem(spec) ==
        "a run of 0.00822 years of training not expected to finish: checkpoints of 144 s every 1 s "
        "of training expect more than 100 times the training in wall time");
  spec.checkpoint_write_s = 98;  // 99 W: within the give-up
  CHECK(finish_problem(spec).empty());
  // Too long to simulate for its events, not its finish: no finish problem to name.
  spec.interval_s = 0.01;
  spec.checkpoint_write_s = 0.5;  // 51 W, but 2.6e7 checkpoints
  CHECK(finish_problem(spec).empty());
  CHECK(run_problem(spec).find("checkpoints and interruptions, more than the 1e+07") !=
        std::string::npos);
}

TEST_CASE("a run with no checkpoint before its end restarts from scratch, loading nothing") {
  // No checkpoint during the run (its interval beyond its training): every interruption starts it
  // again from the first step, with no checkpoint to load (as the simulation restarts it). The
  // expected time counted the load in every restart: "a restart of 4.2e+03 s".
  RunSpec spec;
  spec.work_s = 100 * 3600.0;
  spec.interval_s = 200 * 3600.0;
  spec.checkpoint_write_s = 120;
  spec.checkpoint_load_s = 3600;
  spec.restart_s = 600;
  spec.interruptions_per_node_hour = 1;
  CHECK(finish_problem(spec) ==
        "a run of 0.0114 years of training not expected to finish: an interruption every "
        "3.6e+03 s against a restart of 600 s and no checkpoint expect more than 100 times the "
        "training in wall time");
  // Interruptions rare enough: the mean of the runs is Daly's E[T] with one segment of the whole
  // work and no load, e^(rate R) (e^(rate W) - 1) / rate.
  spec.work_s = 3600;
  spec.interval_s = 7200;
  spec.interruptions_per_node_hour = 0.5;
  const double rate = 0.5 / 3600;
  const double expected = std::exp(rate * 600) * std::expm1(rate * 3600) / rate;
  CHECK(simulate_runs(spec, 4000, 1).mean_s == Approx(expected).epsilon(0.02));
  CHECK(simulate_run(spec, 1).checkpoints == 0);
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

// A run of 100 hours on 4 nodes, each interrupted 0.05 times an hour (M = 5 h), 60% of the
// interruptions spot preemptions that save in their notice (a write of 120 s, a restart of 600 s)
// and 40% faults that restart in place (60 s); a load of 100 s after either.
RunSpec mixed_causes() {
  RunSpec spec = hundred_hours();
  spec.interruptions_per_node_hour = 0.05;
  spec.checkpoint_load_s = 100;
  spec.preemption_share = 0.6;
  spec.preemption_saves = true;
  spec.fault_restart_s = 60;
  return spec;
}

// The closed form of run_simulation.cpp's mixed_expected_wall_s, written out again: renewal and
// reward over the attempts at a segment s = tau + C at rate r, a fault (1 - p) keeping nothing
// and restarting after R_f, a saving preemption (p) keeping min(T, tau) and paying C + R_p:
//   E[attempt] = (1 - e^(-r s)) (1 + (1 - p)(e^(r R_f) - 1) + p (e^(r (C + R_p)) - 1)) / r
//   E[kept]    = (1 - p) tau e^(-r s) + p (1 - e^(-r tau)) / r
double mixed_daly_s(const RunSpec& spec) {
  const double r = spec.nodes * spec.interruptions_per_node_hour / 3600;
  const double p = spec.preemption_share, tau = spec.interval_s;
  const double s = tau + spec.checkpoint_write_s;
  const double fault_restart = *spec.fault_restart_s + spec.checkpoint_load_s;
  const double preemption_restart =
      spec.checkpoint_write_s + spec.restart_s + spec.checkpoint_load_s;
  const double attempt = (1 - std::exp(-r * s)) *
                         (1 + (1 - p) * (std::exp(r * fault_restart) - 1) +
                          p * (std::exp(r * preemption_restart) - 1)) /
                         r;
  const double kept = (1 - p) * tau * std::exp(-r * s) + p * (1 - std::exp(-r * tau)) / r;
  return spec.work_s * attempt / kept;
}

TEST_CASE("with faults and saving preemptions mixed, the mean run time is the mixed Daly form") {
  const RunSpec spec = mixed_causes();
  const RunStatistics stats = simulate_runs(spec, 400, 1);
  CHECK(stats.mean_s == Approx(mixed_daly_s(spec)).epsilon(0.005));
  // The same interruptions all faults (Daly's eq. 14) take longer: the preemptions' saved work
  // and the mix is not either pure form.
  RunSpec faults = spec;
  faults.preemption_share = 0;
  const RunStatistics all_faults = simulate_runs(faults, 400, 1);
  CHECK(all_faults.mean_s > stats.mean_s * 1.02);
  // Interruptions come at the job's rate over the whole wall time, whatever their causes.
  const double rate = spec.nodes * spec.interruptions_per_node_hour / 3600;
  CHECK(stats.mean_interruptions == Approx(rate * stats.mean_s).epsilon(0.05));
}

TEST_CASE("a preemption saved in its notice loses no training: it costs save, restart and load") {
  // Preemptions only, no periodic checkpoint: every interruption saves the training so far and
  // costs D = write + restart + load. None repeats training, so the run takes W e^(r D) (each
  // interruption adds D, and interruptions come at r over the whole wall time: W + r T D).
  RunSpec spec = hundred_hours();
  spec.interval_s = 0;
  spec.interruptions_per_node_hour = 0.01;  // 4 nodes: one every 25 h
  spec.checkpoint_load_s = 100;
  spec.preemption_share = 1;
  spec.preemption_saves = true;
  const double r = spec.nodes * spec.interruptions_per_node_hour / 3600;
  const double downtime = spec.checkpoint_write_s + spec.restart_s + spec.checkpoint_load_s;
  const RunStatistics stats = simulate_runs(spec, 400, 1);
  CHECK(stats.mean_s == Approx(spec.work_s * std::exp(r * downtime)).epsilon(1e-3));
  CHECK(stats.mean_interruptions == Approx(r * stats.mean_s).epsilon(0.05));
  // Seed by seed, a run is its work plus D per save: one per interruption, but for another
  // node's preemption during a save, which joins it (seed 12; none here hits a restart).
  int joined = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const RunOutcome run = simulate_run(spec, seed);
    CHECK(run.wall_s == Approx(spec.work_s + run.checkpoints * downtime).epsilon(1e-9));
    CHECK(run.checkpoints <= run.interruptions);
    joined += run.interruptions - run.checkpoints;
  }
  CHECK(joined == 1);
  // Without the save the same preemptions lose all training since the start.
  spec.preemption_saves = false;
  CHECK(simulate_runs(spec, 100, 1).mean_s > 1.5 * stats.mean_s);
}

TEST_CASE("with faults only, saving on a notice and the preemptions' restart change nothing") {
  RunSpec faults = mixed_causes();
  faults.preemption_share = 0;
  faults.restart_s = 1e4;  // the preemptions' restart, which no fault pays
  RunSpec plain = faults;
  plain.preemption_saves = false;
  plain.restart_s = *plain.fault_restart_s;
  plain.fault_restart_s.reset();
  const RunStatistics a = simulate_runs(faults, 100, 3), b = simulate_runs(plain, 100, 3);
  CHECK(a.mean_s == b.mean_s);
  CHECK(a.p50_s == b.p50_s);
  CHECK(a.p95_s == b.p95_s);
  CHECK(a.mean_interruptions == b.mean_interruptions);
  CHECK(simulated_optimal_interval_s(faults, 50, 1) == simulated_optimal_interval_s(plain, 50, 1));
  // Causes that cost alike are not drawn: a preemption share is then the same run too.
  plain.preemption_share = 0.5;
  CHECK(simulate_runs(plain, 100, 3).mean_s == b.mean_s);
}

TEST_CASE("the interruption causes are drawn from the seed: the same seed, the same run") {
  const RunSpec spec = mixed_causes();
  for (uint64_t seed : {1u, 17u, 123456789u}) {
    const RunOutcome a = simulate_run(spec, seed), b = simulate_run(spec, seed);
    CHECK(a.wall_s == b.wall_s);
    CHECK(a.interruptions == b.interruptions);
    CHECK(a.checkpoints == b.checkpoints);
  }
}

TEST_CASE("checkpoints guard against the interruptions that lose training") {
  RunSpec spec = mixed_causes();
  CHECK(lossy_failures_per_s(spec) == Approx(0.4 * job_failures_per_s(spec)));
  spec.preemption_saves = false;
  CHECK(lossy_failures_per_s(spec) == job_failures_per_s(spec));
}

}  // namespace
}  // namespace clustersim
