// Tests of a sweep's journal: whatever byte a write was cut at, recovery gives the progress and
// rows of the last whole record, says what it cut, and appending continues there; a damaged
// record, a cut-off first record, a missing journal or one of other columns is refused, named;
// and resuming against another sweep's journal names what changed.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "sim/sweep/sweep_journal.h"
#include "sim/sweep/sweep_resume.h"
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
    std::string error, cut_note;
    auto journal = SweepJournal::recover(
        out, &recovered, [&](ResultRow&& row) { seen.push_back(std::move(row)); }, &error,
        result_columns(), &cut_note);
    REQUIRE(journal != nullptr);
    CHECK(recovered == progress_after(2));
    CHECK(cut_note == (cut == sizes[2] ? ""
                                       : journal_path(out) + ": cut off its last " +
                                             std::to_string(cut - sizes[2]) +
                                             " bytes, an incomplete record 4 (from byte " +
                                             std::to_string(sizes[2]) +
                                             ") (the write the interruption stopped), and "
                                             "continues before it"));
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

TEST_CASE("a damaged record or a cut-off first record is refused and named, as is a missing "
          "journal") {
  TempDir dir;
  const std::string out = dir.path() + "/r.h5";
  const std::vector<uintmax_t> sizes = write_journal(out, 3);
  const std::string whole = dir.path() + "/whole.partial";
  std::filesystem::copy_file(journal_path(out), whole);
  SweepSummary recovered;
  std::string error;
  SECTION("a byte changed inside a whole record, even the last one") {
    for (const uintmax_t at : {sizes[1] + 20, sizes[2] + 20}) {
      std::filesystem::copy_file(whole, journal_path(out),
                                 std::filesystem::copy_options::overwrite_existing);
      {
        std::fstream file(journal_path(out), std::ios::in | std::ios::out | std::ios::binary);
        file.seekp(static_cast<std::streamoff>(at));
        file.put('\x7f');
      }
      const int record = at < sizes[2] ? 3 : 4;  // the summary is record 1
      const uintmax_t from = at < sizes[2] ? sizes[1] : sizes[2];
      CHECK(SweepJournal::recover(out, &recovered, {}, &error) == nullptr);
      CHECK(error == journal_path(out) + ": record " + std::to_string(record) + " (from byte " +
                         std::to_string(from) +
                         ") is damaged (its length or checksum is wrong, which no interruption "
                         "leaves); delete it to start over");
      CHECK(std::filesystem::file_size(journal_path(out)) == sizes[3]);  // left as it was
    }
  }
  SECTION("the summary cut off") {
    std::filesystem::resize_file(journal_path(out), sizes[0] - 3);
    CHECK(SweepJournal::recover(out, &recovered, {}, &error) == nullptr);
    CHECK(error == journal_path(out) +
                       ": its first record (the sweep's identity) is cut off (the file ends at "
                       "byte " +
                       std::to_string(sizes[0] - 3) + "); delete it to start over");
  }
  SECTION("missing, not a journal, or of other columns") {
    std::filesystem::remove(journal_path(out));
    CHECK(SweepJournal::recover(out, &recovered, {}, &error) == nullptr);
    CHECK_THAT(error, Catch::Contains("no interrupted sweep to resume"));
    std::ofstream(journal_path(out)) << "not a journal";
    CHECK(SweepJournal::recover(out, &recovered, {}, &error) == nullptr);
    CHECK_THAT(error, Catch::Contains("not a sweep journal"));
    std::filesystem::copy_file(whole, journal_path(out),
                               std::filesystem::copy_options::overwrite_existing);
    const std::vector<ResultColumn> other(result_columns().begin(), result_columns().end() - 1);
    CHECK(SweepJournal::recover(out, &recovered, {}, &error, other) == nullptr);
    CHECK_THAT(error, Catch::Contains("written by another version of clustersim or by another "
                                      "command"));
  }
}

TEST_CASE("resuming another sweep's journal is refused, naming what changed") {
  TempDir dir;
  const std::string out = dir.path() + "/r.h5";
  write_journal(out, 1);
  SweepSummary now = identity();
  std::string notice, error;
  const auto open = [&] {
    return open_sweep_journal(out, true, result_columns(), {}, &now, &notice, &error);
  };
  now.scenario_text += " # edited";
  now.options = "--max-rate";
  CHECK(open() == nullptr);
  CHECK(error == journal_path(out) +
                     " is the journal of another sweep: since it was interrupted, the scenario "
                     "file's text and the options (none then, --max-rate now) changed (resume "
                     "with the inputs it had, or delete it to start over)");
  now = identity();
  now.catalog = "another fingerprint";
  now.prices = "prices";
  now.shard_count = 2;
  now.other_inputs = "trace of 3 requests, CRC-32 00000001";
  CHECK(open() == nullptr);
  CHECK_THAT(error, Catch::Contains("the catalog (its fingerprint), the --prices file's text, the "
                                    "shard (1/1 then, 1/2 now) and the files the scenario reads "
                                    "(none then, trace of 3 requests, CRC-32 00000001 now) "
                                    "changed"));
  now = identity();
  REQUIRE(open() != nullptr);
  CHECK(now == progress_after(1));
  CHECK(notice == "resuming after 3 configurations");
  // Not resuming: the interrupted sweep's journal is kept, not started over.
  CHECK(open_sweep_journal(out, false, result_columns(), {}, &now, &notice, &error) == nullptr);
  CHECK_THAT(error, Catch::EndsWith("holds an interrupted sweep: add --resume to continue it, or "
                                    "delete it to start over"));
}

}  // namespace
}  // namespace clustersim
