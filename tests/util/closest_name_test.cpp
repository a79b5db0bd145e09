// Tests of edit distance and "did you mean" suggestions.
#include "sim/util/closest_name.h"

#include <catch2/catch.hpp>

namespace clustersim {

TEST_CASE("edit_distance counts insertions, deletions and substitutions, ignoring case") {
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("H100", "h100") == 0);
}

TEST_CASE("closest_name suggests near misses and unprefixed names, nothing for far ones") {
  const std::vector<std::string> names = {"aws.p5.48xlarge", "aws.p4d.24xlarge", "aws.g5.xlarge"};
  CHECK(closest_name("aws.p5.48xlarg", names) == "aws.p5.48xlarge");
  CHECK(closest_name("aws.p4.24xlarge", names) == "aws.p4d.24xlarge");
  CHECK(closest_name("p5.48xlarge", names) == "aws.p5.48xlarge");
  CHECK_FALSE(closest_name("tpu-v5", names).has_value());
  CHECK(closest_name("aws.p5.48xl", names) == "aws.p5.48xlarge");  // the only extension
  CHECK_FALSE(closest_name("aws.", names).has_value());             // extended by all three
  CHECK(did_you_mean("aws.p5.48xlarg", names) == " (did you mean \"aws.p5.48xlarge\"?)");
  CHECK(did_you_mean("tpu-v5", names).empty());
}

TEST_CASE("closest_name breaks ties in edits by the longest shared beginning, then list order") {
  // The FSx for Lustre tiers in catalog (name) order: with '.' for '-', the typed name is the
  // beginning of the PERSISTENT_2 ones, but four tiers are 5 edits away from it.
  const std::vector<std::string> fsx = {
      "aws.fsx-lustre.persistent1-100", "aws.fsx-lustre.persistent1-200",
      "aws.fsx-lustre.persistent1-50",  "aws.fsx-lustre.persistent2-1000",
      "aws.fsx-lustre.persistent2-125", "aws.fsx-lustre.persistent2-250",
      "aws.fsx-lustre.persistent2-500", "aws.fsx-lustre.scratch2"};
  REQUIRE(edit_distance("aws.fsx.lustre.persistent2", "aws.fsx-lustre.persistent1-200") == 5);
  REQUIRE(edit_distance("aws.fsx.lustre.persistent2", "aws.fsx-lustre.persistent2-125") == 5);
  CHECK(closest_name("aws.fsx.lustre.persistent2", fsx) == "aws.fsx-lustre.persistent2-125");
  // Equal edits: the longer shared beginning, though later in the list.
  CHECK(closest_name("aws.fsx-lustre.persistent2-100", fsx) == "aws.fsx-lustre.persistent2-1000");
  // Equal edits and equal shared beginnings (persistent2-250 and -500): the first in the list.
  CHECK(closest_name("aws.fsx-lustre.persistent2-0", fsx) == "aws.fsx-lustre.persistent2-250");
  // Fewer edits still win over a longer shared beginning ("aws.p4" against "aws.p").
  const std::vector<std::string> names = {"aws.p5.48xlarge", "aws.p4d.24xlarge"};
  CHECK(closest_name("aws.p4.48xlarge", names) == "aws.p5.48xlarge");
}

}  // namespace clustersim
