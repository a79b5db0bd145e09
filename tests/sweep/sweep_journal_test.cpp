// Tests of a sweep's journal: whatever byte a write was cut at, recovery gives the progress and
// rows of the last whole record and appending continues there; a corrupt record ends what counts;
// and a missing journal or one of other columns is refused.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "sim/sweep/sweep_journal.h"
#include "tests/testing/temp_dir.h"

namespace clustersim {
namespace {

using testing::TempDir;

ResultRow row_with(int index) {
  ResultRow row(result_columns().size());
  row[0] = static_cast<double>(index);
  row[result_column("instance")] = "aws.p5.48xlarge";
  row[result_column("calibrated")] = index % 2 == 0;
  return row;
}

SweepSummary identity() {
  SweepSummary s;
  s.scenario_name = "journal";
  s.scenario_text = "name: \"journal\"";
  s.tool_version = "test";
  s.catalog = "fingerprint";
  s.candidates = 30;
  return s;
}

SweepSummary progress_after(int chunks) {
  SweepSummary s = identity();
  s.next_index = 10 * chunks;
  s.configurations = s.rows = 3 * chunks;
  s.simulated = 2 * chunks;
  if (chunks > 0) s.pruned = {{"too few GPUs", 7 * chunks}};
  return s;
}

std::vector<ResultRow> chunk_rows(int chunk) {
  return {row_with(3 * chunk), row_with(3 * chunk + 1), row_with(3 * chunk + 2)};
}

std::vector<ResultRow> rows_of(const SweepJournal& journal) {
  std::vector<ResultRow> rows;
  std::string error;
  REQUIRE(journal.for_each_row([&](ResultRow&& row) { rows.push_back(std::move(row)); }, &error));
  return rows;
}

// Writes a journal of `chunks` chunks for `out`; returns the file size after each record.
std::vector<uintmax_t> write_journal(const std::string& out, int chunks) {
  std::string error;
  auto journal = SweepJournal::create(out, identity(), &error);
  REQUIRE(journal != nullptr);
  std::vector<uintmax_t> sizes = {std::filesystem::file_size(journal_path(out))};
  for (int c = 0; c < chunks; ++c) {
    REQUIRE(journal->append(chunk_rows(c), progress_after(c + 1), &error));
    sizes.push_back(std::filesystem::file_size(journal_path(out)));
  }
  return sizes;
}

TEST_CASE("a journal cut anywhere in its last record recovers the records before it") {
  TempDir dir;
  const std::string whole = dir.path() + "/whole.h5";
  const std::vector<uintmax_t> sizes = write_journal(whole, 3);
  const std::string out = dir.path() + "/cut.h5";
  // Every cut inside the third chunk's record, as a kill in the middle of its write leaves it.
  for (uintmax_t cut = sizes[2]; cut < sizes[3]; cut += 1) {
    std::filesystem::copy_file(journal_path(whole), journal_path(out),
                               std::filesystem::copy_options::overwrite_existing);
    std::filesystem::resize_file(journal_path(out), cut);
    SweepSummary recovered;
    std::vector<ResultRow> seen;
    std::string error;
    auto journal = SweepJournal::recover(
        out, &recovered, [&](ResultRow&& row) { seen.push_back(std::move(row)); }, &error);
    REQUIRE(journal != nullptr);
    CHECK(recovered == progress_after(2));
    CHECK(seen.size() == 6);
    CHECK(std::filesystem::file_size(journal_path(out)) == sizes[2]);  // the torn tail cut off
    REQUIRE(journal->append(chunk_rows(2), progress_after(3), &error));
    std::vector<ResultRow> all;
    for (int c = 0; c < 3; ++c) {
      for (ResultRow& row : chunk_rows(c)) all.push_back(std::move(row));
    }
    CHECK(rows_of(*journal) == all);
  }
}

TEST_CASE("a corrupt record ends what a journal holds, a missing journal is refused") {
  TempDir dir;
  const std::string out = dir.path() + "/r.h5";
  const std::vector<uintmax_t> sizes = write_journal(out, 3);
  {
    std::fstream file(journal_path(out), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(sizes[1] + 20));  // inside the second chunk's record
    file.put('\x7f');
  }
  SweepSummary recovered;
  std::string error;
  auto journal = SweepJournal::recover(out, &recovered, {}, &error);
  REQUIRE(journal != nullptr);
  CHECK(recovered == progress_after(1));
  CHECK(rows_of(*journal) == chunk_rows(0));
  journal->remove();
  CHECK_FALSE(std::filesystem::exists(journal_path(out)));
  CHECK(SweepJournal::recover(out, &recovered, {}, &error) == nullptr);
  CHECK_THAT(error, Catch::Contains("no interrupted sweep to resume"));
  std::ofstream(journal_path(out)) << "not a journal";
  CHECK(SweepJournal::recover(out, &recovered, {}, &error) == nullptr);
  CHECK_THAT(error, Catch::Contains("not a sweep journal"));
}

}  // namespace
}  // namespace clustersim
