// The time and cost of a whole training run of one configuration under one billing mode: steps
// from the job's budget, the simulated step time, checkpoints, and the work interruptions throw
// away (faults under every billing mode, preemptions on spot: interruption_rate.h), simulated
// over seeded trials. Pure functions of immutable inputs: safe to call from the threads of a
// parallel sweep.
//
// Billing: pay-as-you-go and spot pay per instance-hour of wall time, every node for the whole
// run (surviving nodes are held while an interrupted one is replaced). A subscription is paid for
// whole periods (730 hours a month, 8760 a year) at its per_hour rate (the period's price divided
// by its hours).
//
// Use: load_cost_model() once per scenario; per configuration that fits, plan_checkpoints() once
// (it searches the checkpoint interval of, and simulates, each distinct interruption rate's run
// once: on demand and both subscriptions see only faults), then run_cost() for each of the model's
// billing_modes (each at its own rate's interval).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/cost/checkpoint_cost.h"
#include "sim/cost/cost_model.h"
#include "sim/cost/interruption_rate.h"
#include "sim/cost/preemption_notice.h"
#include "sim/cost/run_simulation.h"
#include "sim/parallel/memory_model.h"
#include "sim/parallel/step_model.h"
#include "sim/sweep/configuration_space.h"

namespace clustersim {

// How often a run checkpoints under one billing mode.
struct CheckpointInterval {
  double interval_s = 0;  // training between checkpoints (the scenario's, or the optimum); 0: none
  double young_daly_s = 0;         // 0 when nothing interrupts the run
  bool simulated_optimum = false;  // interval_s found by simulation for the mode's own rate
  // Whether checkpoints are written at interval_s during the run: an interval shorter than the
  // run's training. Else the run writes none before its end (the final save users keep, which no
  // run's wall time counts), and an interruption throws the whole run's training away.
  bool periodic = false;
};

// The run of one configuration at one interruption rate: its checkpoint interval and simulated
// wall time, the same for every billing mode that sees that rate.
struct PlannedRun {
  InterruptionRate rate;
  double work_s = 0;  // steps x step time: no checkpoint, no interruption
  CheckpointInterval checkpoint;
  // Whether the run writes a checkpoint before its end (periodic ones, or saves in preemption
  // notices): only then does it hold its checkpoint volume, and pay for it, while it trains.
  bool writes_during_run = false;
  RunStatistics time;
  std::string unsimulated;      // as RunCost's
  bool never_finishes = false;  // as RunCost's
};

// What a checkpoint of one configuration costs in time, if it fits its volume, and its runs.
struct CheckpointPlan {
  bool enabled = false;  // false: the scenario sets no checkpoint
  CheckpointCost cost;
  // Non-empty when the configuration's checkpoint (a node's share of it on a block volume) does
  // not fit in its volume: why. Such a run is not costed (kStatusCheckpointOverVolume).
  std::string over_volume;
  // Whether a spot preemption saves a checkpoint in its notice (with a checkpoint only).
  NoticeSave notice_save;
  // One per distinct interruption rate of the model's billing modes, in their order; empty when
  // over_volume.
  std::vector<PlannedRun> runs;
};

// The checkpoint plan of `configuration`, whose per-GPU memory is `memory` and step `step`.
CheckpointPlan plan_checkpoints(const CostModel& model, const Configuration& configuration,
                                const MemoryEstimate& memory, const StepResult& step);

struct RunCost {
  schema::BillingMode billing = schema::BILLING_MODE_UNSPECIFIED;
  std::optional<UsedPrice> price;  // absent: no price for this mode (the costs stay 0)
  double per_instance_hour = 0;    // in the report currency
  double steps = 0;
  double tokens = 0;                  // transformers; 0 otherwise
  double work_s = 0;                  // steps x step time: no checkpoint, no preemption
  CheckpointInterval checkpoint;      // the interval this mode checkpoints at
  double interruptions_per_hour = 0;  // the job's (faults, and preemptions on spot)
  RunStatistics time;         // wall time of the run (one deterministic run unless interrupted)
  double instance_hours = 0;  // p50 wall time x nodes
  double billed_periods = 0;  // subscriptions: whole months or years paid
  // As PlannedRun's: false where the run writes no checkpoint before its end.
  bool writes_during_run = false;
  // The checkpoint volumes per hour of wall time, in the report currency (storage_cost.h);
  // absent: no checkpoint, or its tier is not priced (then the costs count no storage).
  std::optional<double> storage_per_hour;
  // storage_per_hour x the p50 wall time; part of cost_p50. 0 where the run writes no checkpoint
  // before its end: its final save needs the volume only once training is done.
  double storage_cost_p50 = 0;
  double storage_cost_p95 = 0;
  double cost_p50 = 0;  // what is paid for the run, in the report currency: instances + storage
  double cost_p95 = 0;
  double cost_per_step = 0;            // p50 cost / steps
  double cost_per_million_tokens = 0;  // transformers
  double cost_per_epoch = 0;           // epoch budgets
  // Non-empty when the run is beyond what the run simulation spans (run_simulation.h): why, and
  // the largest budget that would be simulated; the times and costs above then stay 0.
  std::string unsimulated;
  // Whether `unsimulated` is finish_problem's: the run is not expected to finish for its
  // interruptions and checkpoints, which a smaller budget does not cure.
  bool never_finishes = false;
};

// What the nodes of `configuration` cost per hour under `billing`, in the report currency: each
// pool's nodes at its instance's price, the nodes a pool already has at zero (OWNED_AT_ZERO) or
// at that price (OWNED_AT_OWN_RATE). nullopt when a node to be paid for has no price.
// Requires: configuration.pools (a configuration with pools).
std::optional<double> pools_price_per_hour(const CostModel& model,
                                           const Configuration& configuration,
                                           schema::BillingMode billing);

// Whether the cost of `configuration` is added up pool by pool (pools_price_per_hour): a mix,
// or a pool with nodes already owned; else every node at the instance's price.
inline bool priced_by_pool(const Configuration& configuration) {
  return configuration.is_mix() || configuration.has_owned_nodes();
}

// Requires: `checkpoints` planned for `configuration` without over_volume, `billing` one of
// model.billing_modes.
RunCost run_cost(const CostModel& model, const Configuration& configuration,
                 const CheckpointPlan& checkpoints, schema::BillingMode billing);

}  // namespace clustersim
