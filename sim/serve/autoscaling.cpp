// Hourly replica counts and the day's cost of an autoscaled deployment.
#include "sim/serve/autoscaling.h"

#include <algorithm>
#include <cmath>

#include "sim/io/scenario_loader.h"
#include "sim/serve/traffic.h"
#include "sim/serve/traffic_samples.h"
#include "sim/util/number_format.h"

namespace clustersim {
namespace {

namespace s = schema;

// Nodes `replicas` replicas of `unit` take.
int nodes_for(ServingConfiguration unit, int replicas) {
  if (replicas <= 0) return 0;
  unit.replicas = replicas;
  return unit.nodes();
}

}  // namespace

std::optional<AutoscalingPlan> plan_autoscaling(const Catalog& catalog,
                                                const LoadedServingScenario& scenario,
                                                const ServingPrices& prices,
                                                const ServingConfiguration& deployment,
                                                int samples, std::string* why) {
  const s::Autoscaling& a = scenario.scenario().autoscaling();
  const s::BillingMode baseline_billing =
      a.has_baseline_billing() ? a.baseline_billing() : s::SUBSCRIPTION_MONTHLY;
  const s::BillingMode burst_billing = a.has_burst_billing() ? a.burst_billing() : s::ON_DEMAND;
  ServingConfiguration unit = deployment;
  unit.replicas = 1;
  const std::optional<double> base_node = deployment_per_hour(prices, unit, baseline_billing);
  const std::optional<double> burst_node = deployment_per_hour(prices, unit, burst_billing);
  const std::optional<double> demand_node = deployment_per_hour(prices, unit, s::ON_DEMAND);
  if (!base_node || !burst_node || !demand_node) {
    *why = "no " + s::BillingMode_Name(!base_node ? baseline_billing
                                       : !burst_node ? burst_billing
                                                     : s::ON_DEMAND) +
           " price for \"" + unit.instance->name() + "\"";
    return std::nullopt;
  }
  // Prices per node-hour (one replica's price over its nodes).
  const double nodes_per_unit = unit.nodes();
  const double base = *base_node / nodes_per_unit, burst = *burst_node / nodes_per_unit,
               demand = *demand_node / nodes_per_unit;
  SampledServingEvaluator evaluator(catalog, scenario, samples);
  AutoscalingPlan plan;
  const s::Traffic& traffic = scenario.scenario().traffic();
  const double scale = evaluator.max_rate_scale(unit);
  plan.replica_rate_per_s = scale * mean_rate_per_s(traffic, scenario.trace);
  plan.replica_rate_is_lower_bound = scale == max_rate_scale_limit(traffic);
  if (plan.replica_rate_per_s <= 0) {
    *why = "one replica meets the objectives at no rate";
    return std::nullopt;
  }
  // At most kMaxConfigurationGpus GPUs in any hour, as for any deployment.
  const int64_t gpus_per_replica = unit.replica_gpus();
  std::vector<int> replicas;
  for (int h = 0; h < a.hourly_rate_per_s_size(); ++h) {
    const double rate = a.hourly_rate_per_s(h);
    const double needed = std::ceil(rate / plan.replica_rate_per_s - 1e-9);
    if (needed * gpus_per_replica > kMaxConfigurationGpus) {
      *why = "hour " + std::to_string(h) + "'s " + format_number(rate) + " req/s need " +
             format_significant(needed, 3) + " replicas of " +
             std::to_string(gpus_per_replica) + " GPUs, more than the " +
             std::to_string(kMaxConfigurationGpus) + " GPUs a deployment may have";
      return std::nullopt;
    }
    replicas.push_back(static_cast<int>(needed));
  }
  const int peak = *std::max_element(replicas.begin(), replicas.end());
  const auto day_cost = [&](int baseline) {
    double cost = 24 * base * nodes_for(unit, baseline);
    for (int r : replicas) {
      cost += burst * std::max(0, nodes_for(unit, r) - nodes_for(unit, baseline));
    }
    return cost;
  };
  int chosen = a.has_baseline_replicas() ? a.baseline_replicas() : 0;
  if (!a.has_baseline_replicas()) {
    for (int b = 1; b <= peak; ++b) {
      if (day_cost(b) < day_cost(chosen)) chosen = b;
    }
  }
  plan.baseline_replicas = chosen;
  plan.baseline_nodes = nodes_for(unit, chosen);
  plan.day_cost = day_cost(chosen);
  for (size_t h = 0; h < replicas.size(); ++h) {
    HourPlan hour;
    hour.rate_per_s = a.hourly_rate_per_s(static_cast<int>(h));
    hour.replicas = replicas[h];
    hour.burst_nodes = std::max(0, nodes_for(unit, replicas[h]) - plan.baseline_nodes);
    hour.cost = base * plan.baseline_nodes + burst * hour.burst_nodes;
    plan.all_on_demand_cost += demand * nodes_for(unit, replicas[h]);
    plan.hours.push_back(hour);
  }
  return plan;
}

}  // namespace clustersim
