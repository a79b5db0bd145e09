// One training step of a mix (a cluster made of pools of different GPUs): every pool runs
// data-parallel replicas of the same tensor x context x pipeline layout on its own GPUs; the
// global batch's micro-batches are split over the replicas by their speed (the fastest replicas
// take the most, so that all finish together as far as whole micro-batches allow); each pool's
// replicas run their pipeline and reduce their gradients among themselves on the pool's network
// (pipeline_simulation.h); then, on the engine, once every pool has its sum, the pools all-reduce
// the gradients over the network between them (net/inter_pool_topology.h) and each steps its
// optimizer. The step is set by the slowest pool; the others wait for it.
//
// Tensor parallelism stays inside a pool (its NVLink domains); pipeline stages do not cross pools
// here (pipeline_across_pools.h places the stages across them instead). A mixture-of-experts
// model's expert-parallel groups stay inside a pool too, each pool's replicas holding every
// expert: between the pools every expert's gradients are all-reduced beside the dense ones.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/hw/compute_model.h"
#include "sim/io/schema/job.pb.h"
#include "sim/io/schema/model.pb.h"
#include "sim/io/schema/parallelism.pb.h"
#include "sim/net/topology.h"
#include "sim/parallel/step_model.h"

namespace clustersim {

struct PoolRun {
  const Topology* topology = nullptr;     // the pool's GPUs
  const ComputeModel* compute = nullptr;  // the pool's GPU at the job's precision
  int data_parallel = 1;                  // replicas on the pool
};

struct PoolStepResult {
  // The step; the breakdown is the limiting pool's, the all-reduce between pools counted in
  // data_comm_s, a longer optimizer step of another pool in optimizer_s.
  StepResult step;
  std::vector<int> micro_batches;     // per replica of each pool (its busiest replicas)
  std::vector<double> micro_batch_s;  // one micro-batch through one replica's slowest stage
  std::vector<double> ready_s;        // each pool's gradients reduced among its replicas
  int limiting_pool = 0;              // the pool whose gradients are ready last
  double wait_s = 0;                  // the longest time another pool waits for the limiting one
  double inter_pool_s = 0;            // the all-reduce between pools
};

// Micro-batches per replica of each pool: `total` micro-batches dealt one at a time to the pool
// whose busiest replica would then finish first, a replica's time being (its micro-batches +
// `fill`) x micro_batch_s[i] (`fill`: pipeline stages - 1); ties to the earlier pool. Every
// replica gets at least one. The result is a pool's busiest replica's count (its micro-batches
// over its replicas, rounded up). Greedy dealing of equal jobs to machines of different speeds
// minimises the latest finish.
// Requires: total >= the replicas of all pools; micro_batch_s positive.
std::vector<int> balance_micro_batches(int64_t total, const std::vector<int>& replicas,
                                       const std::vector<double>& micro_batch_s, int fill);

// Requires: a transformer; `parallelism` resolved (a sweep configuration) with data_parallel the
// sum of the pools' and no ZeRO-3 or interleaving; each pool's topology holds its tp x cp x pp x
// dp GPUs; `inter_pool` has one GPU per pool. `micro_batches`, when given, replaces the balanced
// split (per replica of each pool).
PoolStepResult simulate_pool_step(const schema::Model& model, const schema::TrainingJob& job,
                                  const schema::Parallelism& parallelism,
                                  const std::vector<PoolRun>& pools, const Topology& inter_pool,
                                  std::optional<std::vector<int>> micro_batches = std::nullopt);

}  // namespace clustersim
