// Memory check, cluster construction and step simulation of one configuration.
#include "sim/sweep/evaluation.h"

#include "sim/net/topology_builder.h"
#include "sim/util/units.h"

namespace clustersim {

namespace s = schema;

Evaluator::Evaluator(const Catalog& catalog, const LoadedScenario& scenario)
    : catalog_(catalog),
      scenario_(scenario),
      runtime_(*catalog.runtimes().find("default")->value) {}

Evaluation Evaluator::evaluate(const Configuration& c, Timeline* timeline) {
  const s::TrainingJob& job = scenario_.scenario().job();
  const s::Gpu& gpu = catalog_.gpu_of(*c.instance);
  const double capacity =
      (c.instance->has_gpu_memory_gib() ? c.instance->gpu_memory_gib() : gpu.memory_gib()) *
      kBytesPerGibibyte;
  Evaluation e;
  e.memory = estimate_memory(*scenario_.model, job, c.parallelism, capacity,
                             runtime_memory(runtime_, c.parallelism));
  const ComputeModel compute(gpu, job.precision(), runtime_);
  e.calibrated = compute.calibrated();
  if (!e.memory.fits()) return e;
  auto& topology = topologies_[{c.instance, c.nodes}];
  if (!topology) {
    TopologyOrError built =
        build_topology({c.instance, c.nodes, 0, scenario_.fabric, std::nullopt}, catalog_);
    if (!built.topology) {
      e.error = c.instance->name() + ": " + built.error;
      return e;
    }
    topology = std::move(built.topology);
  }
  e.step = simulate_step(*scenario_.model, job, c.parallelism, *topology, compute, timeline);
  return e;
}

}  // namespace clustersim
