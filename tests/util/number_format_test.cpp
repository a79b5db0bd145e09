// Tests of number formatting for messages and tables.
#include "sim/util/number_format.h"

#include <catch2/catch.hpp>
#include <string>

namespace clustersim {

TEST_CASE("format_fixed writes every digit of the largest doubles") {
  CHECK(format_fixed(3.14159, 2) == "3.14");
  // 1e300 took more than a 64-byte buffer: to_chars failed and the table printed the buffer's
  // garbage (a checkpoint interval of a spot rate near zero).
  const std::string huge = format_fixed(1e300, 2);
  CHECK(huge.size() == 304);
  CHECK(huge.substr(0, 4) == "1000");
  CHECK(huge.substr(huge.size() - 3) == ".00");
  CHECK(format_fixed(-1.7976931348623157e308, 0).size() == 310);
}

}  // namespace clustersim
