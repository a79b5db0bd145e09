// Streams the journal's rows into the chosen format.
#include "sim/sweep/results_export.h"

#include "sim/io/output_file.h"
#include "sim/io/table.h"
#include "sim/sweep/results_file.h"
#include "sim/util/check.h"

namespace clustersim {
namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool export_hdf5(const SweepJournal& journal, const SweepSummary& summary,
                 const std::string& path, std::string* error) {
  auto writer = ResultsWriter::create(path, error);
  if (!writer) return false;
  bool written = true;
  std::vector<ResultRow> one(1);
  const bool read = journal.for_each_row(
      [&](ResultRow&& row) {
        one.front() = std::move(row);
        written = written && writer->append(one, error);
      },
      error);
  return read && written && writer->commit(summary, error);
}

bool export_text(const SweepJournal& journal, OutputFormat format, const std::string& path,
                 std::string* error) {
  OutputFile file;
  if (!file.open(path, error)) return false;
  StreamingTable table(&file.stream(), format, result_column_keys());
  const bool read =
      journal.for_each_row([&](ResultRow&& row) { table.add_row(row); }, error);
  if (!read) return false;
  table.finish();
  return file.commit(error);
}

}  // namespace

std::optional<ResultsFormat> results_format(const std::string& path) {
  if (ends_with(path, ".h5")) return ResultsFormat::kHdf5;
  if (ends_with(path, ".csv")) return ResultsFormat::kCsv;
  if (ends_with(path, ".json")) return ResultsFormat::kJson;
  return std::nullopt;
}

bool export_results(const SweepJournal& journal, const SweepSummary& summary,
                    const std::string& path, std::string* error) {
  const std::optional<ResultsFormat> format = results_format(path);
  CLUSTERSIM_CHECK(format.has_value(), "a results path of no known format");
  switch (*format) {
    case ResultsFormat::kHdf5:
      return export_hdf5(journal, summary, path, error);
    case ResultsFormat::kCsv:
      return export_text(journal, OutputFormat::kCsv, path, error);
    case ResultsFormat::kJson:
      return export_text(journal, OutputFormat::kJson, path, error);
  }
  return false;
}

}  // namespace clustersim
