// Joins the results files of every shard of one sweep into the file a single run of the whole
// sweep gives: the same rows in configuration order, the same counts and attributes. The shards
// may be of any kind of results file (a training sweep's, a serving sizing's), all of one kind.
#pragma once

#include <string>
#include <vector>

#include "sim/sweep/result_row.h"
#include "sim/sweep/results_file.h"

namespace clustersim {

// A kind of results file: its rows' columns (which must outlive the merge) and what writes it,
// as errors name it ("a serving sizing (clustersim serve --out)").
struct ResultsKind {
  const std::vector<ResultColumn>* columns;
  std::string written_by;
};

// Reads `path` as `kinds[expected]`, or else as the first other kind it is. Returns the kind's
// index, or -1 with `*error` from reading it as kinds[expected]. `regress` tells its baseline's
// kind with it (expected 0, a training sweep's).
int read_results_of_kind(const std::string& path, const std::vector<ResultsKind>& kinds,
                         size_t expected, ResultsFile* file, std::string* error);

// Requires nothing of the inputs: each must be a complete shard of the same sweep (scenario,
// prices, catalog, tool version, options, other inputs, shard count) and of one of `kinds`, all of
// the kind of the first, every shard present once; otherwise returns false with `*error` naming
// the offending file (and what differs). Writes `output`, with the rows' kind, atomically
// (results_file.h).
bool merge_results(const std::vector<std::string>& inputs, const std::string& output,
                   const std::vector<ResultsKind>& kinds, std::string* error);

}  // namespace clustersim
