// Shard files checked against each other, rows put back in configuration order, counts summed.
#include "sim/sweep/results_merge.h"

#include <algorithm>

#include "sim/sweep/results_file.h"
#include "sim/sweep/sweep_summary.h"

namespace clustersim {

bool merge_results(const std::vector<std::string>& inputs, const std::string& output,
                   std::string* error) {
  if (inputs.empty()) {
    *error = "no results files to merge";
    return false;
  }
  std::vector<ResultRow> rows;
  SweepSummary merged;
  std::vector<std::string> shard_files;
  for (const std::string& path : inputs) {
    ResultsFile file;
    if (!read_results(path, &file, error)) return false;
    if (!file.absent_columns.empty()) {
      *error = path + ": written by an older clustersim, without the column " +
               file.absent_columns.front() + ": run its shard again";
      return false;
    }
    const SweepSummary* summary = &file.summary;
    if (!summary->complete) {
      *error = path + ": shard " + std::to_string(summary->shard + 1) + "/" +
               std::to_string(summary->shard_count) + " is not complete (resume it first)";
      return false;
    }
    if (shard_files.empty()) {
      merged = *summary;
      shard_files.resize(summary->shard_count);
      merged.configurations = merged.rows = merged.simulated = 0;
      merged.pruned.clear();
    } else if (!summary->same_sweep(merged) || summary->shard_count != merged.shard_count) {
      *error = path + ": not a shard of the same sweep as " + inputs.front() +
               " (scenario, catalog, tool version or shard count differ)";
      return false;
    }
    std::string& seen = shard_files[summary->shard];
    if (!seen.empty()) {
      *error = path + ": shard " + std::to_string(summary->shard + 1) + " is also in " + seen;
      return false;
    }
    seen = path;
    merged.configurations += summary->configurations;
    merged.rows += summary->rows;
    merged.simulated += summary->simulated;
    for (const auto& [reason, count] : summary->pruned) merged.pruned[reason] += count;
    rows.insert(rows.end(), std::make_move_iterator(file.rows.begin()),
                std::make_move_iterator(file.rows.end()));
  }
  for (size_t k = 0; k < shard_files.size(); ++k) {
    if (shard_files[k].empty()) {
      *error = "shard " + std::to_string(k + 1) + "/" + std::to_string(shard_files.size()) +
               " is missing";
      return false;
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const ResultRow& a, const ResultRow& b) {
    return row_number(a, 0) < row_number(b, 0);
  });
  merged.shard = 0;
  merged.shard_count = 1;
  merged.next_index = merged.candidates;
  auto writer = ResultsWriter::create(output, error);
  return writer && writer->append(rows, error) && writer->commit(merged, error);
}

}  // namespace clustersim
