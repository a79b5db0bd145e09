// Tests of the HDF5 results file: a file appears only when committed, every kind of cell and the
// summary round-trip with their types (long text whole, yes/no as the FALSE/TRUE enum), the same
// rows give the same bytes however they were appended, a file whose bytes no longer match its seal
// (a flipped bit anywhere, a truncated copy, a damaged header, a file of another program) is refused
// before libhdf5 reads it, a sealed file whose row count disagrees with its attribute is
// refused, and a file of an older version (a column added since) reads with that column empty.
#include <hdf5.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "sim/io/output_file.h"
#include "sim/sweep/results_file.h"
#include "sim/sweep/results_seal.h"
#include "tests/testing/temp_dir.h"

namespace clustersim {
namespace {

using testing::TempDir;

ResultRow sample_row(int index, const std::string& instance) {
  ResultRow row(result_columns().size());
  for (size_t i = 0; i < row.size(); ++i) {
    if (result_columns()[i].kind == ResultColumn::Kind::kInteger) row[i] = 1.0;
    if (result_columns()[i].kind == ResultColumn::Kind::kBool) row[i] = false;
  }
  row[0] = static_cast<double>(index);
  row[result_column("instance")] = instance;
  row[result_column("calibrated")] = true;
  row[result_column("step_s")] = 1.25;
  return row;
}

SweepSummary summary_of(int64_t rows) {
  SweepSummary s;
  s.scenario_name = "tést";  // UTF-8
  s.scenario_text = "name: \"tést\"\n";
  s.tool_version = "0.1.0";
  s.catalog = "models/a.textproto 0123\n";
  s.candidates = 10;
  s.shard = 1;
  s.shard_count = 3;
  s.next_index = 10;
  s.configurations = rows;
  s.rows = rows;
  s.simulated = 1;
  s.pruned = {{"tensor parallel does not divide the heads", 4}, {"too few GPUs", 2}};
  s.complete = true;
  return s;
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST_CASE("a results file appears under its name only when committed") {
  TempDir dir;
  const std::string path = dir.path() + "/r.h5";
  std::string error;
  {
    auto writer = ResultsWriter::create(path, &error);
    REQUIRE(writer != nullptr);
    REQUIRE(writer->append({sample_row(0, "a")}, &error));
  }  // abandoned: never committed
  CHECK_FALSE(std::filesystem::exists(path));
  CHECK_FALSE(std::filesystem::exists(temporary_path(path)));
  CHECK_FALSE(ResultsWriter::create(dir.path() + "/no/such/dir/r.h5", &error));
  CHECK_THAT(error, Catch::Contains("no directory"));
  CHECK_FALSE(ResultsWriter::create(dir.path(), &error));
  CHECK_THAT(error, Catch::Contains("is a directory"));
}

TEST_CASE("results files keep every cell and the summary with their types") {
  TempDir dir;
  const std::string path = dir.path() + "/r.h5";
  const std::string long_name(100, 'x');  // longer than any fixed-width text would hold
  std::vector<ResultRow> rows = {sample_row(3, "aws.p5.48xlarge"), sample_row(4, long_name)};
  rows[1][result_column("step_s")] = Table::Cell();  // empty stays empty
  std::string error;
  auto writer = ResultsWriter::create(path, &error);
  REQUIRE(writer->append(rows, &error));
  REQUIRE(writer->commit(summary_of(2), &error));
  ResultsFile file;
  REQUIRE(read_results(path, &file, &error));
  CHECK(file.rows == rows);
  CHECK(file.summary == summary_of(2));

  // Typed as numpy reads them: int64 counts, a FALSE/TRUE enum, UTF-8 text of any length.
  const hid_t h5 = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t rows_attribute = H5Aopen(h5, "rows", H5P_DEFAULT);
  const hid_t rows_type = H5Aget_type(rows_attribute);
  CHECK(H5Tget_class(rows_type) == H5T_INTEGER);
  CHECK(H5Tget_size(rows_type) == 8);
  const hid_t dataset = H5Dopen2(h5, "results", H5P_DEFAULT);
  const hid_t row_type = H5Dget_type(dataset);
  const hid_t instance = H5Tget_member_type(row_type, H5Tget_member_index(row_type, "instance"));
  CHECK(H5Tis_variable_str(instance) > 0);
  CHECK(H5Tget_cset(instance) == H5T_CSET_UTF8);
  const hid_t calibrated =
      H5Tget_member_type(row_type, H5Tget_member_index(row_type, "calibrated"));
  CHECK(H5Tget_class(calibrated) == H5T_ENUM);
  char name[8] = {};
  int8_t one = 1;
  H5Tenum_nameof(calibrated, &one, name, sizeof name);
  CHECK(std::string(name) == "TRUE");
  for (hid_t t : {instance, calibrated, row_type, rows_type}) H5Tclose(t);
  H5Aclose(rows_attribute);
  H5Dclose(dataset);
  H5Fclose(h5);
}

TEST_CASE("the same rows give the same file bytes however they were appended") {
  TempDir dir;
  std::vector<ResultRow> rows;
  for (int i = 0; i < 2500; ++i) rows.push_back(sample_row(i, "aws.p4d." + std::to_string(i)));
  std::string error;
  auto at_once = ResultsWriter::create(dir.path() + "/a.h5", &error);
  REQUIRE(at_once->append(rows, &error));
  REQUIRE(at_once->commit(summary_of(2500), &error));
  auto piecewise = ResultsWriter::create(dir.path() + "/b.h5", &error);
  for (size_t i = 0; i < rows.size(); i += 7) {
    const std::vector<ResultRow> part(rows.begin() + i,
                                      rows.begin() + std::min(rows.size(), i + 7));
    REQUIRE(piecewise->append(part, &error));
  }
  REQUIRE(piecewise->commit(summary_of(2500), &error));
  CHECK(bytes_of(dir.path() + "/a.h5") == bytes_of(dir.path() + "/b.h5"));
}

std::string write_two_rows(const TempDir& dir) {
  const std::string path = dir.path() + "/r.h5";
  std::string error;
  auto writer = ResultsWriter::create(path, &error);
  REQUIRE(writer->append({sample_row(0, "a"), sample_row(1, "b")}, &error));
  REQUIRE(writer->commit(summary_of(2), &error));
  return path;
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST_CASE("a results file whose bytes no longer match its seal is refused, never read") {
  TempDir dir;
  const std::string path = write_two_rows(dir);
  const std::string sealed = bytes_of(path);
  REQUIRE(sealed.compare(0, 24, "clustersim results file\n") == 0);
  ResultsFile file;
  std::string error;
  REQUIRE(read_results(path, &file, &error));
  SECTION("one flipped bit anywhere after the header: superblock, metadata, chunks, attributes") {
    // libhdf5 crashed or hung on some of these before the seal (a random-damage run: 29 of 150).
    for (size_t at = kResultsSealBytes; at < sealed.size(); at += 61) {
      std::string damaged = sealed;
      damaged[at] = static_cast<char>(damaged[at] ^ (1 << (at % 8)));
      write_bytes(path, damaged);
      INFO("byte " << at);
      CHECK_FALSE(read_results(path, &file, &error));
      CHECK_THAT(error, Catch::Contains("no longer match the checksum"));
    }
  }
  SECTION("a truncated copy") {
    write_bytes(path, sealed.substr(0, sealed.size() - 100));
    CHECK_FALSE(read_results(path, &file, &error));
    CHECK_THAT(error, Catch::Contains("holds " + std::to_string(sealed.size() - 100) +
                                      " bytes but was written with " +
                                      std::to_string(sealed.size())));
  }
  SECTION("a damaged header") {
    std::string damaged = sealed;
    damaged[damaged.find("crc32 ") + 6] = 'z';
    write_bytes(path, damaged);
    CHECK_FALSE(read_results(path, &file, &error));
    CHECK_THAT(error, Catch::Contains("its clustersim header is damaged"));
  }
  SECTION("a file shorter than the header, and an HDF5 file of another program") {
    write_bytes(path, "x");
    CHECK_FALSE(read_results(path, &file, &error));
    CHECK_THAT(error, Catch::Contains("r.h5: not a clustersim results file"));
    H5Fclose(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    CHECK_FALSE(read_results(path, &file, &error));
    CHECK_THAT(error, Catch::Contains("r.h5: not a clustersim results file"));
  }
  SECTION("a CSV export, named as one") {
    const std::string csv = dir.path() + "/r.csv";
    write_bytes(csv, "index,instance\n0,aws.p5.48xlarge\n");
    CHECK_FALSE(read_results(csv, &file, &error));
    CHECK(error == csv + ": not a clustersim results file: a CSV or JSON export holds the rows "
                         "only; plot, merge and regress read the HDF5 file --out FILE.h5 writes");
  }
}

TEST_CASE("a file written before a column was added reads with it empty and named") {
  TempDir dir;
  // This version's columns less pool_placement: what the version before it wrote.
  std::vector<ResultColumn> older = result_columns();
  const int placement = result_column("pool_placement");
  older.erase(older.begin() + placement);
  std::vector<ResultRow> rows = {sample_row(0, "a"), sample_row(1, "b")};
  rows[1][placement] = "aws.p5.48xlarge: stage 1 + aws.p4d.24xlarge: stage 2";
  std::vector<ResultRow> stored = rows;
  for (ResultRow& row : stored) row.erase(row.begin() + placement);
  std::string error;
  const std::string path = dir.path() + "/old.h5";
  auto writer = ResultsWriter::create(path, &error, older);
  REQUIRE(writer->append(stored, &error));
  REQUIRE(writer->commit(summary_of(2), &error));
  ResultsFile file;
  REQUIRE(read_results(path, &file, &error));
  CHECK(file.absent_columns == std::vector<std::string>{"pool_placement"});
  rows[1][placement] = Table::Cell();
  CHECK(file.rows == rows);
  CHECK(file.summary == summary_of(2));

  // A column this version does not know is another program's, or a newer version's: refused.
  std::vector<ResultColumn> newer = result_columns();
  newer.push_back(identity_column("from_the_future", "?", ResultColumn::Kind::kText));
  auto ahead = ResultsWriter::create(dir.path() + "/new.h5", &error, newer);
  std::vector<ResultRow> wider = {sample_row(0, "a")};
  wider[0].emplace_back();
  REQUIRE(ahead->append(wider, &error));
  REQUIRE(ahead->commit(summary_of(1), &error));
  CHECK_FALSE(read_results(dir.path() + "/new.h5", &file, &error));
  CHECK_THAT(error, Catch::EndsWith("new.h5: not a results file of this version of clustersim "
                                    "(columns differ)"));
}

TEST_CASE("a results file whose row count disagrees with its rows attribute is refused") {
  TempDir dir;
  const std::string path = write_two_rows(dir);
  std::string error;
  const hid_t h5 = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  const hid_t attribute = H5Aopen(h5, "rows", H5P_DEFAULT);
  const int64_t fewer = 1;
  H5Awrite(attribute, H5T_NATIVE_INT64, &fewer);
  H5Aclose(attribute);
  H5Fclose(h5);
  ResultsFile file;
  CHECK_FALSE(read_results(path, &file, &error));
  CHECK_THAT(error, Catch::Contains("no longer match the checksum"));
  // Sealed as it is now (as a writer that miscounted would have): the count itself is checked.
  REQUIRE(seal_results_file(path, &error));
  CHECK_FALSE(read_results(path, &file, &error));
  CHECK_THAT(error, Catch::Contains("holds 2 rows but its rows attribute says 1"));
}

}  // namespace
}  // namespace clustersim
