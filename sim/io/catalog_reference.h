// Resolution of a name a user wrote in a scenario against one kind of catalog entry, reporting an
// unknown name with the closest valid one.
#pragma once

#include <string>

#include "sim/io/catalog.h"
#include "sim/io/field_checker.h"
#include "sim/io/schema/storage.pb.h"
#include "sim/util/closest_name.h"

namespace clustersim {

// Looks `name` up in `entries`; an unknown name is an error at owner.field[index] naming `what`
// and the closest valid name. Returns nullptr when unknown.
template <class T>
const T* resolve_reference(const FieldChecker& owner, const char* field, int index,
                           const std::string& name, const NamedEntries<T>& entries,
                           const char* what) {
  const CatalogEntry<T>* entry = entries.find(name);
  if (entry != nullptr) return entry->value;
  owner.error(
      field,
      std::string("unknown ") + what + " \"" + name + "\"" + did_you_mean(name, entries.names()),
      index);
  return nullptr;
}

// Resolves an instance type like resolve_reference and requires it to have GPUs: one without is an
// error at owner.field[index] ending in `consequence` ("it cannot train"). Returns nullptr on either.
const schema::InstanceType* resolve_gpu_instance(const FieldChecker& owner, const char* field,
                                                 int index, const std::string& name,
                                                 const Catalog& catalog, const char* consequence);

// Checks a StorageVolume message: its tier exists, its capacity lies within the tier's range and
// is one the tier comes in (capacity_increment), the performance it buys lies between the
// baseline and the tier's ceilings, and its throughput within the tier's bound per IOPS
// (throughput_per_iops). Returns the tier, or nullptr after reporting the problem.
const schema::StorageTier* resolve_storage_volume(const FieldChecker& volume,
                                                  const Catalog& catalog);

}  // namespace clustersim
