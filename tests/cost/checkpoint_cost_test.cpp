// Checkpoint size from the model states and its write and load times on block and shared storage.
#include "sim/cost/checkpoint_cost.h"

#include <catch2/catch.hpp>

#include "sim/hw/storage_model.h"
#include "sim/workload/parameter_count.h"
#include "tests/cost/cost_fixture.h"

namespace clustersim {
namespace {

namespace s = schema;

// A volume of `capacity_gib`, nothing provisioned above the baseline.
s::StorageVolume sized(double capacity_gib) {
  s::StorageVolume volume;
  volume.set_capacity_gib(capacity_gib);
  return volume;
}

struct Setup {
  std::unique_ptr<testing::LoadedCost> loaded = testing::load_cost(testing::cost_scenario(""));
  Configuration configuration = expand_configurations(*loaded->scenario).valid.at(0);
  const s::Model& model = *loaded->scenario->model;
  const s::TrainingJob& job = loaded->scenario->scenario().job();
  const s::StorageTier& tier(const std::string& name) {
    return *testing::shipped_catalog().storage().find(name)->value;
  }
};

TEST_CASE("a checkpoint holds 16-bit weights and fp32 Adam states: 14 bytes per parameter") {
  Setup setup;
  MemoryEstimate memory;
  const CheckpointCost cost = checkpoint_cost(setup.model, setup.job, setup.configuration, memory,
                                              setup.tier("aws.ebs.gp3"), sized(500));
  CHECK(cost.bytes == static_cast<double>(parameter_count(setup.model)) * (2 + 12));
}

TEST_CASE("block volumes write in parallel per node, a shared file system splits its throughput") {
  Setup setup;  // 2 nodes of p4d.24xlarge
  MemoryEstimate memory;
  memory.weights_bytes = 1e9;
  memory.optimizer_bytes = 3e9;
  const s::InstanceType* p4d = setup.configuration.instance;
  const CheckpointCost block = checkpoint_cost(setup.model, setup.job, setup.configuration, memory,
                                               setup.tier("aws.ebs.gp3"), sized(500));
  const StoragePerformance gp3 = storage_performance(setup.tier("aws.ebs.gp3"), 500, p4d);
  CHECK(block.write_s == Approx(gp3.latency_s + block.bytes / 2 / gp3.throughput_bytes_per_s));
  CHECK(block.load_bytes_per_node == 8 * 4e9);  // 8 GPUs, each reading its weights and states
  CHECK(block.load_s == Approx(gp3.latency_s + 8 * 4e9 / gp3.throughput_bytes_per_s));

  const s::StorageTier& lustre = setup.tier("aws.fsx-lustre.persistent2-250");
  const CheckpointCost shared =
      checkpoint_cost(setup.model, setup.job, setup.configuration, memory, lustre, sized(4800));
  const StoragePerformance fsx = storage_performance(lustre, 4800, p4d);
  REQUIRE(fsx.shared_across_nodes);
  CHECK(shared.write_s == Approx(fsx.latency_s + shared.bytes / fsx.throughput_bytes_per_s));
  CHECK(shared.load_s == Approx(fsx.latency_s + 2 * 8 * 4e9 / fsx.throughput_bytes_per_s));
}

TEST_CASE("a node reaches a shared file system no faster than its plain network") {
  Setup setup;
  MemoryEstimate memory;
  setup.configuration.nodes = 1;
  schema::InstanceType slow = *setup.configuration.instance;
  slow.mutable_network()->set_tcp_gbit_per_s(1);  // 125 MB/s, below the file system's throughput
  setup.configuration.instance = &slow;
  const s::StorageTier& lustre = setup.tier("aws.fsx-lustre.persistent2-250");
  const CheckpointCost cost =
      checkpoint_cost(setup.model, setup.job, setup.configuration, memory, lustre, sized(4800));
  CHECK(cost.write_s ==
        Approx(storage_performance(lustre, 4800, &slow).latency_s + cost.bytes / 125e6));
}

TEST_CASE("throughput bought above gp3's baseline writes at the volume's provisioned rate") {
  Setup setup;  // 2 nodes of p4d.24xlarge, whose EBS cap (2,375 MB/s) is above gp3's maximum
  MemoryEstimate memory;
  s::StorageVolume provisioned = sized(500);
  provisioned.set_provisioned_throughput_mb_per_s(1048.576);  // 1,000 MiB/s
  const CheckpointCost fast = checkpoint_cost(setup.model, setup.job, setup.configuration, memory,
                                              setup.tier("aws.ebs.gp3"), provisioned);
  const CheckpointCost baseline = checkpoint_cost(setup.model, setup.job, setup.configuration,
                                                  memory, setup.tier("aws.ebs.gp3"), sized(500));
  CHECK(fast.write_s == Approx(fast.bytes / 2 / 1048.576e6));
  CHECK(baseline.write_s == Approx(baseline.bytes / 2 / 131.072e6));  // 125 MiB/s
}

}  // namespace
}  // namespace clustersim
