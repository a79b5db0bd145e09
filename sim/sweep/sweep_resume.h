// Opening the journal of a sweep that writes its rows to a file, for the sweep and serve
// commands alike: afresh, refusing to discard the journal of an interrupted sweep left there
// (hours of work), or, to resume, the interrupted one, refused when it is damaged (sweep_journal.h
// names the record) or another sweep's (naming what changed: the scenario, the catalog, the
// prices, the options, the tool's version, the shard).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/sweep/sweep_journal.h"

namespace clustersim {

// The journal of `out` with rows of `columns`: created with `*summary` (the sweep's identity)
// when not `resume`; else recovered, its rows handed to `visit`, and `*summary` becomes the
// interrupted sweep's (its identity and progress), `*notice` a line for the user ("resuming after
// ..." and what recovery cut off). Null with `*error` (naming the journal) when it cannot be had.
std::unique_ptr<SweepJournal> open_sweep_journal(const std::string& out, bool resume,
                                                 const std::vector<ResultColumn>& columns,
                                                 const SweepJournal::RowVisitor& visit,
                                                 SweepSummary* summary, std::string* notice,
                                                 std::string* error);

}  // namespace clustersim
