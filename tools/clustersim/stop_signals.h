// SIGINT and SIGTERM (Ctrl-C, a Slurm time limit, a Kubernetes eviction) as a request to stop a
// sweep or a serving sizing: it stops within milliseconds, the chunk under way discarded, leaving
// its journal (.partial) for --resume.
#pragma once

#include "sim/engine/interruption.h"

namespace clustersim::cli {

// The exit status of a command stopped by one, as a shell reports a SIGINT.
inline constexpr int kExitInterrupted = 130;

// Routes SIGINT/SIGTERM to the returned interruption from now until the process exits: called
// before the journal is created, so that a signal that arrives once every row is evaluated lets
// the results file be finished (milliseconds), and one that arrives after it is written, while
// the process tears down, is moot, instead of killing the process between the journal and the
// file or with the file done.
const Interruption* stop_on_signals();

}  // namespace clustersim::cli
