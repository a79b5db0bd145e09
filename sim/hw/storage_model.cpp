// Capacity formulas of storage tiers, and the instance caps on block storage.
#include "sim/hw/storage_model.h"

#include <algorithm>
#include <limits>

namespace clustersim {

namespace {
constexpr double kBytesPerMegabyte = 1e6;  // the catalog's MB/s are decimal, as vendors quote
constexpr double kUnlimited = std::numeric_limits<double>::infinity();
}  // namespace

double capacity_scaled_value(const schema::CapacityScaledLimit& limit, double capacity_gib) {
  if (limit.step_size() > 0) {
    double value = limit.step(0).value();
    for (const schema::CapacityStep& step : limit.step()) {
      if (step.from_gib() <= capacity_gib) value = step.value();
    }
    return value;
  }
  double value = limit.base() + limit.per_gib() * capacity_gib;
  if (limit.has_floor()) value = std::max(value, limit.floor());
  if (limit.has_cap()) value = std::min(value, limit.cap());
  return value;
}

namespace {

// The performance of `tier` at `capacity_gib`, raised to `provisioned` where it gives more (0:
// nothing bought), then capped by `instance`'s block-storage caps.
StoragePerformance performance_of(const schema::StorageTier& tier, double capacity_gib,
                                  const schema::StorageVolume& provisioned,
                                  const schema::InstanceType* instance) {
  StoragePerformance performance;
  performance.throughput_bytes_per_s =
      tier.has_throughput_mb_per_s()
          ? std::max(capacity_scaled_value(tier.throughput_mb_per_s(), capacity_gib),
                     provisioned.provisioned_throughput_mb_per_s()) *
                kBytesPerMegabyte
          : kUnlimited;
  performance.iops = tier.has_iops() ? std::max(capacity_scaled_value(tier.iops(), capacity_gib),
                                                provisioned.provisioned_iops())
                                     : kUnlimited;
  performance.latency_s = tier.latency_ms() * 1e-3;
  performance.shared_across_nodes = tier.shared_across_nodes();
  const bool block = tier.kind() == schema::BLOCK_SSD || tier.kind() == schema::BLOCK_HDD;
  if (block && instance != nullptr && instance->has_block_storage_caps()) {
    const schema::BlockStorageCaps& caps = instance->block_storage_caps();
    if (caps.has_bandwidth_mb_per_s()) {
      performance.throughput_bytes_per_s = std::min(performance.throughput_bytes_per_s,
                                                    caps.bandwidth_mb_per_s() * kBytesPerMegabyte);
    }
    if (caps.has_iops()) performance.iops = std::min(performance.iops, caps.iops());
  }
  return performance;
}

}  // namespace

StoragePerformance storage_performance(const schema::StorageTier& tier, double capacity_gib,
                                       const schema::InstanceType* instance) {
  return performance_of(tier, capacity_gib, schema::StorageVolume::default_instance(), instance);
}

StoragePerformance volume_performance(const schema::StorageTier& tier,
                                      const schema::StorageVolume& volume,
                                      const schema::InstanceType* instance) {
  return performance_of(tier, volume.capacity_gib(), volume, instance);
}

}  // namespace clustersim
