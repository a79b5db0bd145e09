// Tests of output files written under a temporary name: nothing at the final name until the
// commit, a failed write leaves nothing at all, and a directory or a missing directory is
// refused before anything is written.
#include <sys/resource.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <filesystem>
#include <fstream>

#include "sim/io/output_file.h"
#include "tests/testing/temp_dir.h"

namespace clustersim {
namespace {

using testing::TempDir;

TEST_CASE("an output file appears whole under its name, only when committed") {
  TempDir dir;
  const std::string path = dir.path() + "/out.csv";
  std::string error;
  {
    OutputFile file;
    REQUIRE(file.open(path, &error));
    file.stream() << "a,b\n";
    CHECK(std::filesystem::exists(temporary_path(path)));
    CHECK_FALSE(std::filesystem::exists(path));
  }  // abandoned
  CHECK_FALSE(std::filesystem::exists(temporary_path(path)));
  OutputFile file;
  REQUIRE(file.open(path, &error));
  file.stream() << "a,b\n1,2\n";
  REQUIRE(file.commit(&error));
  CHECK_FALSE(std::filesystem::exists(temporary_path(path)));
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  CHECK(text == "a,b\n1,2\n");
}

TEST_CASE("an output path that is a directory, in none, or an input is refused before writing") {
  TempDir dir;
  std::string error;
  OutputFile file;
  CHECK_FALSE(file.open(dir.path(), &error));
  CHECK(error == dir.path() + " is a directory");
  CHECK_FALSE(check_output_path(dir.path() + "/missing/out.json", &error));
  CHECK(error == "no directory " + dir.path() + "/missing for " + dir.path() + "/missing/out.json");
  CHECK(check_output_path("relative.csv", &error));
  // `run S --trace S` replaced the scenario with its trace.
  const std::string scenario = dir.write("s.textproto", "name: \"s\"\n");
  CHECK_FALSE(check_output_path(scenario, &error, {"", scenario}));
  CHECK(error == scenario + " is an input of this command: write to another file");
  const std::string other_name = dir.path() + "/./s.textproto";
  CHECK_FALSE(check_output_path(other_name, &error, {scenario}));
  CHECK(error ==
        other_name + " is " + scenario + ", an input of this command: write to another file");
  CHECK(check_output_path(dir.path() + "/trace.json", &error, {scenario}));
}

TEST_CASE("a write that fails (file size limit, as on a full disk) leaves no file") {
  TempDir dir;
  const std::string path = dir.path() + "/big.txt";
  rlimit before{};
  getrlimit(RLIMIT_FSIZE, &before);
  const auto previous = std::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails instead
  rlimit small = before;
  small.rlim_cur = 4096;
  REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
  std::string error;
  {
    OutputFile file;
    REQUIRE(file.open(path, &error));
    for (int i = 0; i < 10000; ++i) file.stream() << "0123456789\n";
    CHECK_FALSE(file.commit(&error));
  }
  setrlimit(RLIMIT_FSIZE, &before);
  std::signal(SIGXFSZ, previous);
  CHECK_THAT(error, Catch::StartsWith("cannot write " + path));
  CHECK_FALSE(std::filesystem::exists(path));
  CHECK_FALSE(std::filesystem::exists(temporary_path(path)));
}

}  // namespace
}  // namespace clustersim
