// The HDF5 file of a sweep's results: one compound dataset "results" with a row per evaluated
// configuration (every column of result_row.h, OOM rows included) and string attributes on the
// root group (the scenario text, catalog fingerprint, tool version, counts). Written to
// "<path>.partial" and renamed to <path> only when complete, so a crash never leaves a half file
// under the final name; a partial file can be reopened to resume.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/sweep/result_row.h"

namespace clustersim {

using ResultAttributes = std::map<std::string, std::string>;

class ResultsWriter {
 public:
  // Starts "<path>.partial" afresh with the columns of result_row.h. Returns null with `*error`
  // set when it cannot be created (missing directory, no permission).
  static std::unique_ptr<ResultsWriter> create(const std::string& path, std::string* error);
  // Reopens "<path>.partial" left by an interrupted run; its rows and attributes stay.
  static std::unique_ptr<ResultsWriter> reopen(const std::string& path, std::string* error);
  ~ResultsWriter();
  ResultsWriter(const ResultsWriter&) = delete;
  ResultsWriter& operator=(const ResultsWriter&) = delete;

  // Appends rows and writes them to disk (a crash after this keeps them).
  bool append(const std::vector<ResultRow>& rows, std::string* error);
  bool set_attributes(const ResultAttributes& attributes, std::string* error);
  const ResultAttributes& attributes() const { return attributes_; }
  int64_t row_count() const { return rows_; }
  // Closes the file and renames it to its final path.
  bool commit(std::string* error);

 private:
  struct Handles;
  ResultsWriter(std::string path, std::unique_ptr<Handles> handles);
  std::string path_;
  std::unique_ptr<Handles> handles_;
  ResultAttributes attributes_;
  int64_t rows_ = 0;
};

struct ResultsFile {
  ResultAttributes attributes;
  std::vector<ResultRow> rows;  // in the file's order
};

// Reads a results file. Fails (with `*error`) when it is not one, or when its columns differ
// from this version's (an older tool wrote it).
bool read_results(const std::string& path, ResultsFile* file, std::string* error);

// The path of the file a writer fills before committing it.
std::string partial_path(const std::string& path);

}  // namespace clustersim
