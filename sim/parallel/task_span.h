// A span of time inside one pipeline task, from the task's start: where a layer's expert
// all-to-alls run within a pass, so that a trace can draw them on a track of their own.
#pragma once

#include "sim/util/units.h"

namespace clustersim {

struct TaskSpan {
  Picoseconds start, length;
  const char* name = "";  // a string literal: "dispatch", "combine (backward)", ...
};

}  // namespace clustersim
