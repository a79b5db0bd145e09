// Row matching by configuration index, then each column under its rule: exact columns must be
// equal; relative ones within |a - b| <= tolerance x max(|a|, |b|); absolute ones within
// |a - b| <= tolerance. Empty against non-empty is always a drift. Columns the baseline was
// written without are skipped.
#include "sim/sweep/regression.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

namespace clustersim {
namespace {

using Drift = ResultColumn::Drift;

std::string cell_text(const Table::Cell& cell) {
  if (const double* number = std::get_if<double>(&cell)) {
    char text[32];
    std::snprintf(text, sizeof text, "%.10g", *number);
    return text;
  }
  if (const bool* flag = std::get_if<bool>(&cell)) return *flag ? "yes" : "no";
  if (const std::string* text = std::get_if<std::string>(&cell)) return *text;
  return "";
}

// The difference of two cells under `column`'s rule, or nullopt when they agree.
std::optional<double> difference(const ResultColumn& column, double tolerance, const Table::Cell& a,
                                 const Table::Cell& b) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (a.index() != b.index()) return nan;
  const double* x = std::get_if<double>(&a);
  const double* y = std::get_if<double>(&b);
  if (column.drift == Drift::kExact || x == nullptr) {
    return a == b ? std::nullopt : std::optional<double>(nan);
  }
  const double absolute = std::abs(*x - *y);
  if (column.drift == Drift::kAbsolute) {
    return absolute <= tolerance ? std::nullopt : std::optional<double>(absolute);
  }
  const double scale = std::max(std::abs(*x), std::abs(*y));
  const double relative = scale == 0 ? 0 : absolute / scale;
  return relative <= tolerance ? std::nullopt : std::optional<double>(relative);
}

}  // namespace

RegressionReport compare_results(const std::vector<ResultRow>& baseline,
                                 const std::vector<ResultRow>& current,
                                 const std::map<std::string, double>& tolerances,
                                 const std::vector<std::string>& baseline_lacks,
                                 const std::vector<ResultColumn>& columns) {
  std::vector<double> tolerance;
  for (const ResultColumn& column : columns) {
    const auto it = tolerances.find(column.key);
    tolerance.push_back(it != tolerances.end() ? it->second : column.tolerance);
  }
  RegressionReport report;
  size_t i = 0, j = 0;
  while (i < baseline.size() || j < current.size()) {
    const double a = i < baseline.size() ? row_number(baseline[i], 0) : HUGE_VAL;
    const double b = j < current.size() ? row_number(current[j], 0) : HUGE_VAL;
    if (a < b) {
      report.missing.push_back(static_cast<int64_t>(a));
      ++i;
      continue;
    }
    if (b < a) {
      report.added.push_back(static_cast<int64_t>(b));
      ++j;
      continue;
    }
    ++report.compared;
    for (size_t c = 1; c < columns.size(); ++c) {
      if (std::find(baseline_lacks.begin(), baseline_lacks.end(), columns[c].key) !=
          baseline_lacks.end()) {
        continue;
      }
      const auto d = difference(columns[c], tolerance[c], baseline[i][c], current[j][c]);
      if (d) {
        report.drifts.push_back({static_cast<int64_t>(a), columns[c].key, cell_text(baseline[i][c]),
                                 cell_text(current[j][c]), *d});
      }
    }
    ++i;
    ++j;
  }
  return report;
}

}  // namespace clustersim
