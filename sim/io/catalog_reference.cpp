// Checks of the references a scenario makes to shared catalog entries.
#include "sim/io/catalog_reference.h"

#include "sim/util/number_format.h"

namespace clustersim {

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
  return tier;
}

}  // namespace clustersim
