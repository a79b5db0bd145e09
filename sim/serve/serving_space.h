// The deployments a serving scenario asks about, indexed without being stored: instance x shape x
// expert parallelism x quantization x batching x max batch x token budget x prefix caching x
// speculative draft tokens x closed-loop concurrency (the last fastest), each axis the sweep's
// list or the deployment's (the traffic's) one value. The shapes are the colocated ones (tensor
// parallel x pipeline parallel x replicas) then the disaggregated ones (prefill replicas x decode
// replicas).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/serve/kv_transfer.h"
#include "sim/serve/serving_scenario.h"

namespace clustersim {

// A pool of identical replicas.
struct PoolShape {
  int tensor_parallel = 1;
  int pipeline_parallel = 1;
  int replicas = 1;
  const schema::InstanceType* instance = nullptr;  // its own; null: the configuration's
  int replica_gpus() const { return tensor_parallel * pipeline_parallel; }
};

struct ServingConfiguration {
  int64_t index = 0;
  const schema::InstanceType* instance = nullptr;
  int tensor_parallel = 1;
  int pipeline_parallel = 1;
  int replicas = 1;
  int expert_parallel = 1;            // inside each replica's (each pool's) tensor-parallel group
  // Each of the replica's GPUs its own requests, the experts split over them
  // (attention_data_parallel.h).
  bool attention_data_parallel = false;
  schema::Quantization quantization;  // as written (defaults applied by resolve_formats)
  // Every field set but capacity_policy and prefix_caching.enabled (absent: the runtime's).
  schema::Scheduler scheduler;
  // Disaggregated: the prefill pool (its instance always set); instance, tensor_parallel,
  // pipeline_parallel and replicas above are then the decode pool's.
  std::optional<PoolShape> prefill;
  int concurrency = 0;  // closed-loop traffic: its users; open loop: 0
  int draft_tokens = 0;  // speculative decoding's k per iteration; 0: off
  // Disaggregated over two instance types: each pool on nodes of its own.
  bool split_nodes() const { return prefill && prefill->instance != instance; }
  int replica_gpus() const { return tensor_parallel * pipeline_parallel; }
  int gpus() const {
    return replica_gpus() * replicas + (prefill ? prefill->replica_gpus() * prefill->replicas : 0);
  }
  // Whole nodes billed, replicas placed as deployment_placement() does.
  int nodes() const;
  // One pool as a colocated configuration of its own (the decode pool's when not `prefill_pool`).
  ServingConfiguration pool(bool prefill_pool) const;
};

// Where a deployment's replicas sit, the prefill pool's first, packed in GPU order: a replica of
// a node or more starts on a node boundary, a smaller one never straddles two nodes. Pools on two
// instance types (split_nodes()) are each placed from GPU 0 of nodes of their own.
struct DeploymentPlacement {
  PoolPlacement prefill, decode;  // colocated: every replica in `decode`
  int prefill_nodes = 0;          // split_nodes(): the prefill pool's; else 0
  int nodes = 0;                  // all
};
DeploymentPlacement deployment_placement(const ServingConfiguration& c);

class ServingSpace {
 public:
  // Requires: a scenario that loaded without errors; it outlives the space.
  explicit ServingSpace(const LoadedServingScenario& scenario);
  int64_t size() const { return size_; }
  // Requires: 0 <= index < size().
  ServingConfiguration at(int64_t index) const;

 private:
  const LoadedServingScenario& scenario_;
  struct Shape {
    PoolShape replicas;  // colocated, or the decode pool
    std::optional<PoolShape> prefill;
  };
  std::vector<Shape> shapes_;
  std::vector<int> max_batch_, max_tokens_, draft_tokens_, concurrency_, expert_parallel_;
  std::vector<bool> attention_data_parallel_;
  std::vector<std::optional<bool>> prefix_caching_;  // the sweep's; {nullopt}: the scheduler's
  std::vector<schema::Quantization> quantizations_;
  std::vector<schema::Batching> batching_;
  int64_t size_ = 0;
};

// Why `c` cannot be deployed (a replica larger than a node that does not fill whole nodes, a
// quantization its GPU has no tensor cores for, expert parallelism not dividing tensor
// parallelism, attention data parallelism whose expert parallelism is not its tensor
// parallelism), or "" when it can.
std::string serving_problem(const ServingConfiguration& c, const Catalog& catalog);

}  // namespace clustersim
