// Checkpoint storage prices: capacity, and performance bought above the baseline.
#include "sim/cost/storage_cost.h"

#include <algorithm>

#include "sim/hw/storage_model.h"
#include "sim/util/units.h"

namespace clustersim {

double volume_price_per_month(const schema::StorageTier& tier,
                              const schema::StorageVolume& volume) {
  const schema::StoragePrice& price = tier.price();
  const double capacity = volume.capacity_gib();
  double per_month = price.per_gib_month() * capacity;
  if (volume.has_provisioned_throughput_mb_per_s()) {
    const double bought_mb_per_s =
        std::max(0.0, volume.provisioned_throughput_mb_per_s() -
                          capacity_scaled_value(tier.throughput_mb_per_s(), capacity));
    per_month += price.per_provisioned_mib_per_s_month() * bought_mb_per_s / kMegabytesPerMebibyte;
  }
  if (volume.has_provisioned_iops()) {
    const double bought_iops =
        std::max(0.0, volume.provisioned_iops() - capacity_scaled_value(tier.iops(), capacity));
    per_month += price.per_provisioned_iops_month() * bought_iops;
  }
  return per_month;
}

std::optional<double> checkpoint_storage_per_hour(const CostModel& model,
                                                  const Configuration& configuration) {
  const CheckpointVolume* found = checkpoint_volume(model, configuration);
  if (found == nullptr) return std::nullopt;
  const schema::StorageTier& tier = *found->tier;
  if (!tier.has_price()) return std::nullopt;
  const double volumes = tier.shared_across_nodes() ? 1 : configuration.nodes;
  const double rate = *model.prices.exchange_rate(tier.price().currency(), model.currency);
  return volumes * volume_price_per_month(tier, *found->volume) / kHoursPerMonth * rate;
}

}  // namespace clustersim
