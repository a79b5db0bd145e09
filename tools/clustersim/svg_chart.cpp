// SVG text of the two chart kinds: axes with 1-2-5 ticks (log; finer where the range is narrow) or
// round ticks (linear), a fixed palette, a legend on the right; bar labels wrapped to the plot's
// width.
#include "tools/clustersim/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "sim/util/text_width.h"

namespace clustersim::cli {
namespace {

constexpr double kWidth = 900, kHeight = 560;
constexpr double kLeft = 90, kRight = 230, kTop = 50, kBottom = 60;
constexpr double kBarLeft = 20;             // bars and their labels start here
constexpr double kBarLabelFontSize = 11;    // px
constexpr double kBarLabelLineHeight = 13;  // px between a wrapped bar label's lines
constexpr double kSubtitleFontSize = 12;    // px, the document's
constexpr double kSubtitleLineHeight = 15;
constexpr double kEdge = 10;  // px kept clear at the right edge by the line under the title
const char* const kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

// Six significant digits (whole numbers below a million in full), millions up to a billion as
// "2M" or "1.25M" (a cost axis read "2e+06"; written in full, nine digits would reach the axis
// title).
std::string number(double value) {
  const bool millions = std::abs(value) >= 1e6 && std::abs(value) < 1e9;
  char text[32];
  std::snprintf(text, sizeof text, millions ? "%gM" : "%g", millions ? value / 1e6 : value);
  return text;
}

// `lines` as one <text> of `font_size` px, a <tspan> a line from (x, y) down by `line_height`,
// each drawn as wide as text_width measures it (textLength), whatever font the viewer has: the
// width the layout assumes is the width drawn.
void text_lines(std::ostringstream& svg, double x, double y, double font_size, double line_height,
                const std::vector<std::string>& lines) {
  svg << "<text x=\"" << x << "\" y=\"" << y << "\" font-size=\"" << font_size << "\">";
  for (size_t i = 0; i < lines.size(); ++i) {
    svg << "<tspan x=\"" << x << "\" y=\"" << y + i * line_height << "\" textLength=\""
        << text_width(lines[i], font_size) << "\" lengthAdjust=\"spacingAndGlyphs\">"
        << escape(lines[i]) << "</tspan>";
  }
  svg << "</text>\n";
}

const char* colour(size_t i) { return kPalette[i % (sizeof kPalette / sizeof *kPalette)]; }

void header(std::ostringstream& svg, const std::string& title, double height = kHeight) {
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << kLeft << "\" y=\"28\" font-size=\"16\">" << escape(title) << "</text>\n";
}

constexpr double kLegendFontSize = 12;    // px, the document's
constexpr double kLegendLineHeight = 14;  // px between a wrapped entry's lines
constexpr double kLegendEntryGap = 20;    // px from one entry's first line to the next entry's
constexpr double kLegendText = kWidth - kRight + 38;  // an entry's text starts here

// Each of `names` beside its colour, from `top` down, wrapped to the width right of the plot
// (a mix's series "aws.p5.48xlarge + aws.p4d.24xlarge" is wider than it). Returns where the next
// entry would begin.
double legend(std::ostringstream& svg, const std::vector<std::string>& names, double top = kTop) {
  const double x = kWidth - kRight + 20;
  double y = top + 10;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::vector<std::string> lines =
        wrap_text(names[i], kLegendFontSize, kWidth - kEdge - kLegendText);
    svg << "<rect x=\"" << x << "\" y=\"" << y - 9 << "\" width=\"12\" height=\"12\" fill=\""
        << colour(i) << "\"/>";
    text_lines(svg, kLegendText, y + 1, kLegendFontSize, kLegendLineHeight, lines);
    y += kLegendEntryGap + kLegendLineHeight * (lines.size() - 1.0);
  }
  return y;
}

// A log axis over [low, high] mapped to pixels [from, to].
struct LogAxis {
  double low, high, from, to;
  double at(double v) const {
    return from +
           (std::log10(v) - std::log10(low)) / (std::log10(high) - std::log10(low)) * (to - from);
  }
  // Ticks at 1, 2 and 5 times powers of ten inside the range; where fewer than two of those fall
  // in it (a range narrower than about a factor 2.5: GPUs of one price band, runs of one length),
  // every whole mantissa 1 to 9; where still fewer, round steps (round_ticks) across it, so that
  // each axis has at least two labelled values to read a point against.
  std::vector<double> ticks() const {
    for (const std::vector<double>& mantissas :
         {std::vector<double>{1, 2, 5}, std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9}}) {
      std::vector<double> result;
      for (int e = static_cast<int>(std::floor(std::log10(low)));
           e <= static_cast<int>(std::ceil(std::log10(high))); ++e) {
        for (double m : mantissas) {
          const double v = m * std::pow(10.0, e);
          if (v >= low && v <= high) result.push_back(v);
        }
      }
      if (result.size() >= 2) return result;
    }
    // Steps of the size round_ticks takes for the range's width, from the first multiple above
    // `low`.
    const std::vector<double> steps = round_ticks(high - low);
    const double step = steps.size() > 1 ? steps[1] : high - low;
    std::vector<double> result;
    for (double k = std::ceil(low / step); k * step <= high; ++k) result.push_back(k * step);
    return result;
  }
};

LogAxis log_axis(double low, double high, double from, double to) {
  if (low == high) {
    low /= 1.5;
    high *= 1.5;
  }
  return {low / 1.1, high * 1.1, from, to};
}

}  // namespace

std::string render(const ScatterChart& chart) {
  double x_low = HUGE_VAL, x_high = 0, y_low = HUGE_VAL, y_high = 0;
  for (const ScatterSeries& s : chart.series) {
    for (auto [x, y] : s.points) {
      x_low = std::min(x_low, x), x_high = std::max(x_high, x);
      y_low = std::min(y_low, y), y_high = std::max(y_high, y);
    }
  }
  std::ostringstream svg;
  header(svg, chart.title);
  if (x_high == 0) {
    svg << "<text x=\"" << kLeft << "\" y=\"" << kTop + 40 << "\">nothing to plot</text></svg>\n";
    return svg.str();
  }
  const LogAxis x = log_axis(x_low, x_high, kLeft, kWidth - kRight);
  const LogAxis y = log_axis(y_low, y_high, kHeight - kBottom, kTop);
  svg << "<g stroke=\"#ccc\">\n";
  for (double t : x.ticks()) {
    svg << "<line x1=\"" << x.at(t) << "\" y1=\"" << kTop << "\" x2=\"" << x.at(t) << "\" y2=\""
        << kHeight - kBottom << "\"/>\n";
  }
  for (double t : y.ticks()) {
    svg << "<line x1=\"" << kLeft << "\" y1=\"" << y.at(t) << "\" x2=\"" << kWidth - kRight
        << "\" y2=\"" << y.at(t) << "\"/>\n";
  }
  svg << "</g>\n";
  for (double t : x.ticks()) {
    svg << "<text x=\"" << x.at(t) << "\" y=\"" << kHeight - kBottom + 16
        << "\" text-anchor=\"middle\">" << number(t) << "</text>\n";
  }
  for (double t : y.ticks()) {
    svg << "<text x=\"" << kLeft - 6 << "\" y=\"" << y.at(t) + 4 << "\" text-anchor=\"end\">"
        << number(t) << "</text>\n";
  }
  svg << "<text x=\"" << (kLeft + kWidth - kRight) / 2 << "\" y=\"" << kHeight - 20
      << "\" text-anchor=\"middle\">" << escape(chart.x_label) << "</text>\n"
      << "<text transform=\"translate(20," << (kTop + kHeight - kBottom) / 2
      << ") rotate(-90)\" text-anchor=\"middle\">" << escape(chart.y_label) << "</text>\n";
  std::vector<std::string> names;
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const ScatterSeries& s = chart.series[i];
    names.push_back(s.name);
    for (size_t p = 0; p < s.points.size(); ++p) {
      svg << "<circle cx=\"" << x.at(s.points[p].first) << "\" cy=\"" << y.at(s.points[p].second)
          << "\" r=\"3.5\" fill=\"" << colour(i) << "\" fill-opacity=\"0.6\"><title>"
          << escape(p < s.labels.size() ? s.labels[p] : s.name) << "</title></circle>\n";
    }
  }
  const double below_legend = legend(svg, names);
  if (!chart.line.empty()) {
    svg << "<polyline fill=\"none\" stroke=\"black\" stroke-width=\"1.5\" points=\"";
    for (auto [px, py] : chart.line) svg << x.at(px) << "," << y.at(py) << " ";
    svg << "\"/>\n";
    svg << "<line x1=\"" << kWidth - kRight + 20 << "\" y1=\"" << below_legend - 3 << "\" x2=\""
        << kWidth - kRight + 32 << "\" y2=\"" << below_legend - 3 << "\" stroke=\"black\"/>";
    text_lines(svg, kLegendText, below_legend + 1, kLegendFontSize, kLegendLineHeight,
               wrap_text(chart.line_name, kLegendFontSize, kWidth - kEdge - kLegendText));
  }
  svg << "</svg>\n";
  return svg.str();
}

std::vector<double> round_ticks(double high) {
  if (!(high > 0)) return {0};
  const double raw = high / 4;  // about four intervals
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * magnitude;
  for (double m : {1.0, 2.0, 2.5, 5.0}) {
    if (m * magnitude >= raw) {
      step = m * magnitude;
      break;
    }
  }
  std::vector<double> ticks;
  for (int i = 0; ticks.empty() || ticks.back() < high * (1 - 1e-12); ++i) {
    ticks.push_back(i * step);
  }
  return ticks;
}

std::string render(const StackedBars& chart) {
  // The line under the title spans the width right of the axis' margin; each bar's label the
  // plot's. Either wraps (wrap_text) where it is wider, the chart growing to hold the lines.
  const double x0 = kBarLeft, x1 = kWidth - kRight;
  const std::vector<std::string> subtitle =
      chart.subtitle.empty() ? std::vector<std::string>()
                             : wrap_text(chart.subtitle, kSubtitleFontSize, kWidth - kEdge - kLeft);
  std::vector<std::vector<std::string>> labels;
  for (const std::string& label : chart.bar_labels) {
    labels.push_back(wrap_text(label, kBarLabelFontSize, x1 - x0));
  }
  const double top = kTop + (subtitle.empty() ? 0 : kSubtitleLineHeight * (subtitle.size() - 1.0));
  const double row_height =
      chart.values.empty() ? 0 : std::min(44.0, (kHeight - kTop - kBottom) / chart.values.size());
  double bars_height = 0;
  for (const auto& lines : labels)
    bars_height += row_height + kBarLabelLineHeight * (lines.size() - 1.0);
  const double axis_y = top + bars_height + 14;
  std::ostringstream svg;
  header(svg, chart.title, std::max(kHeight, axis_y + 46));
  if (!subtitle.empty())
    text_lines(svg, kLeft, 44, kSubtitleFontSize, kSubtitleLineHeight, subtitle);
  double total = 0;
  for (const auto& bar : chart.values) {
    double sum = 0;
    for (double v : bar) sum += v;
    total = std::max(total, sum);
  }
  // Each bar under its label, which spans the plot's width (long configurations are never cut).
  const std::vector<double> ticks = round_ticks(total);
  const double scale = ticks.back() > 0 ? (x1 - x0) / ticks.back() : 0;
  double y = top;
  for (size_t b = 0; b < chart.values.size(); ++b) {
    text_lines(svg, x0, y + 12, kBarLabelFontSize, kBarLabelLineHeight, labels[b]);
    y += kBarLabelLineHeight * (labels[b].size() - 1.0);
    double x = x0;
    for (size_t s = 0; s < chart.values[b].size(); ++s) {
      const double w = chart.values[b][s] * scale;
      svg << "<rect x=\"" << x << "\" y=\"" << y + 15 << "\" width=\"" << w << "\" height=\""
          << row_height - 19 << "\" fill=\"" << colour(s) << "\"><title>"
          << escape(chart.segment_names[s]) << ": " << number(chart.values[b][s])
          << " s</title></rect>\n";
      x += w;
    }
    y += row_height;
  }
  for (double v : ticks) {
    svg << "<text x=\"" << x0 + v * scale << "\" y=\"" << axis_y << "\" text-anchor=\"middle\">"
        << number(v) << "</text>\n";
  }
  svg << "<text x=\"" << (x0 + x1) / 2 << "\" y=\"" << axis_y + 22 << "\" text-anchor=\"middle\">"
      << escape(chart.x_label) << "</text>\n";
  legend(svg, chart.segment_names, top);
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace clustersim::cli
