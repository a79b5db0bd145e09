// Helvetica's advance widths and greedy wrapping at list separators, then at spaces.
#include "sim/util/text_width.h"

namespace clustersim {
namespace {

// Helvetica.afm (Adobe Core 14 metrics) character widths of ' ' (32) to '~' (126), in
// thousandths of an em; ' is quotesingle, ` is grave, as Unicode fonts map them.
constexpr int kHelveticaWidths[95] = {
    278, 278, 355, 556, 556, 889, 667,  191, 333, 333, 389, 584, 278, 333, 278, 278,  // ' '-'/'
    556, 556, 556, 556, 556, 556, 556,  556, 556, 556,                                // '0'-'9'
    278, 278, 584, 584, 584, 556, 1015,                                               // ':'-'@'
    667, 667, 722, 722, 667, 611, 778,  722, 278, 500, 667, 556, 833,                 // 'A'-'M'
    722, 778, 667, 778, 722, 667, 611,  722, 667, 944, 667, 667, 611,                 // 'N'-'Z'
    278, 278, 278, 469, 556, 333,                                                     // '['-'`'
    556, 556, 500, 556, 556, 278, 556,  556, 222, 222, 500, 222, 833,                 // 'a'-'m'
    556, 556, 556, 556, 333, 500, 278,  556, 500, 722, 500, 500, 500,                 // 'n'-'z'
    334, 260, 334, 584};                                                              // '{'-'~'
constexpr int kEm = 1000;

// The pieces `text` may break after: each ends at a ", " (its comma kept) or, within one that is
// too wide, at a space; separators between pieces are single spaces.
std::vector<std::string> split(const std::string& text, char after) {
  std::vector<std::string> out;
  size_t from = 0;
  for (size_t at = text.find(' ', from); at != std::string::npos; at = text.find(' ', at + 1)) {
    if (after != ' ' && (at == 0 || text[at - 1] != after)) continue;
    out.push_back(text.substr(from, at - from));
    from = at + 1;
  }
  out.push_back(text.substr(from));
  return out;
}

}  // namespace

double text_width(std::string_view text, double font_size_px) {
  int units = 0;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 32 && byte <= 126) {
      units += kHelveticaWidths[byte - 32];
    } else if ((byte & 0xC0) != 0x80) {  // not a UTF-8 continuation byte
      units += kEm;
    }
  }
  return units * font_size_px / kEm;
}

namespace {

// wrap_text and wrap_columns: `fits(line)` says whether a line is narrow enough.
template <typename Fits>
std::vector<std::string> wrap(const std::string& text, const Fits& fits) {
  std::vector<std::string> pieces;
  for (const std::string& clause : split(text, ',')) {
    if (fits(clause)) {
      pieces.push_back(clause);
      continue;
    }
    for (const std::string& word : split(clause, ' ')) pieces.push_back(word);
  }
  std::vector<std::string> lines;
  for (const std::string& piece : pieces) {
    if (!lines.empty() && fits(lines.back() + " " + piece)) {
      lines.back() += " " + piece;
    } else {
      lines.push_back(piece);
    }
  }
  return lines;
}

}  // namespace

std::vector<std::string> wrap_text(const std::string& text, double font_size_px, double width_px) {
  return wrap(text, [&](const std::string& line) {
    return text_width(line, font_size_px) <= width_px;
  });
}

std::vector<std::string> wrap_columns(const std::string& text, size_t columns) {
  return wrap(text, [&](const std::string& line) { return line.size() <= columns; });
}

}  // namespace clustersim
