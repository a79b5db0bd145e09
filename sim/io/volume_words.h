// A storage volume a scenario names, in the short words tables and labels print.
#pragma once

#include <string>

#include "sim/io/schema/storage.pb.h"

namespace clustersim {

// "aws.ebs.gp3 1000 GiB", with the performance bought above the baseline where the volume buys
// some: "aws.ebs.gp3 1000 GiB 1000 MiB/s 4000 IOPS" (throughput in MiB/s, as providers sell it).
std::string volume_words(const schema::StorageVolume& volume);

}  // namespace clustersim
