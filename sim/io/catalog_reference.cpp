// Checks of the references a scenario makes to shared catalog entries.
#include "sim/io/catalog_reference.h"

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
    volume.error("capacity_gib", "must lie within " + tier->name() + "'s " +
                                     format_number(tier->capacity_min_gib()) + ".." +
                                     format_number(tier->capacity_max_gib()) + " GiB");
    return nullptr;
  }
  const bool throughput =
      check_provisioned(volume, "provisioned_throughput_mb_per_s", *tier,
                        tier->throughput_mb_per_s(), "provisioned_max_throughput_mb_per_s");
  const bool iops =
      check_provisioned(volume, "provisioned_iops", *tier, tier->iops(), "provisioned_max_iops");
  return throughput && iops ? tier : nullptr;
}

}  // namespace clustersim
