// The results file of a sweep made from its journal (sweep_journal.h) once the sweep is
// complete: HDF5 (FILE.h5, results_file.h), CSV (FILE.csv) or JSON (FILE.json), by the name's
// ending. Whatever the format, the file appears under its name only when whole (output_file.h).
#pragma once

#include <optional>
#include <string>

#include "sim/sweep/sweep_journal.h"
#include "sim/sweep/sweep_summary.h"

namespace clustersim {

enum class ResultsFormat { kHdf5, kCsv, kJson };

// The format a results path names by its ending (.h5, .csv, .json); nullopt for any other.
std::optional<ResultsFormat> results_format(const std::string& path);

// Writes every row of `journal` and (HDF5 only: CSV and JSON have only the rows) `summary` to
// `path`. Returns false with `*error` when a write fails. Requires: results_format(path); a
// training sweep's journal (a serving sizing's report writes its rows itself, serve_command.cpp).
bool export_results(const SweepJournal& journal, const SweepSummary& summary,
                    const std::string& path, std::string* error);

}  // namespace clustersim
