// Checkpoint bytes from the model states, times from the storage model.
#include "sim/cost/checkpoint_cost.h"

#include <algorithm>
#include <limits>

#include "sim/hw/storage_model.h"
#include "sim/util/number_format.h"
#include "sim/util/units.h"
#include "sim/workload/parameter_count.h"

namespace clustersim {
namespace {

// The node's plain (TCP) network, which carries its file-system traffic; +infinity if unknown.
double vpc_gbit_per_s(const schema::InstanceType& instance) {
  const schema::NodeNetwork& n = instance.network();
  return n.has_tcp_gbit_per_s()     ? n.tcp_gbit_per_s()
         : n.has_total_gbit_per_s() ? n.total_gbit_per_s()
                                    : std::numeric_limits<double>::infinity();
}

// Bytes of one checkpoint of `model` trained by `job`: every parameter's weights and optimizer
// states, once.
double checkpoint_bytes(const schema::Model& model, const schema::TrainingJob& job) {
  const StateBytesPerParameter per_parameter =
      state_bytes_per_parameter(job.precision(), job.optimizer());
  return static_cast<double>(parameter_count(model)) *
         (per_parameter.weights + per_parameter.optimizer);
}

}  // namespace

int checkpoints_kept(const schema::Checkpoint& checkpoint) {
  return checkpoint.has_keep() ? checkpoint.keep() : 2;
}

std::string checkpoint_volume_problem(const schema::Model& model, const schema::TrainingJob& job,
                                      int64_t nodes, int keep, const schema::StorageTier& tier,
                                      double capacity_gib, const std::string& nodes_note) {
  const double whole_gib = checkpoint_bytes(model, job) / kBytesPerGibibyte;
  const int64_t writers = tier.shared_across_nodes() ? 1 : std::max<int64_t>(nodes, 1);
  const double share_gib = whole_gib / static_cast<double>(writers);
  if (keep * share_gib <= capacity_gib) return "";
  const std::string states = "weights and optimizer states of \"" + model.name() + "\"";
  const std::string fits = " in " + format_number(capacity_gib) + " GiB";
  // "a checkpoint (87.9 GiB", "2 checkpoints kept (2 x 87.9 GiB": what the volume holds.
  const auto held = [&](double gib) {
    const std::string size = format_fixed(gib, 1) + " GiB";
    return keep == 1
               ? "a checkpoint (" + size
               : std::to_string(keep) + " checkpoints kept (" + std::to_string(keep) + " x " + size;
  };
  if (writers == 1) {
    return held(whole_gib) + " of " + states + ") " + (keep == 1 ? "does" : "do") + " not fit" +
           fits;
  }
  return "a node's share of " + held(share_gib) + ": " + format_fixed(whole_gib, 1) + " GiB of " +
         states + " over " + std::to_string(writers) + " nodes" + nodes_note + ") does not fit" +
         fits + " (\"" + tier.name() + "\" is a volume of each node)";
}

CheckpointCost checkpoint_cost(const schema::Model& model, const schema::TrainingJob& job,
                               const Configuration& configuration, const MemoryEstimate& memory,
                               const schema::StorageTier& tier,
                               const schema::StorageVolume& volume) {
  const double nodes = configuration.nodes;
  CheckpointCost cost;
  cost.bytes = checkpoint_bytes(model, job);
  cost.load_bytes_per_node =
      configuration.gpus_per_node * (memory.weights_bytes + memory.optimizer_bytes);
  const StoragePerformance storage = volume_performance(tier, volume, configuration.instance);
  // Seconds for every node to move `per_node` bytes at once.
  const auto transfer_s = [&](double per_node) {
    if (!storage.shared_across_nodes) return per_node / storage.throughput_bytes_per_s;
    // A shared file system divides its throughput among the nodes, each reaching it over its
    // VPC network (block volumes have their own path, bounded by the block-storage caps).
    const double vpc_bytes_per_s = vpc_gbit_per_s(*configuration.instance) * 1e9 / kBitsPerByte;
    return std::max(per_node * nodes / storage.throughput_bytes_per_s, per_node / vpc_bytes_per_s);
  };
  cost.write_s = storage.latency_s + transfer_s(cost.bytes / nodes);
  cost.load_s = storage.latency_s + transfer_s(cost.load_bytes_per_node);
  return cost;
}

}  // namespace clustersim
