// Checks of deployment.expert_parallel and sweep.expert_parallel.
#include "sim/serve/expert_parallel_checks.h"

#include <algorithm>
#include <string>
#include <vector>

#include "sim/workload/inference_shape.h"

namespace clustersim {
namespace {

namespace s = schema;

std::string degree_list(const std::vector<int>& values) {
  std::string text;
  for (int v : values) text += (text.empty() ? "" : ", ") + std::to_string(v);
  return text;
}

}  // namespace

void check_expert_parallel(const FieldChecker& root, const LoadedServingScenario& loaded) {
  const s::ServingScenario& m = loaded.scenario();
  const s::Deployment& d = m.deployment();
  const s::ServingSweep& w = m.sweep();
  const FieldChecker deployment = root.child("deployment");
  const FieldChecker sweep = root.child("sweep");
  const bool swept = w.expert_parallel_size() > 0;
  if (!swept && !d.has_expert_parallel()) return;
  const FieldChecker& owner = swept ? sweep : deployment;
  // A swept axis replaces the deployment's degree, which must still be one.
  if (swept && d.has_expert_parallel()) deployment.at_least("expert_parallel", 1);
  if (!owner.at_least("expert_parallel", 1) || loaded.model == nullptr) return;
  // The tensor-parallel degrees of the colocated configurations, and of each pool.
  std::vector<int> colocated;
  if (!d.has_disaggregation() || w.replicas_size() > 0) {
    colocated.assign(w.tensor_parallel().begin(), w.tensor_parallel().end());
    if (colocated.empty()) colocated.push_back(d.has_tensor_parallel() ? d.tensor_parallel() : 1);
  }
  std::vector<std::pair<const char*, int>> pools;
  if (d.has_disaggregation()) {
    const s::ServingPool& p = d.disaggregation().prefill();
    const s::ServingPool& q = d.disaggregation().decode();
    pools = {{"prefill", p.has_tensor_parallel() ? p.tensor_parallel() : 1},
             {"decode", q.has_tensor_parallel() ? q.tensor_parallel() : 1}};
  }
  const int count = swept ? w.expert_parallel_size() : 1;
  for (int i = 0; i < count; ++i) {
    const int index = swept ? i : -1;
    const int ep = swept ? w.expert_parallel(i) : d.expert_parallel();
    std::string why = serving_expert_parallel_problem(loaded.model->transformer(), ep);
    if (why.empty() && !colocated.empty() &&
        std::none_of(colocated.begin(), colocated.end(), [&](int tp) { return tp % ep == 0; })) {
      why = std::to_string(ep) + " divides no tensor_parallel degree of the deployment (" +
            degree_list(colocated) + "): expert parallelism splits the tensor-parallel group";
    }
    for (const auto& [pool, tp] : pools) {
      if (why.empty() && tp % ep != 0) {
        why = std::to_string(ep) + " does not divide the " + pool + " pool's tensor_parallel (" +
              std::to_string(tp) + "): expert parallelism splits the tensor-parallel group";
      }
    }
    if (!why.empty()) owner.error("expert_parallel", why, index);
  }
}

}  // namespace clustersim
