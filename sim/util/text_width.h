// The width a line of text takes in a picture (the SVG charts), and lines of text wrapped to a
// width, a picture's or a terminal's: Helvetica's advance widths, which Arial and Liberation Sans
// share, so that a writer can fit labels to its plot area and say so (SVG's textLength) whatever
// font draws them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim {

// Width in pixels of `text` at `font_size_px`: each printable ASCII character its advance in
// Helvetica (Adobe's Core 14 font metrics, Helvetica.afm, in thousandths of an em), any other
// character (a UTF-8 sequence counts once) a whole em.
double text_width(std::string_view text, double font_size_px);

// `text` in lines each at most `width_px` wide at `font_size_px`, broken after a ", " where it
// can, else at a space: joined with single spaces the lines are `text` again (each line but the
// last keeps its comma). A word wider than `width_px` is a line of its own, the only line
// wider than `width_px`. Greedy: each line takes as many pieces as fit.
std::vector<std::string> wrap_text(const std::string& text, double font_size_px, double width_px);

// The same for a terminal: lines of at most `columns` characters (bytes), the only wider one a
// word longer than that.
std::vector<std::string> wrap_columns(const std::string& text, size_t columns);

}  // namespace clustersim
