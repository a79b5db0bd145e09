// The size of one element of each numeric format a tensor is stored or computed in.
#pragma once

#include "sim/io/schema/common.pb.h"

namespace clustersim {

// Bytes of one element: FP32/TF32 4, FP16/BF16 2, FP8/INT8 1, FP4/INT4 0.5.
double bytes_per_element(schema::Precision precision);

}  // namespace clustersim
