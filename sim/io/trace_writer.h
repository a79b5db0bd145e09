// Writes a Timeline as a Chrome trace (JSON "traceEvents" of complete events), which
// ui.perfetto.dev and chrome://tracing open: one process per group, one thread per track.
#pragma once

#include <map>
#include <ostream>
#include <string>

#include "sim/engine/timeline.h"

namespace clustersim {

// What a trace shows, written as the trace's "otherData" (Perfetto lists it under the trace's
// metadata): e.g. the tool version and the configuration.
using TraceMetadata = std::map<std::string, std::string>;

// Groups and tracks are numbered in order of first use; times in microseconds.
void write_chrome_trace(const Timeline& timeline, const TraceMetadata& metadata,
                        std::ostream& out);

}  // namespace clustersim
