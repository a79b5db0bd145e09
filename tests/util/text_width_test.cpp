// Text width from Helvetica's metrics and wrapping to a width: closed forms from the AFM widths,
// lines that each fit and join back into the text, a word too wide on its own line.
#include "sim/util/text_width.h"

#include <catch2/catch.hpp>

namespace clustersim {
namespace {

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += (out.empty() ? "" : " ") + line;
  return out;
}

}  // namespace

TEST_CASE("text_width adds Helvetica's advance widths at the font size") {
  // Helvetica.afm: T 611, P 667, space 278, 8 556; i 222, W 944.
  CHECK(text_width("TP 8", 10) == Approx((611 + 667 + 278 + 556) * 10 / 1000.0));
  CHECK(text_width("iW", 11) == Approx((222 + 944) * 11 / 1000.0));
  CHECK(text_width("", 11) == 0);
  // A character beyond ASCII (two UTF-8 bytes) is one em.
  CHECK(text_width("\xc3\xa9", 12) == Approx(12));
}

TEST_CASE("wrap_text breaks after list separators first, each line within the width") {
  const std::string text = "aws.p5.48xlarge + aws.p4d.24xlarge, TP 8 PP 4 DP 2 mbs 1, pools as "
                           "pipeline stages, ZeRO 1, INTERLEAVED_ONE_F_ONE_B";
  const double full = text_width(text, 11);
  REQUIRE(wrap_text(text, 11, full) == std::vector<std::string>{text});
  const std::vector<std::string> lines = wrap_text(text, 11, full / 2);
  CHECK(lines.size() >= 2);
  CHECK(joined(lines) == text);
  for (const std::string& line : lines) {
    CHECK(text_width(line, 11) <= full / 2);
    // Each line but the last ends a clause: nothing of a clause is split off while it fits.
    if (&line != &lines.back()) CHECK(line.back() == ',');
  }
}

TEST_CASE("wrap_text splits a clause wider than the width at its spaces, a long word alone") {
  const std::vector<std::string> lines =
      wrap_text("short, a clause of words too wide, unbreakable_word_here", 10,
                text_width("a clause of", 10));
  CHECK(lines == std::vector<std::string>{"short, a", "clause of", "words too", "wide,",
                                          "unbreakable_word_here"});
  CHECK(text_width("unbreakable_word_here", 10) > text_width("a clause of", 10));
}

TEST_CASE("wrap_columns wraps to a terminal's columns the same way") {
  CHECK(wrap_columns("short, a clause of words too wide, unbreakable_word_here", 11) ==
        std::vector<std::string>{"short, a", "clause of", "words too", "wide,",
                                 "unbreakable_word_here"});
  CHECK(wrap_columns("mean error 6.0%, worst 94.6%", 17) ==
        std::vector<std::string>{"mean error 6.0%,", "worst 94.6%"});
  CHECK(wrap_columns("fits", 4) == std::vector<std::string>{"fits"});
}

}  // namespace clustersim
