// A span of time inside one pipeline task, from the task's start: where a layer's expert
// all-to-alls run within a pass, so that a trace can draw them on a track of their own and the
// pipeline simulation can run those that leave the NVLink domain on its network
// (expert_network_traffic.h).
#pragma once

#include "sim/util/units.h"

namespace clustersim {

struct TaskSpan {
  Picoseconds start, length;
  const char* name = "";  // a string literal: "dispatch", "combine (backward)", ...
  double bytes = 0;       // an all-to-all's per-GPU send buffer (nccl-tests' size)
};

}  // namespace clustersim
