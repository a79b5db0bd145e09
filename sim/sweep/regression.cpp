// Rows paired by their configuration (the configuration columns' cells; rows of one
// configuration, which a sweep axis without a column of its own makes, paired in index order),
// not by position: a sweep reordered, or grown or shrunk by an axis value, compares the rows it
// shares. Then each column under its rule: exact columns must be
// equal; relative ones within |a - b| <= tolerance x max(|a|, |b|); absolute ones within
// |a - b| <= tolerance. Empty against non-empty is always a drift. Columns the baseline was
// written without are skipped. The rows regress lists are named so that no two read alike.
#include "sim/sweep/regression.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <limits>
#include <map>
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

bool lacks(const std::vector<std::string>& baseline_lacks, const ResultColumn& column) {
  return std::find(baseline_lacks.begin(), baseline_lacks.end(), column.key) !=
         baseline_lacks.end();
}

// The cells of `row`'s configuration columns (those the baseline has), as one text.
std::string configuration_key(const ResultRow& row, const std::vector<ResultColumn>& columns,
                              const std::vector<std::string>& baseline_lacks) {
  std::string key;
  for (size_t c = 0; c < columns.size(); ++c) {
    if (!columns[c].configuration || lacks(baseline_lacks, columns[c])) continue;
    key += cell_text(row[c]);
    key += '\x1f';  // a unit separator, in no cell
  }
  return key;
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
  // The baseline's rows by configuration, each list in index order.
  std::map<std::string, std::deque<size_t>> unpaired;
  for (size_t i = 0; i < baseline.size(); ++i) {
    unpaired[configuration_key(baseline[i], columns, baseline_lacks)].push_back(i);
  }
  RegressionReport report;
  std::vector<bool> paired(baseline.size(), false);
  for (size_t j = 0; j < current.size(); ++j) {
    const ResultRow& now = current[j];
    const int64_t index = static_cast<int64_t>(row_number(now, 0));
    const auto match = unpaired.find(configuration_key(now, columns, baseline_lacks));
    if (match == unpaired.end() || match->second.empty()) {
      report.added.push_back(index);
      report.added_rows.push_back(j);
      continue;
    }
    const ResultRow& before = baseline[match->second.front()];
    paired[match->second.front()] = true;
    match->second.pop_front();
    ++report.compared;
    for (size_t c = 1; c < columns.size(); ++c) {
      if (lacks(baseline_lacks, columns[c])) continue;
      const auto d = difference(columns[c], tolerance[c], before[c], now[c]);
      if (d) {
        report.drifts.push_back(
            {index, columns[c].key, cell_text(before[c]), cell_text(now[c]), *d, j});
      }
    }
  }
  for (size_t i = 0; i < baseline.size(); ++i) {
    if (paired[i]) continue;
    report.missing.push_back(static_cast<int64_t>(row_number(baseline[i], 0)));
    report.missing_rows.push_back(i);
  }
  return report;
}

std::vector<std::string> row_names(const std::vector<const ResultRow*>& rows,
                                   const std::vector<ResultColumn>& columns,
                                   const std::function<std::string(const ResultRow&)>& describe,
                                   const std::vector<std::string>& baseline_lacks) {
  std::vector<std::string> names;
  std::map<std::string, std::vector<size_t>> alike;  // rows by their description
  for (size_t i = 0; i < rows.size(); ++i) {
    names.push_back(describe(*rows[i]));
    alike[names.back()].push_back(i);
  }
  for (const auto& [words, group] : alike) {
    std::vector<size_t> differing;
    for (size_t c = 0; c < columns.size(); ++c) {
      if (!columns[c].configuration || lacks(baseline_lacks, columns[c])) continue;
      const Table::Cell& first = (*rows[group.front()])[c];
      if (std::any_of(group.begin(), group.end(),
                      [&](size_t i) { return (*rows[i])[c] != first; })) {
        differing.push_back(c);
      }
    }
    for (size_t i : group) {
      for (size_t c : differing) {
        const std::string value = cell_text((*rows[i])[c]);
        names[i] += ", " + columns[c].header + " " + (value.empty() ? "none" : value);
      }
    }
  }
  return names;
}

}  // namespace clustersim
