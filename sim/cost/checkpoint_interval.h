// The checkpoint interval that minimises the expected time of a run on preemptible instances:
// found by simulation, and Young's first-order formula to compare with.
#pragma once

#include <cstdint>

#include "sim/cost/run_simulation.h"

namespace clustersim {

// Young (1974) / Daly (2006) first order: sqrt(2 x checkpoint time / failure rate), the
// failure rate being the job's (per second, all nodes together). Requires: both > 0.
double young_daly_interval_s(double checkpoint_write_s, double failures_per_s);

// The job's failure rate: any node's preemption stops it.
double job_failures_per_s(const RunSpec& spec);

// The rate of the job's interruptions that lose training: all of them, less the preemptions that
// save a checkpoint in their notice (RunSpec.preemption_saves). Checkpoints guard against these.
double lossy_failures_per_s(const RunSpec& spec);

// The shortest interval the search below tries, as a fraction of Young/Daly's.
inline constexpr double kShortestSearchedIntervalFraction = 0.25;

// The interval with the least mean simulated wall time: a geometric grid from a quarter to four
// times the Young/Daly interval at the lossy rate, every point on the same seeds (common random
// numbers), refined by a parabola in log(interval) through the best point and its neighbours.
// `spec.interval_s` is ignored; a point whose run is not expected to finish (run_problem) loses
// unsimulated. Requires: a lossy rate > 0 and a checkpoint write time > 0; trials >= 1.
double simulated_optimal_interval_s(const RunSpec& spec, int trials, uint64_t first_seed);

}  // namespace clustersim
