// Run time and cost from the step time, the budget, checkpoints, preemptions and prices.
#include "sim/cost/run_cost.h"

#include <cmath>
#include <string>

#include "sim/cost/checkpoint_interval.h"
#include "sim/cost/training_budget.h"

namespace clustersim {
namespace {

namespace s = schema;

// Hours of a subscription period: a month is a twelfth of a 365-day year, the convention of the
// providers' monthly price lists (AWS quotes 730 hours per month).
constexpr double kHoursPerMonth = 730;
constexpr double kHoursPerYear = 8760;

double period_hours(s::BillingMode billing) {
  return billing == s::SUBSCRIPTION_MONTHLY  ? kHoursPerMonth
         : billing == s::SUBSCRIPTION_YEARLY ? kHoursPerYear
                                             : 0;
}

RunSpec run_spec(const CostModel& model, const Configuration& configuration, const StepResult& step,
                 const CheckpointPlan& checkpoints, bool preemptible) {
  const s::Cost& settings = *model.settings;
  RunSpec spec;
  spec.work_s = budget_steps(model.scenario->scenario().job()) * step.step_s;
  // Owned nodes are not spot instances: only the rented ones are preempted.
  const int preemptible_nodes = preemptible ? configuration.rented_nodes() : 0;
  spec.nodes = preemptible_nodes > 0 ? preemptible_nodes : configuration.nodes;
  if (checkpoints.enabled) {
    spec.interval_s = checkpoints.interval_s;
    spec.checkpoint_write_s = checkpoints.cost.write_s;
    spec.checkpoint_load_s = checkpoints.cost.load_s;
    spec.pauses_training =
        !settings.checkpoint().has_pauses_training() || settings.checkpoint().pauses_training();
  }
  if (preemptible_nodes > 0) {
    spec.preemptions_per_instance_hour = settings.preemptions_per_instance_hour();
    spec.restart_s = settings.restart().acquisition_s() + settings.restart().container_start_s();
  }
  return spec;
}

}  // namespace

CheckpointPlan plan_checkpoints(const CostModel& model, const Configuration& configuration,
                                const MemoryEstimate& memory, const StepResult& step) {
  CheckpointPlan plan;
  const auto volume = model.checkpoint_volumes.find(configuration.instance->provider());
  if (volume == model.checkpoint_volumes.end()) return plan;
  const s::Scenario& scenario = model.scenario->scenario();
  const s::Checkpoint& settings = model.settings->checkpoint();
  plan.enabled = true;
  plan.over_volume =
      checkpoint_volume_problem(*model.scenario->model, scenario.job(), configuration.nodes,
                                *volume->second.tier, volume->second.capacity_gib, "");
  if (!plan.over_volume.empty()) return plan;
  plan.cost = checkpoint_cost(*model.scenario->model, scenario.job(), configuration, memory,
                              *volume->second.tier, volume->second.capacity_gib);
  RunSpec spot = run_spec(model, configuration, step, plan, true);
  const bool preempted = spot.preemptions_per_instance_hour > 0 && plan.cost.write_s > 0;
  if (preempted) {
    plan.young_daly_s = young_daly_interval_s(plan.cost.write_s, job_failures_per_s(spot));
  }
  if (settings.has_interval_s()) {
    plan.interval_s = settings.interval_s();
  } else if (preempted) {
    // The search's shortest interval must be simulable too; else Young/Daly's interval stands.
    spot.interval_s = plan.young_daly_s * kShortestSearchedIntervalFraction;
    plan.simulated_optimum = run_problem(spot).empty();
    plan.interval_s = plan.simulated_optimum
                          ? simulated_optimal_interval_s(spot, model.trials, model.seed)
                          : plan.young_daly_s;
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

RunCost run_cost(const CostModel& model, const Configuration& configuration, const StepResult& step,
                 const CheckpointPlan& checkpoints, s::BillingMode billing) {
  const s::TrainingJob& job = model.scenario->scenario().job();
  RunCost cost;
  cost.billing = billing;
  cost.steps = budget_steps(job);
  if (model.scenario->model->has_transformer()) cost.tokens = budget_tokens(job, cost.steps);
  const bool spot = billing == s::SPOT;
  const RunSpec spec = run_spec(model, configuration, step, checkpoints, spot);
  cost.work_s = spec.work_s;
  cost.unsimulated = run_problem(spec);
  if (!cost.unsimulated.empty()) {
    const double largest_steps = cost.steps * largest_run_work_s(spec) / spec.work_s;
    cost.unsimulated += "; at most " + describe_budget(job, largest_steps);
    return cost;
  }
  const bool random = spec.preemptions_per_instance_hour > 0;
  cost.time = simulate_runs(spec, random ? model.trials : 1, model.seed);
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
  cost.cost_p50 = paid(cost.time.p50_s);
  cost.cost_p95 = paid(cost.time.p95_s);
  if (period_hours(billing) > 0) {
    cost.billed_periods = std::ceil(cost.time.p50_s / 3600 / period_hours(billing));
  }
  cost.cost_per_step = cost.cost_p50 / cost.steps;
  if (cost.tokens > 0) cost.cost_per_million_tokens = cost.cost_p50 / (cost.tokens / 1e6);
  if (job.has_epochs()) cost.cost_per_epoch = cost.cost_p50 / job.epochs();
  return cost;
}

}  // namespace clustersim
