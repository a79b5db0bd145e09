// Whole training runs on instances that can be interrupted (spot preemptions, hardware and software
// faults), simulated on the engine: every node is interrupted as a Poisson process; an
// interruption of any node stops the job, which loses the work since its last durable checkpoint
// and pays the restart (replacement, container start, checkpoint load) before training resumes.
// Each interruption is a preemption or a fault, drawn by its share of the rate: a preemption may
// save a checkpoint in its notice (then it loses no work), and a fault may restart differently.
// Each trial is seeded explicitly: the same seed gives the same run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace clustersim {

struct RunSpec {
  double work_s = 0;      // training time of the whole budget, without checkpoints or interruptions
  double interval_s = 0;  // training between checkpoints; 0 or >= work_s: no checkpoint
  double checkpoint_write_s = 0;
  bool pauses_training = true;   // false: the write overlaps training (needs the previous one done)
  // Acquisition + container start after a preemption, and after a fault unless fault_restart_s.
  double restart_s = 0;
  std::optional<double> fault_restart_s;  // after a fault, where it differs
  double checkpoint_load_s = 0;           // paid on a restart once a checkpoint exists
  // The nodes that can be interrupted, each at interruptions_per_node_hour (a job whose nodes
  // differ in rate takes their mean: only the job's total rate matters to a Poisson process).
  int nodes = 1;
  double interruptions_per_node_hour = 0;
  // The share of the interruptions that are spot preemptions, the rest being faults (a Poisson
  // process thinned: each interruption is a preemption with this probability). Drawn from a
  // stream of the seed's own, and only where the causes differ in what they cost, so that the
  // interruption times are the same whatever the causes cost.
  double preemption_share = 0;
  // A preemption saves a checkpoint in its notice (the caller found that one write fits in it):
  // it loses no training, and pays the write before its restart. Another node's preemption during
  // that save joins it (one restart replaces both); a fault during it loses it. A preemption that
  // comes while nothing is unsaved (during a restart) pays the restart alone. Faults give no
  // notice.
  bool preemption_saves = false;
};

struct RunOutcome {
  // From the first step to the end of the last; +infinity when interruptions come so often that
  // the run is still unfinished after 100 times its work.
  double wall_s = 0;
  int interruptions = 0;
  int checkpoints = 0;  // written to the end (durable)
};

// The most training (RunSpec.work_s) a run may hold: the run's clock (one tick a microsecond, a
// 64-bit count) must span 100 times it, when a run that makes no progress is given up.
inline constexpr double kMaxRunWorkSeconds = 9.2e18 / 1e6 / 100;  // about 2,900 years
// The most events (segments, checkpoints, interruptions, restarts) one run may expect: bounds the
// work of a configuration's cost (trials x this, times the interval search).
inline constexpr double kMaxRunEvents = 1e7;
// The most trials of a spot configuration (cost.trials, --trials): 250 times the default 400.
inline constexpr int kMaxTrials = 100000;
// The longest restart after an interruption (restart.acquisition_s, restart.container_start_s): a
// month; a restart must fit the run's clock beside the training.
inline constexpr double kMaxRestartSeconds = 30 * 86400.0;
// The interruption rates a scenario may state (cost.preemptions_per_instance_hour,
// cost.interruptions_per_node_hour) besides 0: below one a node-hour per billion the optimal
// checkpoint interval runs to dozens of digits (1e-300 printed a 300-digit one), above one a second
// no run gets any work done.
inline constexpr double kMinPreemptionsPerInstanceHour = 1e-9;
inline constexpr double kMaxPreemptionsPerInstanceHour = 3600;

// Why `spec` is not simulated: its expected wall time (Daly's, restarts and checkpoints included)
// beyond the 100 times its work a run is given up at, its work beyond kMaxRunWorkSeconds, or more
// than kMaxRunEvents expected events; "" when it is.
std::string run_problem(const RunSpec& spec);
// The first of those alone: why a run like `spec` is not expected to finish (each cause that
// lengthens it: interruptions and their restarts, checkpoint writes); "" when it is. A smaller
// budget does not cure it where the run writes checkpoints: its wall time is in proportion to its
// work.
std::string finish_problem(const RunSpec& spec);
// The most work a run like `spec` (same nodes, rates, interval) may hold within those bounds.
double largest_run_work_s(const RunSpec& spec);

// One run. Deterministic in `seed`. Requires: work_s > 0, nodes >= 1, every time >= 0, work and
// expected events within kMaxRunWorkSeconds and kMaxRunEvents (run_problem's bounds; a run not
// expected to finish is simulated to its give-up).
RunOutcome simulate_run(const RunSpec& spec, uint64_t seed);

struct RunStatistics {
  double mean_s = 0;
  double p50_s = 0;  // nearest-rank percentiles of the wall time
  double p95_s = 0;
  double mean_interruptions = 0;
};

// `trials` runs seeded first_seed, first_seed + 1, ... Requires: trials >= 1.
RunStatistics simulate_runs(const RunSpec& spec, int trials, uint64_t first_seed);

}  // namespace clustersim
