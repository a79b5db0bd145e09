// The shipped regression baselines (results/baselines/*.h5) were written with the shipped catalog:
// a baseline left behind by a catalog change makes every fresh clone's `regress` report a changed
// catalog (and compares against numbers the catalog no longer gives). Refresh them with
// tools/refresh_baselines. A baseline is a training sweep's results file or a serving sizing's.
#include <catch2/catch.hpp>
#include <filesystem>

#include "sim/serve/serving_rows.h"
#include "sim/sweep/results_file.h"
#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

TEST_CASE("every shipped baseline was written with the shipped catalog") {
  int baselines = 0, sizings = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(testing::source_path("results/baselines"))) {
    if (entry.path().extension() != ".h5") continue;
    ++baselines;
    ResultsFile file;
    std::string error;
    INFO(entry.path().string());
    const bool sizing = read_results(entry.path().string(), &file, &error, serving_columns());
    sizings += sizing;
    REQUIRE((sizing || read_results(entry.path().string(), &file, &error)));
    CHECK(file.summary.catalog == testing::shipped_catalog().fingerprint());
    CHECK(file.summary.complete);
  }
  CHECK(baselines >= 10);
  CHECK(sizings >= 1);
}

}  // namespace
}  // namespace clustersim
