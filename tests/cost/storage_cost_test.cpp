// Checkpoint storage cost: a volume's price a month on closed cases (capacity, and throughput and
// IOPS bought above the baseline), and its share of a run's cost: capacity x price x hours, per
// node for block volumes and per job for a shared file system; an unpriced tier counts nothing.
#include "sim/cost/storage_cost.h"

#include <catch2/catch.hpp>

#include "sim/cost/run_cost.h"
#include "tests/cost/cost_fixture.h"

namespace clustersim {
namespace {

namespace s = schema;
using testing::cost_scenario;
using testing::load_cost;

const s::StorageTier& tier(const std::string& name) {
  return *testing::shipped_catalog().storage().find(name)->value;
}

s::StorageVolume volume(double capacity_gib) {
  s::StorageVolume v;
  v.set_capacity_gib(capacity_gib);
  return v;
}

TEST_CASE(
    "a gp3 volume costs its capacity, and the throughput and IOPS bought above 125 MiB/s "
    "and 3,000 IOPS") {
  // us-east-1: 0.08 USD per GiB-month, 0.04 per MiB/s-month, 0.005 per IOPS-month.
  CHECK(volume_price_per_month(tier("aws.ebs.gp3"), volume(1000)) == Approx(80));
  s::StorageVolume fast = volume(1000);
  fast.set_provisioned_throughput_mb_per_s(1048.576);  // 1,000 MiB/s: 875 MiB/s bought
  fast.set_provisioned_iops(4000);                     // 1,000 IOPS bought
  CHECK(volume_price_per_month(tier("aws.ebs.gp3"), fast) ==
        Approx(80 + 875 * 0.04 + 1000 * 0.005));
  // The baseline itself, given explicitly, buys nothing.
  s::StorageVolume baseline = volume(1000);
  baseline.set_provisioned_throughput_mb_per_s(131.072);
  baseline.set_provisioned_iops(3000);
  CHECK(volume_price_per_month(tier("aws.ebs.gp3"), baseline) == Approx(80));
}

TEST_CASE("FSx for Lustre is priced by capacity alone, its throughput included") {
  CHECK(volume_price_per_month(tier("aws.fsx-lustre.persistent2-125"), volume(2400)) ==
        Approx(2400 * 0.145));
}

struct Run {
  std::unique_ptr<testing::LoadedCost> loaded;
  RunCost cost;
};

// Llama-2-7B on 2 p4d.24xlarge on demand, hourly checkpoints on `volume_text`, no fault.
Run run_on(const std::string& volume_text) {
  Run run{load_cost(cost_scenario("  checkpoint { volume { " + volume_text +
                                  " } interval_s: 3600 }\n  interruptions_per_node_hour: 0\n")),
          {}};
  INFO(run.loaded->diagnostics);
  REQUIRE(run.loaded->model);
  const Configuration c = expand_configurations(*run.loaded->scenario).valid.at(0);
  MemoryEstimate memory;
  memory.weights_bytes = 14e9 / 8;
  memory.optimizer_bytes = 84e9 / 16;
  StepResult step;
  step.step_s = 10;
  const CheckpointPlan plan = plan_checkpoints(*run.loaded->model, c, memory, step);
  run.cost = run_cost(*run.loaded->model, c, plan, s::ON_DEMAND);
  return run;
}

TEST_CASE("block volumes cost capacity x price x hours per node, added to the instances' cost") {
  const Run r = run_on("tier: \"aws.ebs.gp3\" capacity_gib: 500");
  const double hours = r.cost.time.p50_s / 3600;
  REQUIRE(r.cost.storage_per_hour);
  CHECK(*r.cost.storage_per_hour == Approx(2 * 500 * 0.08 / 730));  // one volume per node
  CHECK(r.cost.storage_cost_p50 == Approx(2 * 500 * 0.08 / 730 * hours));
  CHECK(r.cost.cost_p50 ==
        Approx(2 * r.cost.per_instance_hour * hours + r.cost.storage_cost_p50).epsilon(1e-12));
}

TEST_CASE("a shared file system is one per job, and a faster tier's price shows in the total") {
  const Run gp3 = run_on("tier: \"aws.ebs.gp3\" capacity_gib: 1200");
  const Run fsx = run_on("tier: \"aws.fsx-lustre.persistent2-125\" capacity_gib: 1200");
  REQUIRE(fsx.cost.storage_per_hour);
  CHECK(*fsx.cost.storage_per_hour == Approx(1200 * 0.145 / 730));  // one for both nodes
  const double hours = fsx.cost.time.p50_s / 3600;
  CHECK(fsx.cost.cost_p50 ==
        Approx(2 * fsx.cost.per_instance_hour * hours + 1200 * 0.145 / 730 * hours).epsilon(1e-12));
  // FSx (146 MB/s for the job) writes no faster than two gp3 volumes (131 MB/s each) and costs
  // 0.145 a GiB-month against 2 x 0.08: the totals differ by the storage and the write time.
  CHECK(fsx.cost.cost_p50 - fsx.cost.storage_cost_p50 >=
        gp3.cost.cost_p50 - gp3.cost.storage_cost_p50);
}

TEST_CASE("a volume of an unpriced tier counts no storage and says so") {
  const Run r = run_on("tier: \"aws.fsx-lustre.persistent2-250\" capacity_gib: 1200");
  CHECK_FALSE(r.cost.storage_per_hour);
  CHECK(r.cost.storage_cost_p50 == 0);
  CHECK(r.cost.cost_p50 == Approx(2 * r.cost.per_instance_hour * r.cost.time.p50_s / 3600));
}

}  // namespace
}  // namespace clustersim
