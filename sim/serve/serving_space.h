// The deployments a serving scenario asks about, indexed without being stored: instance x
// tensor parallel x pipeline parallel x replicas x quantization x batching x max batch x token
// budget (the last fastest), each axis the sweep's list or the deployment's one value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/serve/serving_scenario.h"

namespace clustersim {

struct ServingConfiguration {
  int64_t index = 0;
  const schema::InstanceType* instance = nullptr;
  int tensor_parallel = 1;
  int pipeline_parallel = 1;
  int replicas = 1;
  schema::Quantization quantization;  // as written (defaults applied by resolve_formats)
  schema::Scheduler scheduler;        // every field set
  int replica_gpus() const { return tensor_parallel * pipeline_parallel; }
  int gpus() const { return replica_gpus() * replicas; }
  // Whole nodes billed: replicas smaller than a node share nodes (packed), larger ones take
  // whole nodes each.
  int nodes() const;
};

class ServingSpace {
 public:
  // Requires: a scenario that loaded without errors; it outlives the space.
  explicit ServingSpace(const LoadedServingScenario& scenario);
  int64_t size() const { return size_; }
  // Requires: 0 <= index < size().
  ServingConfiguration at(int64_t index) const;

 private:
  const LoadedServingScenario& scenario_;
  std::vector<int> tensor_, pipeline_, replicas_, max_batch_, max_tokens_;
  std::vector<schema::Quantization> quantizations_;
  std::vector<schema::Batching> batching_;
  int64_t size_ = 0;
};

// Why `c` cannot be deployed (a replica larger than a node that does not fill whole nodes, a
// quantization its GPU has no tensor cores for), or "" when it can.
std::string serving_problem(const ServingConfiguration& c, const Catalog& catalog);

}  // namespace clustersim
