// Writes a Timeline as a Chrome trace (JSON "traceEvents" of complete events), which
// ui.perfetto.dev and chrome://tracing open: one process per group, one thread per track.
#pragma once

#include <ostream>

#include "sim/engine/timeline.h"

namespace clustersim {

// Groups and tracks are numbered in order of first use; times in microseconds.
void write_chrome_trace(const Timeline& timeline, std::ostream& out);

}  // namespace clustersim
