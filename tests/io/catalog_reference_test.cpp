// Checks of a scenario's references to catalog entries: storage volumes.
#include "sim/io/catalog_reference.h"

#include <catch2/catch.hpp>

#include "sim/io/text_file.h"
#include "tests/testing/shipped_catalog.h"
#include "tests/testing/temp_dir.h"

namespace clustersim {
namespace {

// Checks the StorageVolume in `text`; returns the tier (or null) and the diagnostics printed.
std::pair<const schema::StorageTier*, std::string> check_volume(const std::string& text) {
  testing::TempDir dir;
  const std::string path = dir.write("volume.textproto", text);
  Diagnostics diagnostics;
  auto file = read_text_file<schema::StorageVolume>(path, &diagnostics);
  REQUIRE(file != nullptr);
  const schema::StorageTier* tier =
      resolve_storage_volume(FieldChecker::root(*file, &diagnostics), testing::shipped_catalog());
  return {tier, diagnostics.to_string()};
}

TEST_CASE("a storage volume names a known tier at a capacity within its range") {
  const auto [tier, text] = check_volume("tier: \"aliyun.essd.pl1\" capacity_gib: 500");
  REQUIRE(tier != nullptr);
  CHECK(tier->product() == "ESSD PL1");
  CHECK(text.empty());
}

TEST_CASE("an unknown tier gets the closest name, a capacity out of range the tier's range") {
  const auto unknown = check_volume("tier: \"aliyun.essd.pl4\" capacity_gib: 500");
  CHECK(unknown.first == nullptr);
  CHECK_THAT(unknown.second, Catch::Contains("volume.textproto:1:1: tier: unknown storage tier "
                                             "\"aliyun.essd.pl4\"") &&
                                 Catch::Contains("did you mean"));
  const auto small = check_volume("tier: \"aliyun.essd.pl3\" capacity_gib: 100");
  CHECK(small.first == nullptr);
  CHECK_THAT(small.second, Catch::Contains("capacity_gib: must lie within aliyun.essd.pl3's "
                                           "1261..32768 GiB"));
  const auto missing = check_volume("tier: \"aliyun.essd.pl1\"");
  CHECK_THAT(missing.second, Catch::Contains("capacity_gib"));
}

}  // namespace
}  // namespace clustersim
