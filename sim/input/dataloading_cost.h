// What the CPU of an instance spends per sample in a data-loader worker, from the catalog's
// dataloading_cost entries (per processor family, at a reference clock): JPEG decode and
// augmentation, on-the-fly tokenization, collate copy. Also the checks of those entries.
#pragma once

#include <string>

#include "sim/io/catalog.h"
#include "sim/io/field_checker.h"
#include "sim/io/schema/instance.pb.h"
#include "sim/io/schema/job.pb.h"

namespace clustersim {

// Catalog entry checks (registered in Catalog's loader).
void check_dataloading_cost(const FieldChecker& entry);

// The entry whose cpu_model_match occurs in the instance's cpu.model (case-insensitive), the
// first in name order; nullptr when none does or the instance names no CPU model.
const schema::DataloadingCost* find_dataloading_cost(const Catalog& catalog,
                                                     const schema::InstanceType& instance);

struct SampleCpuCost {
  double worker_s = 0;  // one worker on one vCPU of `instance`, per sample
  std::string stage;    // "CPU decode", "CPU tokenize" or "CPU collate"
};

// CPU seconds one worker spends per sample of `dataset` producing `tensor_bytes` of output, on
// `instance`'s CPU (clock-scaled from the entry's reference clock when the instance gives one).
// Requires: the dataset passed the input checks.
SampleCpuCost sample_cpu_cost(const schema::DataloadingCost& cost,
                              const schema::InstanceType& instance, const schema::Dataset& dataset,
                              double tensor_bytes);

// Seconds one thread of `instance`'s CPU takes to copy `bytes` in host memory.
double host_copy_s(const schema::DataloadingCost& cost, const schema::InstanceType& instance,
                   double bytes);

}  // namespace clustersim
