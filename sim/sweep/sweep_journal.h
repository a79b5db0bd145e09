// The journal of a sweep that writes its rows to a file: an append-only log ("<out>.partial")
// of checksummed records, the first holding the sweep's summary and this version's columns,
// each later one a chunk's rows and the progress after it. The final results file is made from
// the journal once the sweep completes (results_export.h).
//
// Crash-consistent: a record counts only when it was written whole with its checksum, so
// whatever instant the process dies at, the journal holds a prefix of complete chunks; recovery
// cuts off a torn or corrupt tail, and a resumed sweep continues at the last complete chunk and
// ends with the file an uninterrupted run writes. (A record reaches the operating system when
// append() returns, so it survives the process being killed; a power loss may lose the last
// records, never mix them.)
//
// Record framing: a 4-byte little-endian payload length, the payload's CRC-32 (4 bytes), then the
// payload: a type byte ('S' summary, 'C' chunk) and its fields. Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/sweep/result_row.h"
#include "sim/sweep/sweep_summary.h"

namespace clustersim {

// The path of the journal of a sweep writing `out`.
std::string journal_path(const std::string& out);

class SweepJournal {
 public:
  using RowVisitor = std::function<void(ResultRow&& row)>;

  // Starts the journal of `out` afresh with `summary` (its identity and zero progress). Returns
  // null with `*error` when it cannot be created.
  static std::unique_ptr<SweepJournal> create(const std::string& out, const SweepSummary& summary,
                                              std::string* error);
  // Reopens the journal of an interrupted sweep writing `out`: `*summary` becomes the summary as
  // of its last complete record, `visit` (may be empty) sees every row of those records in order,
  // and whatever follows them (a torn write) is cut off so appending continues there. Returns
  // null with `*error` when there is no journal or it is not one of this version's.
  static std::unique_ptr<SweepJournal> recover(const std::string& out, SweepSummary* summary,
                                               const RowVisitor& visit, std::string* error);
  ~SweepJournal();
  SweepJournal(const SweepJournal&) = delete;
  SweepJournal& operator=(const SweepJournal&) = delete;

  // Appends a chunk: its rows and `progress` (the summary after it; only the progress fields are
  // recorded). Returns false with `*error` when the write fails (disk full).
  bool append(const std::vector<ResultRow>& rows, const SweepSummary& progress,
              std::string* error);
  // Reads every recorded row back, in order.
  bool for_each_row(const RowVisitor& visit, std::string* error) const;
  // Deletes the journal (after its results file is complete).
  void remove();

 private:
  SweepJournal(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  bool write_record(const std::string& payload, std::string* error);

  std::string path_;
  int fd_;
};

}  // namespace clustersim
