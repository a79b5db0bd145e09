// Run time and cost from the step time, the budget, checkpoints, interruptions and prices.
#include "sim/cost/run_cost.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/cost/checkpoint_interval.h"
#include "sim/cost/interruption_rate.h"
#include "sim/cost/storage_cost.h"
#include "sim/cost/training_budget.h"
#include "sim/util/check.h"

namespace clustersim {
namespace {

namespace s = schema;

// Hours of a subscription period: a month as the providers' monthly price lists count it
// (kHoursPerMonth), a year of 365 days.
constexpr double kHoursPerYear = 8760;

double period_hours(s::BillingMode billing) {
  return billing == s::SUBSCRIPTION_MONTHLY  ? kHoursPerMonth
         : billing == s::SUBSCRIPTION_YEARLY ? kHoursPerYear
                                             : 0;
}

double restart_s(const s::Restart& restart) {
  return restart.acquisition_s() + restart.container_start_s();
}

// The run at `rate`, its checkpoint interval left to the caller.
RunSpec run_spec(const CostModel& model, const StepResult& step, const CheckpointPlan& checkpoints,
                 const InterruptionRate& rate) {
  const s::Cost& settings = *model.settings;
  RunSpec spec;
  spec.work_s = budget_steps(model.scenario->scenario().job()) * step.step_s;
  spec.nodes = rate.nodes;
  if (checkpoints.enabled) {
    spec.checkpoint_write_s = checkpoints.cost.write_s;
    spec.checkpoint_load_s = checkpoints.cost.load_s;
    spec.pauses_training =
        !settings.checkpoint().has_pauses_training() || settings.checkpoint().pauses_training();
  }
  if (rate.per_node_hour > 0) {
    spec.interruptions_per_node_hour = rate.per_node_hour;
    spec.restart_s = restart_s(settings.restart());
    if (settings.has_restart_after_fault()) {
      spec.fault_restart_s = restart_s(settings.restart_after_fault());
    }
    spec.preemption_share = rate.preemption_share;
    spec.preemption_saves = checkpoints.notice_save.fits;
  }
  return spec;
}

// The interval `spec`'s run checkpoints at: the scenario's, else the simulated optimum for the
// run's own interruption rate (Young/Daly's where the search's shortest interval is not
// simulable); none when nothing interrupts it, or nothing that loses training (every interruption
// a preemption that saves in its notice). Young/Daly's beside it to compare.
CheckpointInterval checkpoint_interval(const CostModel& model, RunSpec spec) {
  const s::Checkpoint& settings = model.settings->checkpoint();
  CheckpointInterval chosen;
  // Interruptions that lose training (all but the preemptions that save in their notice).
  const bool interrupted = spec.interruptions_per_node_hour > 0 && spec.checkpoint_write_s > 0 &&
                           lossy_failures_per_s(spec) > 0;
  if (interrupted) {
    chosen.young_daly_s =
        young_daly_interval_s(spec.checkpoint_write_s, lossy_failures_per_s(spec));
  }
  if (settings.has_interval_s()) {
    chosen.interval_s = settings.interval_s();
  } else if (interrupted) {
    spec.interval_s = chosen.young_daly_s * kShortestSearchedIntervalFraction;
    chosen.simulated_optimum = run_problem(spec).empty();
    chosen.interval_s = chosen.simulated_optimum
                            ? simulated_optimal_interval_s(spec, model.trials, model.seed)
                            : chosen.young_daly_s;
  }
  return chosen;
}

// The run at `rate`: its interval (when it checkpoints) and its simulated wall time.
PlannedRun planned_run(const CostModel& model, const StepResult& step,
                       const CheckpointPlan& checkpoints, const InterruptionRate& rate) {
  RunSpec spec = run_spec(model, step, checkpoints, rate);
  PlannedRun run;
  run.rate = rate;
  if (checkpoints.enabled) {
    run.checkpoint = checkpoint_interval(model, spec);
    spec.interval_s = run.checkpoint.interval_s;
    run.checkpoint.periodic = spec.interval_s > 0 && spec.interval_s < spec.work_s;
    run.writes_during_run =
        run.checkpoint.periodic || (spec.preemption_saves && spec.preemption_share > 0);
  }
  run.work_s = spec.work_s;
  run.unsimulated = run_problem(spec);
  if (!run.unsimulated.empty()) {
    // The largest budget that would be simulated, where the budget is what is too large; a run
    // not expected to finish is no run of too large a budget (its 2e10 tokens were followed by
    // "at most 7.73e+11 tokens").
    run.never_finishes = !finish_problem(spec).empty();
    if (!run.never_finishes) {
      const s::TrainingJob& job = model.scenario->scenario().job();
      const double steps = budget_steps(job);
      run.unsimulated += "; at most " + describe_budget(job, steps * largest_run_work_s(spec) /
                                                                  spec.work_s);
    }
    return run;
  }
  const bool random = spec.interruptions_per_node_hour > 0;
  run.time = simulate_runs(spec, random ? model.trials : 1, model.seed);
  return run;
}

// The run of `plan` at `rate`; null when the plan has none.
const PlannedRun* planned_run_at(const CheckpointPlan& plan, const InterruptionRate& rate) {
  const auto run = std::find_if(plan.runs.begin(), plan.runs.end(),
                                [&](const PlannedRun& planned) { return planned.rate == rate; });
  return run == plan.runs.end() ? nullptr : &*run;
}

}  // namespace

CheckpointPlan plan_checkpoints(const CostModel& model, const Configuration& configuration,
                                const MemoryEstimate& memory, const StepResult& step) {
  CheckpointPlan plan;
  if (const CheckpointVolume* volume = checkpoint_volume(model, configuration)) {
    const s::Scenario& scenario = model.scenario->scenario();
    plan.enabled = true;
    plan.over_volume =
        checkpoint_volume_problem(*model.scenario->model, scenario.job(), configuration.nodes,
                                  checkpoints_kept(model.settings->checkpoint()), *volume->tier,
                                  volume->volume->capacity_gib(), "");
    if (!plan.over_volume.empty()) return plan;
    plan.cost = checkpoint_cost(*model.scenario->model, scenario.job(), configuration, memory,
                                *volume->tier, *volume->volume);
    plan.notice_save = notice_save(model, configuration.instance->provider(), plan.cost.write_s);
  }
  for (s::BillingMode billing : model.billing_modes) {
    const InterruptionRate rate = interruption_rate(*model.settings, configuration, billing);
    if (!planned_run_at(plan, rate)) plan.runs.push_back(planned_run(model, step, plan, rate));
  }
  return plan;
}

std::optional<double> pools_price_per_hour(const CostModel& model, const Configuration& c,
                                           s::BillingMode billing) {
  double per_hour = 0;
  for (const PoolShare& pool : *c.pools) {
    const int paid = pool.owned_at_own_rate ? pool.nodes : pool.nodes - pool.owned_nodes;
    if (paid == 0) continue;
    const std::optional<UsedPrice> price = model.prices.price(*pool.instance, billing);
    if (!price) return std::nullopt;
    per_hour += paid * report_per_hour(model, *price);
  }
  return per_hour;
}

RunCost run_cost(const CostModel& model, const Configuration& configuration,
                 const CheckpointPlan& checkpoints, s::BillingMode billing) {
  const s::TrainingJob& job = model.scenario->scenario().job();
  RunCost cost;
  cost.billing = billing;
  cost.steps = budget_steps(job);
  if (model.scenario->model->has_transformer()) cost.tokens = budget_tokens(job, cost.steps);
  const InterruptionRate rate = interruption_rate(*model.settings, configuration, billing);
  const PlannedRun* run = planned_run_at(checkpoints, rate);
  CLUSTERSIM_CHECK(run != nullptr, "a billing mode the plan has no run for");
  cost.interruptions_per_hour = rate.nodes * rate.per_node_hour;
  cost.checkpoint = run->checkpoint;
  cost.writes_during_run = run->writes_during_run;
  cost.work_s = run->work_s;
  cost.unsimulated = run->unsimulated;
  cost.never_finishes = run->never_finishes;
  if (!cost.unsimulated.empty()) return cost;
  cost.time = run->time;
  cost.instance_hours = cost.time.p50_s / 3600 * configuration.nodes;
  cost.price = model.prices.price(*configuration.instance, billing);
  std::optional<double> cluster_per_hour;
  if (priced_by_pool(configuration)) {
    cluster_per_hour = pools_price_per_hour(model, configuration, billing);
    if (!cluster_per_hour) cost.price.reset();
  }
  if (!cost.price) return cost;
  cost.per_instance_hour = cluster_per_hour ? *cluster_per_hour / configuration.nodes
                                            : report_per_hour(model, *cost.price);
  const auto paid = [&](double wall_s) {
    const double hours = wall_s / 3600;
    const double period = period_hours(billing);
    const double billed = period > 0 ? std::ceil(hours / period) * period : hours;
    if (cluster_per_hour) return billed * *cluster_per_hour;
    return billed * configuration.nodes * cost.per_instance_hour;
  };
  cost.storage_per_hour = checkpoint_storage_per_hour(model, configuration);
  if (cost.storage_per_hour && cost.writes_during_run) {
    cost.storage_cost_p50 = *cost.storage_per_hour * cost.time.p50_s / 3600;
    cost.storage_cost_p95 = *cost.storage_per_hour * cost.time.p95_s / 3600;
  }
  cost.cost_p50 = paid(cost.time.p50_s) + cost.storage_cost_p50;
  cost.cost_p95 = paid(cost.time.p95_s) + cost.storage_cost_p95;
  if (period_hours(billing) > 0) {
    cost.billed_periods = std::ceil(cost.time.p50_s / 3600 / period_hours(billing));
  }
  cost.cost_per_step = cost.cost_p50 / cost.steps;
  if (cost.tokens > 0) cost.cost_per_million_tokens = cost.cost_p50 / (cost.tokens / 1e6);
  if (job.has_epochs()) cost.cost_per_epoch = cost.cost_p50 / job.epochs();
  return cost;
}

}  // namespace clustersim
