// Memory check, cluster construction and step simulation of one configuration; the fastest of
// several.
#include "sim/sweep/evaluation.h"

#include <algorithm>

#include "sim/hw/device_memory.h"
#include "sim/input/input_model.h"
#include "sim/net/inter_pool_topology.h"
#include "sim/net/topology_builder.h"

namespace clustersim {

namespace s = schema;

Evaluator::Evaluator(const Catalog& catalog, const LoadedScenario& scenario)
    : catalog_(catalog),
      scenario_(scenario),
      runtime_(*catalog.runtimes().find("default")->value) {}

double Evaluator::capacity_bytes(const s::InstanceType& instance) const {
  return allocatable_gpu_bytes(instance, catalog_.gpu_of(instance));
}

RuntimeMemory Evaluator::runtime_on(const s::InstanceType& instance,
                                    const s::Parallelism& parallelism) const {
  RuntimeMemory runtime = runtime_memory(runtime_, parallelism);
  runtime.fp8_gemm_any_layout = catalog_.gpu_of(instance).fp8_gemm_any_layout();
  return runtime;
}

MemoryEstimate Evaluator::memory_on(const s::InstanceType& instance,
                                    const s::Parallelism& parallelism) const {
  return estimate_memory(*scenario_.model, scenario_.scenario().job(), parallelism,
                         capacity_bytes(instance), runtime_on(instance, parallelism));
}

std::vector<MemoryEstimate> Evaluator::pool_memory(const Configuration& c) {
  if (c.parallelism.pool_placement() == s::PIPELINE_ACROSS_POOLS) return stage_memory(c);
  std::vector<MemoryEstimate> memory;
  for (const PoolShare& pool : *c.pools) memory.push_back(memory_on(*pool.instance, c.parallelism));
  return memory;
}

namespace {

// The estimate with the least room left. Requires: `memory` not empty.
MemoryEstimate least_room(const std::vector<MemoryEstimate>& memory) {
  return *std::min_element(memory.begin(), memory.end(), [](const auto& a, const auto& b) {
    return a.capacity_bytes - a.total_bytes() < b.capacity_bytes - b.total_bytes();
  });
}

}  // namespace

MemoryEstimate Evaluator::memory(const Configuration& c) {
  if (!c.is_mix()) return memory_on(*c.instance, c.parallelism);
  return least_room(pool_memory(c));
}

const Topology* Evaluator::topology(const s::InstanceType& instance, int nodes, int gpus_per_node,
                                    int nvlink_domain_nodes, std::string* error) {
  auto& topology = topologies_[{&instance, nodes}];
  if (!topology) {
    TopologyOrError built = build_topology(
        {&instance, nodes, gpus_per_node, nvlink_domain_nodes, scenario_.fabric, std::nullopt},
        catalog_);
    if (!built.topology) {
      *error = instance.name() + ": " + built.error;
      return nullptr;
    }
    topology = std::move(built.topology);
  }
  return topology.get();
}

std::vector<StagePool> Evaluator::stage_pools(const Configuration& c,
                                              std::vector<ComputeModel>* computes,
                                              std::string* error) {
  computes->clear();
  computes->reserve(c.pools->size());
  std::vector<StagePool> pools;
  for (const PoolShare& pool : *c.pools) {
    computes->emplace_back(catalog_.gpu_of(*pool.instance), scenario_.scenario().job().precision(),
                           runtime_, KernelSetting::kTrainingStep,
                           scenario_.scenario().job().fp8_recipe());
    const Topology* topology = this->topology(*pool.instance, pool.nodes, pool.gpus_per_node,
                                              pool.nvlink_domain_nodes, error);
    if (!topology) return {};
    pools.push_back(
        {topology, &computes->back(), pool.gpus() / c.stage_gpus(), capacity_bytes(*pool.instance)});
  }
  return pools;
}

std::optional<s::Parallelism> Evaluator::stage_layout(const Configuration& c,
                                                      const std::vector<StagePool>& pools) const {
  // Without a topology the layers are timed nowhere: only given ones resolve.
  if (pools.empty() && c.parallelism.stage_layers_size() == 0) return std::nullopt;
  return with_stage_layers(*scenario_.model, scenario_.scenario().job(), c.parallelism, pools,
                           runtime_memory(runtime_, c.parallelism));
}

std::vector<MemoryEstimate> Evaluator::stage_memory(const Configuration& c,
                                                    const std::optional<s::Parallelism>& layout) const {
  // Unresolved: the even split's memory.
  const s::Parallelism p =
      layout ? *layout
             : with_even_stage_layers(scenario_.model->transformer().num_layers(), c.parallelism);
  std::vector<MemoryEstimate> memory;
  const std::vector<const PoolShare*> pools = c.stage_pools();
  for (size_t stage = 0; stage < pools.size(); ++stage) {
    memory.push_back(estimate_stage_memory(*scenario_.model, scenario_.scenario().job(), p,
                                           static_cast<int>(stage),
                                           capacity_bytes(*pools[stage]->instance),
                                           runtime_on(*pools[stage]->instance, p)));
  }
  return memory;
}

std::vector<MemoryEstimate> Evaluator::stage_memory(const Configuration& c) {
  std::vector<ComputeModel> computes;
  std::string error;
  return stage_memory(c, stage_layout(c, stage_pools(c, &computes, &error)));
}

// The stages on their pools' topologies, the pipeline on the pools joined into one cluster.
Evaluation Evaluator::evaluate_across_pools(const Configuration& c, Timeline* timeline) {
  const s::TrainingJob& job = scenario_.scenario().job();
  Evaluation e;
  std::vector<ComputeModel> computes;
  const std::vector<StagePool> pools = stage_pools(c, &computes, &e.error);
  const std::optional<s::Parallelism> p = stage_layout(c, pools);
  e.memory = least_room(stage_memory(c, p));
  for (const ComputeModel& compute : computes) e.calibrated = e.calibrated && compute.calibrated();
  if (computes.empty()) return e;
  e.peak_flops = computes.front().peak_flops();
  if (pools.empty() || !e.memory.fits()) return e;
  if (!p) {  // the memory is the even split's, which then does not fit either
    e.error = "no split of the layers fits the stages' GPU memories";
    return e;
  }
  std::vector<PoolEndpoint> endpoints;
  for (const PoolShare& pool : *c.pools) endpoints.push_back({pool.instance, pool.nodes});
  const InterPoolLinks links = inter_pool_links(
      endpoints, scenario_.scenario().cluster().inter_pool(), scenario_.fabric, catalog_);
  if (!links.error.empty()) {
    e.error = links.error;
    return e;
  }
  // Only replica 0's sends between stages are simulated: over each pool's link it has its share.
  TopologyOrError joined = joined_topology(c, shared_by_replicas(links, p->data_parallel()));
  if (!joined.topology) {
    e.error = joined.error;
    return e;
  }
  e.stages =
      simulate_pipeline_across_pools(*scenario_.model, job, *p, pools, *joined.topology, timeline);
  e.step = e.stages->step;
  return e;
}

TopologyOrError Evaluator::joined_topology(const Configuration& c, const InterPoolLinks& links,
                                           size_t first) const {
  std::vector<ClusterSpec> specs;
  std::vector<double> uplinks;
  for (size_t k = 0; k < c.pools->size(); ++k) {
    const size_t i = k == 0 ? first : (k <= first ? k - 1 : k);
    const PoolShare& pool = (*c.pools)[i];
    specs.push_back({pool.instance, pool.nodes, pool.gpus_per_node, pool.nvlink_domain_nodes,
                     scenario_.fabric, std::nullopt});
    uplinks.push_back(links.bytes_per_s[i]);
  }
  return build_joined_topology(specs, uplinks, catalog_);
}

Evaluation Evaluator::evaluate(const Configuration& c, Timeline* timeline) {
  if (c.is_mix() && c.parallelism.pool_placement() == s::PIPELINE_ACROSS_POOLS) {
    return evaluate_across_pools(c, timeline);
  }
  if (c.is_mix()) return evaluate_mix(c, timeline);
  const s::TrainingJob& job = scenario_.scenario().job();
  Evaluation e;
  e.memory = memory(c);
  const ComputeModel compute(catalog_.gpu_of(*c.instance), job.precision(), runtime_,
                             KernelSetting::kTrainingStep, job.fp8_recipe());
  e.calibrated = compute.calibrated();
  e.peak_flops = compute.peak_flops();
  if (!e.memory.fits()) return e;
  const Topology* topology =
      this->topology(*c.instance, c.nodes, c.gpus_per_node, c.nvlink_domain_nodes, &e.error);
  if (!topology) return e;
  e.step = simulate_step(*scenario_.model, job, c.parallelism, *topology, compute, timeline);
  if (job.has_dataloader()) {
    add_data_stall(estimate_input(input_setup(catalog_, scenario_, c, e.step->step_s)), &*e.step,
                   timeline);
  }
  return e;
}

// Each pool on its own topology (under ZeRO-3 on all the pools joined, its own first), the pools
// joined by the inter-pool network (pool_step.h). A mix's peak is its first pool's GPU's; its MFU
// counts every pool's.
Evaluation Evaluator::evaluate_mix(const Configuration& c, Timeline* timeline) {
  const s::TrainingJob& job = scenario_.scenario().job();
  const s::Parallelism& p = c.parallelism;
  Evaluation e;
  e.memory = memory(c);
  std::vector<ComputeModel> computes;
  computes.reserve(c.pools->size());
  for (const PoolShare& pool : *c.pools) {
    computes.emplace_back(catalog_.gpu_of(*pool.instance), job.precision(), runtime_,
                          KernelSetting::kTrainingStep, job.fp8_recipe());
    e.calibrated = e.calibrated && computes.back().calibrated();
  }
  e.peak_flops = computes.front().peak_flops();
  if (!e.memory.fits()) return e;
  std::vector<PoolRun> runs;
  std::vector<PoolEndpoint> endpoints;
  for (size_t i = 0; i < c.pools->size(); ++i) {
    const PoolShare& pool = (*c.pools)[i];
    const Topology* topology = this->topology(*pool.instance, pool.nodes, pool.gpus_per_node,
                                              pool.nvlink_domain_nodes, &e.error);
    if (!topology) return e;
    runs.push_back(
        {topology, &computes[i], *pool_replicas(pool, p), nullptr, pool.instance->name()});
    endpoints.push_back({pool.instance, pool.nodes});
  }
  const InterPoolLinks links = inter_pool_links(
      endpoints, scenario_.scenario().cluster().inter_pool(), scenario_.fabric, catalog_);
  if (!links.error.empty()) {
    e.error = links.error;
    return e;
  }
  // ZeRO-3's groups span the pools: each pool's pipeline runs on them all, itself first.
  std::vector<std::unique_ptr<Topology>> joined;
  for (size_t i = 0; p.zero_stage() == 3 && i < runs.size(); ++i) {
    TopologyOrError built = joined_topology(c, links, i);
    if (!built.topology) {
      e.error = built.error;
      return e;
    }
    joined.push_back(std::move(built.topology));
    runs[i].joined = joined.back().get();
  }
  const std::unique_ptr<Topology> between = inter_pool_topology(links);
  e.pools = simulate_pool_step(*scenario_.model, job, p, runs, *between, std::nullopt, timeline);
  e.step = e.pools->step;
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
