// Minimal SVG charts for `clustersim plot`: a scatter plot on log-log axes with a highlighted
// line, and horizontal stacked bars. Self-contained files that any browser opens; no fonts or
// scripts beyond SVG 1.1. A bar's label and the line under the title wrap onto more lines where
// they are wider than the space they have (text_width.h), each line drawn at the width measured.
#pragma once

#include <string>
#include <vector>

namespace clustersim::cli {

struct ScatterSeries {
  std::string name;  // legend entry
  std::vector<std::pair<double, double>> points;
  std::vector<std::string> labels;  // tooltip per point
};

struct ScatterChart {
  std::string title, x_label, y_label;
  std::vector<ScatterSeries> series;
  std::vector<std::pair<double, double>> line;  // drawn over the points (the Pareto front)
  std::string line_name;
};

struct StackedBars {
  std::string title, x_label;
  std::vector<std::string> segment_names;  // legend, one colour each
  std::vector<std::string> bar_labels;
  std::vector<std::vector<double>> values;  // per bar, per segment (>= 0)
  std::string subtitle;                     // under the title, when not empty
};

// SVG documents. Requires: every scatter point has positive coordinates.
std::string render(const ScatterChart& chart);
std::string render(const StackedBars& chart);

// The ticks of a linear axis from 0 covering [0, high]: multiples of a round step (1, 2, 2.5 or
// 5 times a power of ten), about four intervals: round_ticks(1.117) == {0, 0.5, 1, 1.5}.
std::vector<double> round_ticks(double high);

}  // namespace clustersim::cli
