// The journal of a sweep that writes its rows to a file: an append-only log ("<out>.partial")
// of checksummed records, the first holding the sweep's summary and the columns of its rows (a
// training sweep's, result_row.h, or a serving sizing's, serving_rows.h), each later one a
// chunk's rows and the progress after it. The final results file is made from the journal once
// the sweep completes (results_export.h, or the serve command from the rows read back).
//
// Crash-consistent: a record counts only when it was written whole with its checksum, so
// whatever instant the process dies at, the journal holds a prefix of complete chunks and at
// most one incomplete record after them (the write the kill interrupted); recovery cuts that off
// and says so, and a resumed sweep continues at the last complete chunk and ends with the file an
// uninterrupted run writes. A whole record that fails its checksum or does not decode is damage
// no kill leaves (another program, the disk): recovery refuses the journal, naming the record
// and its bytes, rather than resume from part of it. (A record reaches the operating system when
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

  // Starts the journal of `out` afresh with `summary` (its identity and zero progress), its rows
  // of `columns` (which must outlive the journal). Returns null with `*error` when it cannot be
  // created.
  static std::unique_ptr<SweepJournal> create(
      const std::string& out, const SweepSummary& summary, std::string* error,
      const std::vector<ResultColumn>& columns = result_columns());
  // Reopens the journal of an interrupted sweep writing `out` with rows of `columns`: `*summary`
  // becomes the summary as of its last complete record, `visit` (may be empty) sees every row of
  // those records in order, and an incomplete last record (a torn write) is cut off so appending
  // continues there, `*cut` (may be null) then saying so ("" when nothing was cut). Returns null
  // with `*error` when there is no journal, it is not one of this version's or of these columns,
  // or a record is damaged (the message names the file, the record and what is wrong).
  static std::unique_ptr<SweepJournal> recover(
      const std::string& out, SweepSummary* summary, const RowVisitor& visit, std::string* error,
      const std::vector<ResultColumn>& columns = result_columns(), std::string* cut = nullptr);
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
  const std::vector<ResultColumn>& columns() const { return *columns_; }

 private:
  SweepJournal(std::string path, int fd, const std::vector<ResultColumn>& columns)
      : path_(std::move(path)), fd_(fd), columns_(&columns) {}
  bool write_record(const std::string& payload, std::string* error);

  std::string path_;
  int fd_;
  const std::vector<ResultColumn>* columns_;
};

}  // namespace clustersim
