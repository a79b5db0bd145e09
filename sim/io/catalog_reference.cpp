// Checks of the references a scenario makes to shared catalog entries.
#include "sim/io/catalog_reference.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/hw/storage_model.h"
#include "sim/util/number_format.h"

namespace clustersim {
namespace {

// A provisioned_* field of `volume` (throughput or IOPS bought above the baseline) lies between
// the tier's baseline `limit` at the volume's capacity and the tier's `ceiling` field, which the
// tier must give (it sells no such performance otherwise). True when absent or valid.
bool check_provisioned(const FieldChecker& volume, const char* field,
                       const schema::StorageTier& tier, const schema::CapacityScaledLimit& limit,
                       const char* ceiling) {
  if (!volume.has(field)) return true;
  if (!volume.positive(field)) return false;
  const auto* tier_field = tier.GetDescriptor()->FindFieldByName(ceiling);
  if (!tier.GetReflection()->HasField(tier, tier_field)) {
    const std::string why = "\" sells no performance above its baseline (its catalog entry has no ";
    volume.error(field, "\"" + tier.name() + why + ceiling + ")");
    return false;
  }
  const double most = tier.GetReflection()->GetDouble(tier, tier_field);
  const double baseline = capacity_scaled_value(
      limit, static_cast<const schema::StorageVolume&>(volume.message()).capacity_gib());
  if (!volume.in_range(field, 0, most)) return false;
  if (volume.number(field) < baseline) {
    volume.error(field, "is below \"" + tier.name() + "\"'s baseline at this capacity (" +
                            format_number(baseline) + "): give at least that, or leave it out");
    return false;
  }
  return true;
}

// A volume's capacity is one its tier comes in (StorageTier.capacity_increment): the tier's least
// capacity or a whole multiple of its step; else an error naming the valid capacities either side.
// True when it is.
bool check_capacity_step(const FieldChecker& volume, const schema::StorageTier& tier) {
  if (!tier.has_capacity_increment()) return true;
  const double step = tier.capacity_increment().step_gib();
  const double capacity = volume.number("capacity_gib");
  const double least = tier.has_capacity_min_gib() ? tier.capacity_min_gib() : step;
  // Whole multiples within a millionth of a step: capacities are written in decimal.
  const double steps = capacity / step;
  if (capacity == least || std::abs(steps - std::round(steps)) <= 1e-6 * std::max(1.0, steps)) {
    return true;
  }
  std::vector<double> nearest;
  const double below = std::floor(steps) * step;
  if (below >= least) {
    nearest.push_back(below);
  } else if (least < capacity) {
    nearest.push_back(least);
  }
  const double above = std::max(std::ceil(steps) * step, least);
  if (!tier.has_capacity_max_gib() || above <= tier.capacity_max_gib()) nearest.push_back(above);
  std::string listed;
  for (double c : nearest) listed += (listed.empty() ? "" : " or ") + format_number(c);
  volume.error("capacity_gib",
               format_number(capacity) + " GiB is not a capacity \"" + tier.name() +
                   "\" comes in (" +
                   (tier.has_capacity_min_gib() && tier.capacity_min_gib() != step
                        ? format_number(tier.capacity_min_gib()) + " GiB or a multiple of "
                        : "a multiple of ") +
                   format_number(step) + " GiB): the nearest are " + listed + " GiB");
  return false;
}

// A volume's throughput is within its tier's bound per IOPS (StorageTier.throughput_per_iops):
// checked on the throughput it has (provisioned, else the baseline at its capacity) against the
// IOPS it has, reported at provisioned_throughput_mb_per_s with the IOPS it needs. True when
// within it.
bool check_throughput_per_iops(const FieldChecker& volume, const schema::StorageTier& tier) {
  if (!tier.has_throughput_per_iops()) return true;
  const auto& m = static_cast<const schema::StorageVolume&>(volume.message());
  const double per_iops = tier.throughput_per_iops().max_mb_per_s();
  const double throughput =
      m.has_provisioned_throughput_mb_per_s()
          ? m.provisioned_throughput_mb_per_s()
          : capacity_scaled_value(tier.throughput_mb_per_s(), m.capacity_gib());
  const double iops = m.has_provisioned_iops()
                          ? m.provisioned_iops()
                          : capacity_scaled_value(tier.iops(), m.capacity_gib());
  // A millionth's slack: 4,000 IOPS x 0.262144 is 1,048.576 MB/s give or take a rounding.
  if (throughput <= per_iops * iops * (1 + 1e-9)) return true;
  const double needed = std::ceil(throughput / per_iops * (1 - 1e-9));
  volume.error(
      m.has_provisioned_throughput_mb_per_s() ? "provisioned_throughput_mb_per_s" : "capacity_gib",
      format_number(throughput) + " MB/s needs at least " + format_number(needed) + " IOPS (\"" +
          tier.name() + "\" gives at most " + format_number(per_iops) +
          " MB/s per IOPS), the volume has " + format_number(iops) +
          ": give provisioned_iops >= " + format_number(needed));
  return false;
}

// A volume's provisioned IOPS are within its tier's bound per GiB (StorageTier.iops_per_gib),
// else an error at provisioned_iops naming the capacity they need. True when within it.
bool check_iops_per_gib(const FieldChecker& volume, const schema::StorageTier& tier) {
  const auto& m = static_cast<const schema::StorageVolume&>(volume.message());
  if (!tier.has_iops_per_gib() || !m.has_provisioned_iops()) return true;
  const double per_gib = tier.iops_per_gib().max();
  // A millionth's slack, as above: capacities and IOPS are written in decimal.
  if (m.provisioned_iops() <= per_gib * m.capacity_gib() * (1 + 1e-9)) return true;
  const double needed = std::ceil(m.provisioned_iops() / per_gib * (1 - 1e-9));
  volume.error("provisioned_iops",
               format_number(m.provisioned_iops()) + " IOPS need at least " +
                   format_number(needed) + " GiB (\"" + tier.name() + "\" allows at most " +
                   format_number(per_gib) + " IOPS per GiB), the volume has " +
                   format_number(m.capacity_gib()) + ": give capacity_gib >= " +
                   format_number(needed) + " or provisioned_iops <= " +
                   format_number(std::floor(per_gib * m.capacity_gib())));
  return false;
}

}  // namespace

const schema::InstanceType* resolve_gpu_instance(const FieldChecker& owner, const char* field,
                                                 int index, const std::string& name,
                                                 const Catalog& catalog, const char* consequence) {
  const schema::InstanceType* instance =
      resolve_reference(owner, field, index, name, catalog.instances(), "instance type");
  if (instance == nullptr || has_gpu(*instance)) return instance;
  owner.error(field, "\"" + name + "\" has no GPU (gpu_count is 0): " + consequence, index);
  return nullptr;
}

const schema::StorageTier* resolve_storage_volume(const FieldChecker& volume,
                                                  const Catalog& catalog) {
  const auto& m = static_cast<const schema::StorageVolume&>(volume.message());
  const bool sized = volume.require_positive("capacity_gib");
  if (!volume.require("tier")) return nullptr;
  const schema::StorageTier* tier =
      resolve_reference(volume, "tier", -1, m.tier(), catalog.storage(), "storage tier");
  if (tier == nullptr || !sized) return nullptr;
  if ((tier->has_capacity_min_gib() && m.capacity_gib() < tier->capacity_min_gib()) ||
      (tier->has_capacity_max_gib() && m.capacity_gib() > tier->capacity_max_gib())) {
    // A tier may bound one side only (FSx PERSISTENT_1's least capacity): "1200..0 GiB" was
    // printed.
    const std::string least = format_number(tier->capacity_min_gib());
    const std::string most = format_number(tier->capacity_max_gib());
    volume.error("capacity_gib",
                 !tier->has_capacity_max_gib()
                     ? "must be at least " + least + " GiB, " + tier->name() + "'s least"
                 : !tier->has_capacity_min_gib()
                     ? "must be at most " + most + " GiB, " + tier->name() + "'s most"
                     : "must lie within " + tier->name() + "'s " + least + ".." + most + " GiB");
    return nullptr;
  }
  if (!check_capacity_step(volume, *tier)) return nullptr;
  const bool throughput =
      check_provisioned(volume, "provisioned_throughput_mb_per_s", *tier,
                        tier->throughput_mb_per_s(), "provisioned_max_throughput_mb_per_s");
  const bool iops =
      check_provisioned(volume, "provisioned_iops", *tier, tier->iops(), "provisioned_max_iops");
  return throughput && iops && check_iops_per_gib(volume, *tier) &&
                 check_throughput_per_iops(volume, *tier)
             ? tier
             : nullptr;
}

}  // namespace clustersim
