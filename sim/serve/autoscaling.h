// A day of traffic served by a replica count scaled hour by hour: each hour gets the fewest
// replicas whose summed capacity (one replica's highest rate within the objectives, simulated)
// covers its rate; a baseline of replicas runs all day on a subscription (or any billing mode) and
// the hours above it buy more on demand (or spot). The baseline is the one of least daily cost
// unless the scenario fixes it; the day is also priced all on demand.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/serve/serving_cost.h"
#include "sim/serve/serving_evaluation.h"

namespace clustersim {

struct HourPlan {
  double rate_per_s = 0;
  int replicas = 0;
  int burst_nodes = 0;  // nodes bought for this hour beyond the baseline's
  double cost = 0;      // of the hour: baseline share plus burst
};

struct AutoscalingPlan {
  double replica_rate_per_s = 0;  // one replica's capacity within the objectives
  // It met them at the most the rate search tries (max_rate_scale_limit times the traffic's
  // rate): its capacity is at least replica_rate_per_s, and the hours may get more replicas
  // than they need.
  bool replica_rate_is_lower_bound = false;
  int baseline_replicas = 0;
  int baseline_nodes = 0;
  std::vector<HourPlan> hours;  // 24
  double day_cost = 0;             // baseline + burst, in the report currency
  double all_on_demand_cost = 0;   // the same replicas per hour, all on demand
};

// Requires: a scenario with autoscaling and an slo; `deployment` one of its configurations (its
// replica is the unit scaled); 1 <= samples <= kMaxTrafficSamples (its capacity is the highest
// rate every sample of the traffic meets, traffic_samples.h). Returns nullopt with `*why` set when a price is missing or one
// replica cannot meet the objectives at any rate.
std::optional<AutoscalingPlan> plan_autoscaling(const Catalog& catalog,
                                                const LoadedServingScenario& scenario,
                                                const ServingPrices& prices,
                                                const ServingConfiguration& deployment,
                                                int samples, std::string* why);

}  // namespace clustersim
