// Tests of the near-even split: the parts add up to the total and the first ones take the
// remainder (a pipeline of 126 layers on 8 stages: 16 on the first six, 15 on the last two).
#include "sim/util/even_share.h"

#include <catch2/catch.hpp>

namespace clustersim {
namespace {

TEST_CASE("an even share gives the remainder to the first parts and adds up to the total") {
  CHECK(even_share(126, 8, 0) == 16);
  CHECK(even_share(126, 8, 5) == 16);
  CHECK(even_share(126, 8, 6) == 15);
  CHECK(even_share(126, 8, 7) == 15);
  CHECK(even_share(3, 5, 3) == 0);  // more parts than things: the last ones empty
  for (int parts = 1; parts <= 9; ++parts) {
    int sum = 0;
    for (int i = 0; i < parts; ++i) sum += even_share(61, parts, i);
    CHECK(sum == 61);
  }
}

}  // namespace
}  // namespace clustersim
