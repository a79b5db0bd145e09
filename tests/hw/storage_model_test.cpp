// Storage performance against the vendors' capacity formulas (topologies/storage.textproto) and
// the instance caps on attached block storage.
#include "sim/hw/storage_model.h"

#include <catch2/catch.hpp>

#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

const schema::StorageTier& tier(const std::string& name) {
  return *testing::shipped_catalog().storage().find(name)->value;
}

using testing::shipped_instance;

TEST_CASE("ESSD PL1 follows min{120 + 0.5 C, 350} MB/s and min{1800 + 50 C, 50000} IOPS") {
  const StoragePerformance small = storage_performance(tier("aliyun.essd.pl1"), 100, nullptr);
  CHECK(small.throughput_bytes_per_s == Approx(170e6));
  CHECK(small.iops == Approx(6800));
  CHECK(small.latency_s == Approx(0.2e-3));
  CHECK_FALSE(small.shared_across_nodes);
  const StoragePerformance large = storage_performance(tier("aliyun.essd.pl1"), 2000, nullptr);
  CHECK(large.throughput_bytes_per_s == Approx(350e6));
  CHECK(large.iops == Approx(50000));
}

TEST_CASE("the instance's block-storage caps bind before a large PL3 volume's") {
  // PL3 at 32 TiB: 4000 MB/s and 1,000,000 IOPS; gn8v.4xlarge attaches at most 750 MB/s, 100k IOPS.
  const StoragePerformance capped = storage_performance(
      tier("aliyun.essd.pl3"), 32768, &shipped_instance("aliyun.ecs.gn8v.4xlarge"));
  CHECK(capped.throughput_bytes_per_s == Approx(750e6));
  CHECK(capped.iops == Approx(100000));
}

TEST_CASE("a step table takes the last step at or below the capacity, and NAS is shared") {
  const schema::StorageTier& extreme = tier("aliyun.nas.extreme");
  CHECK(capacity_scaled_value(extreme.throughput_mb_per_s(), 100) == Approx(150));
  CHECK(capacity_scaled_value(extreme.throughput_mb_per_s(), 499) == Approx(150));
  CHECK(capacity_scaled_value(extreme.throughput_mb_per_s(), 500) == Approx(300));
  CHECK(capacity_scaled_value(extreme.throughput_mb_per_s(), 10000) == Approx(1200));
  CHECK(storage_performance(extreme, 1000, nullptr).shared_across_nodes);
}

}  // namespace
}  // namespace clustersim
