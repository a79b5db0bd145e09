// The one configuration of a scenario against configuration_problem, reported at its field.
#include "sim/sweep/fixed_layout_check.h"

#include <string_view>

#include "sim/sweep/configuration_checks.h"
#include "sim/sweep/configuration_space.h"
#include "sim/sweep/runnable.h"

namespace clustersim {

void check_fixed_layout(const FieldChecker& root, const LoadedScenario& loaded) {
  const ConfigurationSpace space(loaded);
  if (space.size() != 1) return;
  const Configuration c = space.at(0);
  const ConfigurationProblem problem = configuration_problem(c, loaded);
  if (problem.empty()) return;
  // Down the field's path ("sweep.constraints.min_gpus") to the message that holds it.
  FieldChecker owner = root;
  std::string_view path = problem.field;
  for (size_t dot = path.find('.'); dot != std::string_view::npos; dot = path.find('.')) {
    owner = owner.child(path.substr(0, dot));
    path.remove_prefix(dot + 1);
  }
  owner.error(path,
              problem.reason + ": " +
                  (problem.detail.empty() ? "the scenario's one configuration is " + describe(c)
                                          : problem.detail));
}

}  // namespace clustersim
