// One training step of a mix (a cluster made of pools of different GPUs): every pool runs
// data-parallel replicas of the same tensor x context x pipeline layout on its own GPUs; the
// global batch's micro-batches are split over the replicas by their speed (the fastest replicas
// take the most, so that all finish together as far as whole micro-batches allow); each pool's
// replicas run their pipeline and reduce their gradients among themselves on the pool's network
// (pipeline_simulation.h); then, on the engine, once every pool has every stage's sum, the pools
// all-reduce the gradients over the network between them (net/inter_pool_topology.h) and each
// stage steps its optimizer, the longest ending its pool's step. The step is set by the slowest
// pool; the others wait for it. A trace draws it from the same pipelines (pool_step_trace.h).
//
// Tensor parallelism stays inside a pool (its NVLink domains); pipeline stages do not cross pools
// here (pipeline_across_pools.h places the stages across them instead). A mixture-of-experts
// model's expert-parallel groups stay inside a pool too, each pool's replicas holding every
// expert: between the pools every expert's gradients are all-reduced beside the dense ones.
//
// Interleaved (virtual_stages v > 1): each pool's replicas run the interleaved plan on their own
// GPUs, its layers laid out as on a plain cluster. Megatron's schedule runs micro-batches in
// groups of one per stage, so they are dealt a group of PP at a time, a replica's pipeline fill
// (PP - 1) / v of a micro-batch's passes through a stage's chunks.
//
// ZeRO-3 (zero_stage 3): the parameters are sharded over the whole data-parallel group, every
// pool's replicas together, so every layer's all-gather before each pass and reduce-scatter after
// its backward is one collective spanning the pools, crossing the inter-pool link every layer of
// every micro-batch. Assumed: every rank takes part in every such collective, so every replica
// runs the same number of micro-batches (no split by speed: a pool's ranks cannot skip another's
// collectives) and the pools go in lockstep, each collective starting when the slowest pool's
// ranks reach it. Each pool's pipeline runs on the pools joined into one cluster, that pool's
// replicas first (net/topology_builder.h's build_joined_topology, each pool's uplink its
// inter-pool link): its replica 0, the one the engine times, on its own GPUs, its collectives
// over every pool's ranks. A pool's step is timed as if the others' ranks joined each collective
// as its own do (the faster pools are ahead of it at every layer, so the slowest pool's run holds
// the lockstep's times); the step is the slowest pool's. The reduce-scatters have summed every
// replica's gradients, so no all-reduce between pools follows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/engine/timeline.h"
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
  // ZeRO-3 only: every pool's GPUs joined, this pool's first (its replicas the first ones).
  const Topology* joined = nullptr;
  std::string instance = {};  // its instance type, naming it in traces
};

struct PoolStepResult {
  // The step; the breakdown is the limiting pool's, the all-reduce between pools counted in
  // data_comm_s, a longer optimizer step of another pool in optimizer_s.
  StepResult step;
  std::vector<int> micro_batches;     // per replica of each pool (its busiest replicas)
  std::vector<int64_t> pool_micro_batches;  // each pool's share of the step's, its replicas'
  std::vector<double> micro_batch_s;  // one micro-batch through one replica's slowest stage
  std::vector<double> ready_s;  // each pool's gradients, every stage's, reduced among its replicas
  int limiting_pool = 0;              // the pool whose gradients are ready last
  double wait_s = 0;                  // the longest time another pool waits for the limiting one
  double inter_pool_s = 0;            // the all-reduce between pools
};

// Micro-batches of each pool: `total` micro-batches dealt one at a time to the pool whose
// busiest replica would then finish first, a replica's time being (its micro-batches + `fill`) x
// micro_batch_s[i] (`fill`: pipeline stages - 1, over v when interleaved, in micro-batches); ties
// to the earlier pool. Every replica gets at least one. Greedy dealing of equal jobs to machines
// of different speeds minimises the latest finish. The counts add up to `total`.
// Requires: total >= the replicas of all pools; micro_batch_s positive.
std::vector<int64_t> deal_micro_batches(int64_t total, const std::vector<int>& replicas,
                                        const std::vector<double>& micro_batch_s, double fill);
// The same dealing as each pool's busiest replica's count (its micro-batches over its replicas,
// rounded up).
std::vector<int> balance_micro_batches(int64_t total, const std::vector<int>& replicas,
                                       const std::vector<double>& micro_batch_s, double fill);

// Requires: a transformer; `parallelism` resolved (a sweep configuration) with data_parallel the
// sum of the pools'; each pool's topology holds its tp x cp x pp x dp GPUs; `inter_pool` has one
// GPU per pool. Interleaved: the micro-batches a multiple of PP and at least PP per replica.
// ZeRO-3: every pool's `joined` set, the micro-batches a multiple of the replicas, rank order
// TP_PP_DP (each replica inside one pool). `micro_batches`, when given, replaces the balanced
// split (per replica of each pool; every replica of a pool then takes as many). `timeline`, when
// given, receives the step's spans (pool_step_trace.h).
PoolStepResult simulate_pool_step(const schema::Model& model, const schema::TrainingJob& job,
                                  const schema::Parallelism& parallelism,
                                  const std::vector<PoolRun>& pools, const Topology& inter_pool,
                                  std::optional<std::vector<int>> micro_batches = std::nullopt,
                                  Timeline* timeline = nullptr);

}  // namespace clustersim
