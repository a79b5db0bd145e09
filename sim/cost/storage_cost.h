// What a run's checkpoint volumes cost while provisioned, at their tiers' catalog prices
// (StorageTier.price): the capacity, and the throughput and IOPS bought above the capacity's
// baseline. A shared file system (FSx for Lustre, NAS, CPFS) is one per job; a block volume (EBS,
// ESSD) one per node. Billed for the run's wall time, as providers bill by the second (a
// subscription's whole periods are the instances'). Pure functions: safe from any thread.
#pragma once

#include <optional>

#include "sim/cost/cost_model.h"
#include "sim/io/schema/storage.pb.h"
#include "sim/sweep/configuration_space.h"

namespace clustersim {

// Hours of a month in the providers' monthly prices: a twelfth of a 365-day year (AWS quotes 730
// hours per month).
inline constexpr double kHoursPerMonth = 730;

// What one `volume` of `tier` costs a month, in the price's currency.
// Requires: tier.has_price(); `volume` resolved against `tier` (resolve_storage_volume).
double volume_price_per_month(const schema::StorageTier& tier, const schema::StorageVolume& volume);

// What the checkpoint volumes of `configuration` cost an hour, in the report currency: the
// volume of its instance's provider, once for a shared file system, once per node for a block
// volume. nullopt when the run has no checkpoint volume or its tier has no price.
std::optional<double> checkpoint_storage_per_hour(const CostModel& model,
                                                  const Configuration& configuration);

}  // namespace clustersim
