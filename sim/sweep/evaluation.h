// Evaluates one configuration of a scenario: its memory first, then (when it fits) one simulated
// training step; and the fastest of several. Shared by `clustersim run` and `clustersim validate`.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/net/inter_pool_topology.h"
#include "sim/net/topology_builder.h"
#include "sim/parallel/memory_model.h"
#include "sim/parallel/pipeline_across_pools.h"
#include "sim/parallel/pool_step.h"
#include "sim/parallel/step_model.h"
#include "sim/sweep/configuration_space.h"

namespace clustersim {

struct Evaluation {
  MemoryEstimate memory;
  double peak_flops = 0;           // of the GPU at the job's precision, FLOP/s
  std::optional<StepResult> step;  // absent when the configuration does not fit (OOM)
  bool calibrated = true;          // every compute efficiency was fitted for this GPU
  std::string error;               // non-empty when the cluster could not be built
  std::optional<PoolStepResult> pools;  // a mix's step: micro-batches, waits, limiting pool
  // A pipeline across a mix's pools: its layers per stage, the limiting stage and pool, waits.
  std::optional<PipelineAcrossPoolsResult> stages;
};

// Builds and caches one topology per (instance, nodes); not thread-safe.
class Evaluator {
 public:
  // Requires: `catalog` has a runtime "default"; both outlive the evaluator.
  Evaluator(const Catalog& catalog, const LoadedScenario& scenario);

  // Per-GPU memory of `configuration` against the GPU memory its instance exposes; of a mix, the
  // pool's with the least room left (the smaller GPU); of a pipeline across pools, the stage's
  // with the least room on its pool's GPU.
  MemoryEstimate memory(const Configuration& configuration);
  // Per-GPU memory of each pool of a mix against its GPU's; of a pipeline across pools, of each
  // stage on its pool's GPU (the layers split by speed: an even split's when they cannot fit).
  // Requires: configuration.pools.
  std::vector<MemoryEstimate> pool_memory(const Configuration& configuration);

  // Memory, then (when it fits) one simulated step. `timeline`, when given, receives the spans.
  Evaluation evaluate(const Configuration& configuration, Timeline* timeline = nullptr);

 private:
  // The GPU memory `instance` exposes: the provider's figure when the catalog has one.
  double capacity_bytes(const schema::InstanceType& instance) const;
  // The runtime's memory on `instance`'s GPU under `parallelism` (memory_model.h).
  RuntimeMemory runtime_on(const schema::InstanceType& instance,
                           const schema::Parallelism& parallelism) const;
  MemoryEstimate memory_on(const schema::InstanceType& instance,
                           const schema::Parallelism& parallelism) const;
  // The cached topology of `nodes` of `instance`; null (and `error` set) when it cannot be built.
  const Topology* topology(const schema::InstanceType& instance, int nodes, int gpus_per_node,
                           int nvlink_domain_nodes, std::string* error);
  Evaluation evaluate_mix(const Configuration& configuration, Timeline* timeline);
  // The pools of a pipeline across them, each with its topology; empty (and `error` set) when
  // one cannot be built.
  std::vector<StagePool> stage_pools(const Configuration& configuration,
                                     std::vector<ComputeModel>* computes, std::string* error);
  // The configuration's layers per stage: given, or split by speed on `pools`; null when they
  // cannot fit, or are not given and there are no pools to time them on.
  std::optional<schema::Parallelism> stage_layout(const Configuration& configuration,
                                                  const std::vector<StagePool>& pools) const;
  // Each stage's memory on its pool's GPU under `layout` (null: the even split).
  std::vector<MemoryEstimate> stage_memory(const Configuration& configuration,
                                           const std::optional<schema::Parallelism>& layout) const;
  std::vector<MemoryEstimate> stage_memory(const Configuration& configuration);
  Evaluation evaluate_across_pools(const Configuration& configuration, Timeline* timeline);
  // Every pool of the mix joined into one cluster by `links`, pool `first` moved to the front.
  TopologyOrError joined_topology(const Configuration& configuration, const InterPoolLinks& links,
                                  size_t first = 0) const;

  const Catalog& catalog_;
  const LoadedScenario& scenario_;
  const schema::Runtime& runtime_;
  std::map<std::pair<const schema::InstanceType*, int>, std::unique_ptr<Topology>> topologies_;
};

struct FastestEvaluation {
  const Configuration* configuration = nullptr;  // the fastest that fits; null when none fits
  Evaluation evaluation;  // of that configuration, or of the first one when none fits
};

// The configuration with the shortest simulated step among those that fit (the earliest of equal
// ones): how a tuned run chose what its publication leaves out. Requires: `configurations` not
// empty.
FastestEvaluation evaluate_fastest(const std::vector<Configuration>& configurations,
                                   Evaluator* evaluator);

}  // namespace clustersim
