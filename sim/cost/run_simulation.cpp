// The run-level simulation: one Simulation per trial, events for the end of each training segment,
// each checkpoint becoming durable, each node's next interruption and each restart.
#include "sim/cost/run_simulation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "sim/engine/simulation.h"
#include "sim/util/check.h"
#include "sim/util/number_format.h"

namespace clustersim {
namespace {

// Runs last days to years, beyond the 107 days the engine's picosecond clock spans, and need no
// finer resolution than a microsecond: one engine tick is one microsecond here.
constexpr double kTicksPerSecond = 1e6;

Picoseconds ticks(double seconds) {
  return Picoseconds(static_cast<int64_t>(std::llround(seconds * kTicksPerSecond)));
}

// A run still unfinished after this many times its work makes (almost) no progress between
// interruptions: it is reported as never finishing instead of being simulated on.
constexpr double kGiveUpAfterWorkTimes = 100;

double seconds(Picoseconds t) { return static_cast<double>(t.count()) / kTicksPerSecond; }

// Whether an interruption's cause changes what it costs: then each one's is drawn.
bool causes_differ(const RunSpec& spec) {
  return spec.preemption_share > 0 && spec.preemption_share < 1 &&
         (spec.preemption_saves || spec.fault_restart_s.has_value());
}

// Seeds the stream the causes are drawn from, apart from the interruption times' (any odd
// constant: the fractional part of the golden ratio, as splitmix64 uses).
constexpr uint64_t kCauseStream = 0x9e3779b97f4a7c15;

// A uniform number in [0, 1) from 53 random bits (bit-exact on every platform).
double uniform(std::mt19937_64& random) {
  return static_cast<double>(random() >> 11) * 0x1.0p-53;
}

class Run {
 public:
  Run(const RunSpec& spec, uint64_t seed)
      : spec_(spec), random_(seed), cause_random_(seed ^ kCauseStream) {
    CLUSTERSIM_CHECK(spec.work_s > 0 && spec.nodes >= 1, "a run needs work and nodes");
    interval_ = spec.interval_s > 0 ? std::min(spec.interval_s, spec.work_s) : spec.work_s;
    rate_per_s_ = spec.interruptions_per_node_hour / 3600;
  }

  RunOutcome run() {
    if (rate_per_s_ > 0) {
      for (int node = 0; node < spec_.nodes; ++node) schedule_interruption();
    }
    start_segment();
    sim_.run();
    return outcome_;
  }

 private:
  // Exponential inter-arrival time.
  double next_interruption_in_s() { return -std::log1p(-uniform(random_)) / rate_per_s_; }

  // Whether the interruption now is a spot preemption (else a fault).
  bool preempted() {
    if (causes_differ(spec_)) return uniform(cause_random_) < spec_.preemption_share;
    return spec_.preemption_share >= 1;
  }

  // The training done by now: that at the start of the current segment, and what the segment
  // has trained so far.
  double progress_now() const {
    if (!training_) return progress_s_;
    return progress_s_ + std::min(seconds(sim_.now() - segment_started_), segment_length_);
  }

  // An interruption drawn past half the clock's span (a rate near zero) is never reached: the run
  // has finished or been given up (kGiveUpAfterWorkTimes) long before.
  void schedule_interruption() {
    const double in_s = next_interruption_in_s();
    if (in_s > 0.5 * seconds(Picoseconds::max() - sim_.now())) return;
    sim_.call_after(ticks(in_s), [this] { interrupted(); });
  }

  void start_segment() {
    const double length = std::min(interval_, spec_.work_s - progress_s_);
    training_ = true;
    segment_started_ = sim_.now();
    segment_length_ = length;
    sim_.call_after(ticks(length), [this, e = epoch_, length] {
      if (e == epoch_) segment_trained(length);
    });
  }

  void segment_trained(double length) {
    training_ = false;
    progress_s_ += length;
    if (progress_s_ >= spec_.work_s) {
      finished_ = true;
      outcome_.wall_s = seconds(sim_.now());
      return;
    }
    const double snapshot = progress_s_;
    if (spec_.pauses_training) {
      sim_.call_after(ticks(spec_.checkpoint_write_s), [this, e = epoch_, snapshot] {
        if (e != epoch_) return;
        checkpoint_durable(snapshot);
        start_segment();
      });
      return;
    }
    // Asynchronous: training waits only for the previous write to finish, then goes on while
    // this one is written.
    const Picoseconds begin = std::max(sim_.now(), write_done_);
    write_done_ = begin + ticks(spec_.checkpoint_write_s);
    sim_.call_at(write_done_, [this, e = epoch_, snapshot] {
      if (e == epoch_) checkpoint_durable(snapshot);
    });
    sim_.call_at(begin, [this, e = epoch_] {
      if (e == epoch_) start_segment();
    });
  }

  void checkpoint_durable(double snapshot) {
    durable_s_ = snapshot;
    ++outcome_.checkpoints;
  }

  void interrupted() {
    if (finished_) return;
    if (seconds(sim_.now()) > kGiveUpAfterWorkTimes * spec_.work_s) {
      finished_ = true;
      ++epoch_;  // drops whatever is still scheduled
      outcome_.wall_s = std::numeric_limits<double>::infinity();
      return;
    }
    ++outcome_.interruptions;
    const bool preemption = preempted();
    if (preemption && saving_in_notice_) {
      // Another node's notice during the save: the save goes on (the later notice ends later),
      // and the one restart after it replaces both nodes.
      schedule_interruption();
      return;
    }
    const double unsaved = progress_now();
    ++epoch_;  // drops the interrupted segment, write, save or restart
    training_ = false;
    saving_in_notice_ = false;
    progress_s_ = durable_s_;
    write_done_ = sim_.now();
    schedule_interruption();  // the replacement node has its own clock
    const double restart_s =
        preemption ? spec_.restart_s : spec_.fault_restart_s.value_or(spec_.restart_s);
    if (preemption && spec_.preemption_saves && unsaved > durable_s_) {
      // Saved in the notice: durable once written (unless another interruption comes first),
      // then the restart.
      saving_in_notice_ = true;
      sim_.call_after(ticks(spec_.checkpoint_write_s), [this, e = epoch_, unsaved, restart_s] {
        if (e != epoch_) return;
        saving_in_notice_ = false;
        checkpoint_durable(unsaved);
        progress_s_ = unsaved;
        restart(restart_s);
      });
      return;
    }
    restart(restart_s);
  }

  // Training resumes after `restart_s` and the load of the last checkpoint, if any.
  void restart(double restart_s) {
    const double restart = restart_s + (durable_s_ > 0 ? spec_.checkpoint_load_s : 0);
    sim_.call_after(ticks(restart), [this, e = epoch_] {
      if (e == epoch_) start_segment();
    });
  }

  const RunSpec& spec_;
  std::mt19937_64 random_;        // interruption times
  std::mt19937_64 cause_random_;  // interruption causes, where they differ
  Simulation sim_;
  double interval_ = 0;
  double rate_per_s_ = 0;
  double progress_s_ = 0;  // training done at the start of the current segment
  double durable_s_ = 0;   // training saved in the last durable checkpoint
  bool training_ = false;  // a segment is being trained (not written, waited for or restarted)
  bool saving_in_notice_ = false;  // a preemption's checkpoint is being written in its notice
  Picoseconds segment_started_;
  double segment_length_ = 0;
  Picoseconds write_done_;
  uint64_t epoch_ = 0;  // incremented by each interruption
  bool finished_ = false;
  RunOutcome outcome_;
};

}  // namespace

namespace {

constexpr double kSecondsPerYear = 365.0 * 24 * 3600;

// Daly's expected time with two causes, by renewal and reward over the attempts at a segment of
// `segment_s` (tau training and its write), each interrupted at `rate` per second: an attempt
// lasts min(T, segment) for an exponential T, then, when interrupted, the restart of the cause
// (the time to get through a restart D that interruptions also hit: (e^(rate D) - 1) / rate).
// A fault (1 - p of them) or a preemption that does not save keeps no training of the attempt; a
// preemption that saves in its notice keeps what it trained (min(T, tau)) and pays the write
// before its restart. The run's wall time is work x E[attempt time] / E[training kept]:
//   E[time] = (1 - e^(-rate s)) (1 / rate + sum over causes of share x (e^(rate D) - 1) / rate)
//   E[kept] = (1 - saving share) tau e^(-rate s) + saving share (1 - e^(-rate tau)) / rate
// With one cause that saves nothing it is Daly's eq. 14 (expected_wall_s); with only saving
// preemptions the training never repeats: work x e^(rate D). `load_s`: the checkpoint load each
// restart pays (load_on_restart_s).
double mixed_expected_wall_s(const RunSpec& spec, double rate, double tau, double segment_s,
                             double load_s) {
  const double preempted = spec.preemption_share;
  const double fault_restart_s = spec.fault_restart_s.value_or(spec.restart_s) + load_s;
  const double preemption_restart_s =
      spec.restart_s + load_s + (spec.preemption_saves ? spec.checkpoint_write_s : 0);
  const double restarts = (1 - preempted) * std::expm1(rate * fault_restart_s) +
                          preempted * std::expm1(rate * preemption_restart_s);
  const double interrupted = -std::expm1(-rate * segment_s);  // an attempt's probability
  const double attempt_s = interrupted / rate * (1 + restarts);
  const double saving = spec.preemption_saves ? preempted : 0;
  const double kept_s =
      (1 - saving) * tau * std::exp(-rate * segment_s) - saving * std::expm1(-rate * tau) / rate;
  return kept_s > 0 ? spec.work_s * attempt_s / kept_s : std::numeric_limits<double>::infinity();
}

double job_rate_per_s(const RunSpec& spec) {
  return spec.interruptions_per_node_hour / 3600 * spec.nodes;
}

// The training between two checkpoints: the interval, or the whole run where none is written
// before its end.
double training_between_checkpoints_s(const RunSpec& spec) {
  return spec.interval_s > 0 && spec.interval_s < spec.work_s ? spec.interval_s : spec.work_s;
}

// The checkpoint load a restart pays: none where the run writes no checkpoint before its end (no
// interval shorter than its training, no save in a preemption's notice), as the simulation pays
// none before the first durable checkpoint: such a run starts again from scratch.
double load_on_restart_s(const RunSpec& spec) {
  const bool saves = training_between_checkpoints_s(spec) < spec.work_s ||
                     (spec.preemption_saves && spec.preemption_share > 0);
  return saves ? spec.checkpoint_load_s : 0;
}

// The wall time a run of `spec` expects: segments of interval_s training and a checkpoint write,
// each begun again after every interruption that hits it, behind a restart (Daly 2006, "A higher
// order estimate of the optimum checkpoint interval for restart dumps", FGCS 22(3), eq. 14:
// T = M e^(R/M) (e^((tau + delta)/M) - 1) T_s / tau, with M the mean time between failures).
// Where the causes differ (mixed_expected_wall_s) their mix. Conservative where writes overlap
// training. +infinity when it overflows.
double expected_wall_s(const RunSpec& spec) {
  const double rate = job_rate_per_s(spec);
  const double tau = training_between_checkpoints_s(spec);
  const double segment_s = tau + (tau < spec.work_s ? spec.checkpoint_write_s : 0);
  if (rate <= 0) return spec.work_s / tau * segment_s;
  if (causes_differ(spec) || (spec.preemption_share >= 1 && spec.preemption_saves)) {
    return mixed_expected_wall_s(spec, rate, tau, segment_s, load_on_restart_s(spec));
  }
  const double restart_s =
      spec.preemption_share >= 1 ? spec.restart_s : spec.fault_restart_s.value_or(spec.restart_s);
  return spec.work_s / tau * std::exp(rate * (restart_s + load_on_restart_s(spec))) / rate *
         std::expm1(rate * segment_s);
}

// Events one run of `spec` expects: its segments, and a restart and a segment done again per
// interruption over its expected wall time (at most the kGiveUpAfterWorkTimes it is simulated for).
double expected_events(const RunSpec& spec) {
  const double segments = spec.interval_s > 0 ? spec.work_s / spec.interval_s : 1;
  const double wall_s = std::min(expected_wall_s(spec), kGiveUpAfterWorkTimes * spec.work_s);
  return segments + 2 * job_rate_per_s(spec) * wall_s;
}

// Why `spec` is beyond what one run may simulate (run_problem's bounds, without the expected
// finish); "" when within.
std::string span_problem(const RunSpec& spec) {
  const std::string years = format_significant(spec.work_s / kSecondsPerYear, 3);
  if (spec.work_s > kMaxRunWorkSeconds) {
    return "a run of " + years + " years of training, more than the " +
           format_limit(kMaxRunWorkSeconds / kSecondsPerYear, 3) +
           " years the run simulation spans";
  }
  if (expected_events(spec) > kMaxRunEvents) {
    return "a run of " + years + " years of training expecting " +
           format_significant(expected_events(spec), 3) +
           " checkpoints and interruptions, more than the " + format_significant(kMaxRunEvents, 3) +
           " a run may simulate";
  }
  return "";
}

}  // namespace

std::string finish_problem(const RunSpec& spec) {
  if (expected_wall_s(spec) <= kGiveUpAfterWorkTimes * spec.work_s) return "";
  // Simulated, each trial ran to the give-up: 400 trials of 20 interruptions an hour took
  // minutes. Each cause is named: checkpoints of 144 s every 1 s of training alone expect 145
  // times the training, where an interruption every 264 days is no cause at all.
  const double rate = job_rate_per_s(spec);
  const double tau = training_between_checkpoints_s(spec);
  std::string causes;
  if (rate > 0) {
    causes = "an interruption every " + format_significant(1 / rate, 3) +
             " s against a restart of " +
             format_significant(spec.restart_s + load_on_restart_s(spec), 3) + " s and ";
  }
  causes += tau < spec.work_s ? "checkpoints of " + format_significant(spec.checkpoint_write_s, 3) +
                                    " s every " + format_significant(tau, 3) + " s of training"
                              : "no checkpoint";
  return "a run of " + format_significant(spec.work_s / kSecondsPerYear, 3) +
         " years of training not expected to finish: " + causes + " expect more than " +
         format_number(kGiveUpAfterWorkTimes) + " times the training in wall time";
}

std::string run_problem(const RunSpec& spec) {
  const std::string finish = finish_problem(spec);
  return finish.empty() ? span_problem(spec) : finish;
}

double largest_run_work_s(const RunSpec& spec) {
  const double events = expected_events(spec);
  return std::min(kMaxRunWorkSeconds,
                  events > 0 ? spec.work_s * kMaxRunEvents / events : kMaxRunWorkSeconds);
}

RunOutcome simulate_run(const RunSpec& spec, uint64_t seed) {
  CLUSTERSIM_CHECK(span_problem(spec).empty(), "a run beyond what the run simulation spans");
  return Run(spec, seed).run();
}

RunStatistics simulate_runs(const RunSpec& spec, int trials, uint64_t first_seed) {
  CLUSTERSIM_CHECK(trials >= 1, "at least one trial");
  std::vector<double> walls;
  RunStatistics stats;
  for (int i = 0; i < trials; ++i) {
    const RunOutcome outcome = simulate_run(spec, first_seed + static_cast<uint64_t>(i));
    walls.push_back(outcome.wall_s);
    stats.mean_s += outcome.wall_s / trials;
    stats.mean_interruptions += static_cast<double>(outcome.interruptions) / trials;
  }
  std::sort(walls.begin(), walls.end());
  const auto rank = [&](double p) {
    const auto index = static_cast<size_t>(std::ceil(p * static_cast<double>(trials))) - 1;
    return walls[std::min(index, walls.size() - 1)];
  };
  stats.p50_s = rank(0.50);
  stats.p95_s = rank(0.95);
  return stats;
}

}  // namespace clustersim
