// Expert loads under an unbalanced router and a capacity factor (expert_load.h).
#include "sim/workload/expert_load.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "sim/util/number_format.h"

namespace clustersim {

ExpertLoad expert_load(const schema::Transformer& t, const schema::ExpertRouting& routing,
                       int expert_parallel) {
  const double experts = t.moe().num_experts();
  const double local = experts / expert_parallel;
  // Loads over the mean: the hot expert's and each of the others'.
  const double hot = 1 + routing.max_violation();
  const double cold = experts > 1 ? (experts - hot) / (experts - 1) : hot;
  const double capacity = routing.has_capacity_factor() ? routing.capacity_factor()
                                                        : std::numeric_limits<double>::infinity();
  const bool padded = routing.pad_to_capacity();
  auto runs = [&](double load) { return padded ? capacity : std::min(load, capacity); };
  ExpertLoad l;
  l.dropped =
      (std::max(0.0, hot - capacity) + (experts - 1) * std::max(0.0, cold - capacity)) / experts;
  l.sent = padded ? capacity : 1 - l.dropped;
  // The rank of the hot expert is the busiest: no expert runs more than it.
  l.hot_expert = runs(hot);
  l.other_experts = runs(cold);
  l.busiest_rank = (l.hot_expert + (local - 1) * l.other_experts) / local;
  return l;
}

RoutingProblem expert_routing_problem(const schema::Transformer& t,
                                      const schema::ExpertRouting& routing) {
  if (!t.has_moe()) return {"", "the model has no mixture-of-experts layers"};
  const double most = static_cast<double>(t.moe().num_experts()) / t.moe().experts_per_token();
  if (routing.has_max_violation()) {
    const double v = routing.max_violation();
    if (!std::isfinite(v) || v < 0) return {"max_violation", "must be at least 0"};
    if (1 + v > most) {
      return {"max_violation",
              "the busiest expert would take more than every token (1 + max_violation at most "
              "num_experts / experts_per_token = " +
                  format_number(most) + ")"};
    }
  }
  if (routing.has_capacity_factor()) {
    const double c = routing.capacity_factor();
    if (!(std::isfinite(c) && c > 0)) return {"capacity_factor", "must be above 0"};
    // A capacity of more than every token caps nothing, and padded to it an expert ran 1e300
    // tokens: its memory printed "inf GiB short" (tools/input_audit.py).
    if (c > most) {
      return {"capacity_factor",
              "an expert's capacity would exceed every token (capacity_factor at most "
              "num_experts / experts_per_token = " +
                  format_number(most) + ")"};
    }
  }
  if (routing.pad_to_capacity() && !routing.has_capacity_factor()) {
    return {"pad_to_capacity", "needs capacity_factor"};
  }
  if (routing.consecutive_experts() &&
      (routing.has_max_violation() || routing.has_capacity_factor())) {
    return {"consecutive_experts",
            "is a perfectly balanced gate: not with max_violation or capacity_factor"};
  }
  return {};
}

}  // namespace clustersim
