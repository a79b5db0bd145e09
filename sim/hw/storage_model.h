// Performance of one provisioned storage volume or file system as a node sees it: throughput,
// IOPS and per-request latency from the catalog's capacity formulas, capped by what the instance
// lets one node attach (block-storage caps). Shared by the input pipeline (dataset reads) and the
// cost model (checkpoint writes). Immutable values; safe to share between threads.
#pragma once

#include "sim/io/schema/instance.pb.h"
#include "sim/io/schema/storage.pb.h"

namespace clustersim {

// value(C) of a capacity-scaled limit (see storage.proto); +infinity when the limit is absent.
double capacity_scaled_value(const schema::CapacityScaledLimit& limit, double capacity_gib);

struct StoragePerformance {
  double throughput_bytes_per_s = 0;  // sequential, per volume (per file system when shared)
  double iops = 0;                    // small random requests per second
  double latency_s = 0;               // one small request, unloaded
  bool shared_across_nodes = false;   // one file system's limits shared by every node reading it
};

// The performance of `tier` provisioned at `capacity_gib`. For block storage attached to
// `instance` (may be null), the instance's block-storage caps bind too. Limits the catalog does
// not give come back as +infinity (the other limit binds).
// Requires: `tier` passed the catalog checks; capacity within its range (the caller checks).
StoragePerformance storage_performance(const schema::StorageTier& tier, double capacity_gib,
                                       const schema::InstanceType* instance);

// The performance of `volume` of `tier`: storage_performance at its capacity, with the throughput
// and IOPS it buys above that capacity's baseline (provisioned_*) where it gives them.
// Requires: `volume` checked against `tier` (resolve_storage_volume).
StoragePerformance volume_performance(const schema::StorageTier& tier,
                                      const schema::StorageVolume& volume,
                                      const schema::InstanceType* instance);

}  // namespace clustersim
