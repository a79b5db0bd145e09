// Memory check, cluster construction and step simulation of one configuration; the fastest of
// several.
#include "sim/sweep/evaluation.h"

#include "sim/input/input_model.h"
#include "sim/net/topology_builder.h"
#include "sim/util/units.h"

namespace clustersim {

namespace s = schema;

Evaluator::Evaluator(const Catalog& catalog, const LoadedScenario& scenario)
    : catalog_(catalog),
      scenario_(scenario),
      runtime_(*catalog.runtimes().find("default")->value) {}

MemoryEstimate Evaluator::memory(const Configuration& c) const {
  // The provider's figure for the GPU memory when the catalog has one.
  const double capacity_gib = c.instance->has_gpu_memory_gib()
                                  ? c.instance->gpu_memory_gib()
                                  : catalog_.gpu_of(*c.instance).memory_gib();
  return estimate_memory(*scenario_.model, scenario_.scenario().job(), c.parallelism,
                         capacity_gib * kBytesPerGibibyte, runtime_memory(runtime_, c.parallelism));
}

Evaluation Evaluator::evaluate(const Configuration& c, Timeline* timeline) {
  const s::TrainingJob& job = scenario_.scenario().job();
  Evaluation e;
  e.memory = memory(c);
  const ComputeModel compute(catalog_.gpu_of(*c.instance), job.precision(), runtime_,
                             KernelSetting::kTrainingStep);
  e.calibrated = compute.calibrated();
  e.peak_flops = compute.peak_flops();
  if (!e.memory.fits()) return e;
  auto& topology = topologies_[{c.instance, c.nodes}];
  if (!topology) {
    TopologyOrError built = build_topology({c.instance, c.nodes, c.gpus_per_node,
                                            c.nvlink_domain_nodes, scenario_.fabric, std::nullopt},
                                           catalog_);
    if (!built.topology) {
      e.error = c.instance->name() + ": " + built.error;
      return e;
    }
    topology = std::move(built.topology);
  }
  e.step = simulate_step(*scenario_.model, job, c.parallelism, *topology, compute, timeline);
  if (job.has_dataloader()) {
    add_data_stall(estimate_input(input_setup(catalog_, scenario_, c, e.step->step_s)), &*e.step);
  }
  return e;
}

FastestEvaluation evaluate_fastest(const std::vector<Configuration>& configurations,
                                   Evaluator* evaluator) {
  FastestEvaluation best{nullptr, evaluator->evaluate(configurations.front())};
  if (best.evaluation.step) best.configuration = &configurations.front();
  for (size_t i = 1; i < configurations.size(); ++i) {
    Evaluation e = evaluator->evaluate(configurations[i]);
    if (e.step && (!best.configuration || e.step->step_s < best.evaluation.step->step_s)) {
      best = {&configurations[i], std::move(e)};
    }
  }
  return best;
}

}  // namespace clustersim
