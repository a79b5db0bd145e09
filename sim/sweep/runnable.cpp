// Streaming through a configuration space for one that runs.
#include "sim/sweep/runnable.h"

#include "sim/parallel/memory_model.h"
#include "sim/sweep/configuration_checks.h"
#include "sim/sweep/configuration_labels.h"
#include "sim/sweep/evaluation.h"
#include "sim/sweep/result_row.h"
#include "sim/util/number_format.h"
#include "sim/util/units.h"

namespace clustersim {

std::string Runnability::reason() const {
  if (runs) return "";
  if (valid == 0) {
    std::string text = "no valid configuration among " + std::to_string(candidates) + ":";
    for (const auto& [why, count] : pruned) {
      text += "\n  " + std::to_string(count) + " pruned: " + why;
    }
    return text;
  }
  return "none of the " + std::to_string(valid) +
         " valid configurations fits in GPU memory; the closest, " + describe(*closest) +
         ", is " + format_fixed(closest_missing_bytes / kBytesPerGibibyte, 1) + " GiB short";
}

Runnability check_runnable(const Catalog& catalog, const LoadedScenario& scenario) {
  const ConfigurationSpace space(scenario);
  Evaluator evaluator(catalog, scenario);
  Runnability r;
  r.candidates = space.size();
  for (int64_t i = 0; i < space.size(); ++i) {
    Configuration c = space.at(i);
    const ConfigurationProblem problem = configuration_problem(c, scenario);
    if (!problem.empty()) {
      ++r.pruned[problem.reason];
      continue;
    }
    ++r.valid;
    const MemoryEstimate memory = evaluator.memory(c);
    if (memory.fits()) {
      r.runs = true;
      r.closest.reset();
      return r;
    }
    if (!r.closest || memory.missing_bytes() < r.closest_missing_bytes) {
      r.closest = std::move(c);
      r.closest_missing_bytes = memory.missing_bytes();
    }
  }
  return r;
}

std::string describe(const Configuration& c) {
  return describe_configuration(configuration_row(c));
}

}  // namespace clustersim
