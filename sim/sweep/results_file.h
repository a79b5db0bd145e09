// The HDF5 file of a sweep's results: one compound dataset "results" with a row per result row
// (every column of result_row.h, OOM rows included; or of another column list, e.g. a serving
// sizing's, sim/serve/serving_rows.h) and the sweep's summary as typed attributes
// of the root group (sweep_summary.h). Written under a temporary name and renamed into place
// only when complete (output_file.h), so a crash never leaves a half file under the final name.
// Its first 512 bytes (the HDF5 user block) are a seal (results_seal.h): a file whose bytes no
// longer match it is refused before libhdf5 reads it.
//
// The encoding is the one numpy and pandas read as they are: integers int64, reals float64 (NaN
// when empty), yes/no as HDF5's FALSE/TRUE enum (numpy bool), text as variable-length UTF-8;
// attributes int64, bool or UTF-8 text, the pruning reasons as two arrays (pruned_reasons,
// pruned_counts). With h5py and pandas:
//   df = pd.DataFrame(h5py.File("x.h5")["results"][:])
//   df = df.apply(lambda c: c.str.decode("utf-8") if c.dtype == object else c)
// (h5py returns variable-length text inside a compound as bytes; the second line makes it str).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/sweep/result_row.h"
#include "sim/sweep/sweep_summary.h"

namespace clustersim {

class ResultsWriter {
 public:
  // Starts the temporary file of `path` afresh, its rows of `columns` (a training sweep's, or
  // another list such as a serving sizing's; it must outlive the writer). Returns null with
  // `*error` set when it cannot be created (missing directory, `path` a directory, no permission).
  static std::unique_ptr<ResultsWriter> create(
      const std::string& path, std::string* error,
      const std::vector<ResultColumn>& columns = result_columns());
  ~ResultsWriter();  // without a commit, removes the temporary file
  ResultsWriter(const ResultsWriter&) = delete;
  ResultsWriter& operator=(const ResultsWriter&) = delete;

  // Appends rows. The file's layout depends only on the rows, not on how they were split into
  // calls: the same rows give the same bytes.
  bool append(const std::vector<ResultRow>& rows, std::string* error);
  int64_t row_count() const { return rows_; }
  // Writes `summary` as the file's attributes, closes it and renames it to its final path.
  // Requires: summary.rows == row_count().
  bool commit(const SweepSummary& summary, std::string* error);

 private:
  struct Handles;
  ResultsWriter(std::string path, std::unique_ptr<Handles> handles);
  bool write_block(std::string* error);
  std::string path_;
  std::unique_ptr<Handles> handles_;
  std::vector<ResultRow> block_;  // rows not yet written: the file is written in fixed blocks
  int64_t rows_ = 0;
};

struct ResultsFile {
  SweepSummary summary;
  std::vector<ResultRow> rows;  // in the file's order
  // Keys of the columns the file lacks, in column order: an older version wrote it before they
  // were added (e.g. pool_placement). Their cells read as empty.
  std::vector<std::string> absent_columns;
};

// Reads a results file. Fails (with `*error` naming the file) when it is not one, when its bytes
// do not match its seal (damaged, truncated, edited by another program), when it has a column
// `columns` lacks or one of another type, or attributes other than this version's, or when its row
// count disagrees with its `rows` attribute. `columns`: this version's; a file lacking some of
// them (but the configuration index) is read with those listed in absent_columns.
bool read_results(const std::string& path, ResultsFile* file, std::string* error,
                  const std::vector<ResultColumn>& columns = result_columns());

}  // namespace clustersim
