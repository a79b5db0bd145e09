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

}  // namespace clustersim
