// Shard files checked against each other, rows put back in configuration order, counts summed.
#include "sim/sweep/results_merge.h"

#include <algorithm>
#include <map>

#include "sim/sweep/sweep_summary.h"

namespace clustersim {

int read_results_of_kind(const std::string& path, const std::vector<ResultsKind>& kinds,
                         size_t expected, ResultsFile* file, std::string* error) {
  std::string as_expected;
  if (read_results(path, file, &as_expected, *kinds[expected].columns)) {
    return static_cast<int>(expected);
  }
  for (size_t k = 0; k < kinds.size(); ++k) {
    std::string ignored;
    if (k != expected && read_results(path, file, &ignored, *kinds[k].columns)) {
      return static_cast<int>(k);
    }
  }
  *error = as_expected;
  return -1;
}

namespace {

std::string shard_name(const SweepSummary& s) {
  return std::to_string(s.shard + 1) + "/" + std::to_string(s.shard_count);
}

}  // namespace

bool merge_results(const std::vector<std::string>& inputs, const std::string& output,
                   const std::vector<ResultsKind>& kinds, std::string* error) {
  if (inputs.empty()) {
    *error = "no results files to merge";
    return false;
  }
  std::vector<ResultRow> rows;
  SweepSummary merged;
  int kind = -1;  // the first shard's
  // shard -> its file; not a slot per shard: a file may declare 2^31 - 1 shards
  std::map<int, std::string> shard_files;
  for (const std::string& path : inputs) {
    ResultsFile file;
    const int read = read_results_of_kind(path, kinds, kind < 0 ? 0 : kind, &file, error);
    if (read < 0) return false;
    if (kind >= 0 && read != kind) {
      *error = path + ": the results of " + kinds[read].written_by + ", not of " +
               kinds[kind].written_by + " as " + inputs.front() + " is";
      return false;
    }
    if (!file.absent_columns.empty()) {
      *error = path + ": written by an older clustersim, without the column " +
               file.absent_columns.front() + ": run its shard again";
      return false;
    }
    const SweepSummary* summary = &file.summary;
    if (!summary->complete) {
      *error = path + ": shard " + shard_name(*summary) + " is not complete (resume it first)";
      return false;
    }
    if (kind < 0) {
      kind = read;
      merged = *summary;
      merged.configurations = merged.rows = merged.simulated = 0;
      merged.pruned.clear();
    } else {
      if (summary->shard_count != merged.shard_count) {
        *error = path + ": shard " + shard_name(*summary) + ", but " + inputs.front() +
                 " is one of " + std::to_string(merged.shard_count) + " shards";
        return false;
      }
      SweepSummary first = merged;  // the identity only: the shards differ in shard and counts
      first.shard = summary->shard;
      if (const std::string changes =
              sweep_identity_changes(first, *summary, "in " + inputs.front(), "here");
          !changes.empty()) {
        *error = path + ": not a shard of the same sweep as " + inputs.front() +
                 ": they differ in " + changes;
        return false;
      }
    }
    std::string& seen = shard_files[summary->shard];
    if (!seen.empty()) {
      *error = path + ": shard " + shard_name(*summary) + " is also in " + seen;
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
  for (int k = 0; k < merged.shard_count; ++k) {
    if (!shard_files.count(k)) {
      *error = "shard " + std::to_string(k + 1) + "/" + std::to_string(merged.shard_count) +
               " is missing";
      return false;
    }
  }
  // Column 0 of every kind is the configuration's index; a configuration's rows (one per billing
  // mode, or concurrency level) all come from one shard, in their order.
  std::stable_sort(rows.begin(), rows.end(), [](const ResultRow& a, const ResultRow& b) {
    return row_number(a, 0) < row_number(b, 0);
  });
  merged.shard = 0;
  merged.shard_count = 1;
  merged.next_index = merged.candidates;
  auto writer = ResultsWriter::create(output, error, *kinds[kind].columns);
  return writer && writer->append(rows, error) && writer->commit(merged, error);
}

}  // namespace clustersim
