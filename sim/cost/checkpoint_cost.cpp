// Checkpoint bytes from the model states, times from the storage model.
#include "sim/cost/checkpoint_cost.h"

#include "sim/hw/storage_model.h"
#include "sim/workload/parameter_count.h"

namespace clustersim {

CheckpointCost checkpoint_cost(const schema::Model& model, const schema::TrainingJob& job,
                               const Configuration& configuration, const MemoryEstimate& memory,
                               const schema::StorageTier& tier, double capacity_gib) {
  const StateBytesPerParameter per_parameter =
      state_bytes_per_parameter(job.precision(), job.optimizer());
  const double nodes = configuration.nodes;
  CheckpointCost cost;
  cost.bytes = static_cast<double>(parameter_count(model)) *
               (per_parameter.weights + per_parameter.optimizer);
  cost.load_bytes_per_node =
      configuration.instance->gpu_count() * (memory.weights_bytes + memory.optimizer_bytes);
  const StoragePerformance storage =
      storage_performance(tier, capacity_gib, configuration.instance);
  // A shared file system divides its throughput among the nodes; a block volume per node does not.
  const double sharers = storage.shared_across_nodes ? nodes : 1;
  cost.write_s = storage.latency_s + cost.bytes / nodes * sharers / storage.throughput_bytes_per_s;
  cost.load_s =
      storage.latency_s + cost.load_bytes_per_node * sharers / storage.throughput_bytes_per_s;
  return cost;
}

}  // namespace clustersim
