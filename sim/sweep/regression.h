// Comparison of a sweep's rows with a baseline's, column by column under per-column tolerances
// (result_row.h gives each column's rule and default): what `clustersim regress` reports, for a
// training sweep's rows or a serving sizing's (sim/serve/serving_rows.h).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "sim/sweep/result_row.h"

namespace clustersim {

struct ColumnDrift {
  int64_t index = 0;  // the current run's configuration index
  std::string column;
  std::string baseline;  // the cells as text ("" when empty)
  std::string current;
  double difference = 0;  // relative or absolute per the column's rule; NaN for exact columns
  size_t row = 0;         // the drifted row's position in the current list
};

struct RegressionReport {
  int64_t compared = 0;             // rows of a configuration present in both
  std::vector<int64_t> missing;     // the baseline's indices of configurations the run lacks
  std::vector<int64_t> added;       // the current run's indices of configurations new to it
  std::vector<size_t> missing_rows;  // those rows' positions in the baseline's list
  std::vector<size_t> added_rows;    // and in the current list
  std::vector<ColumnDrift> drifts;  // in configuration order, then column order
  bool passed() const { return missing.empty() && added.empty() && drifts.empty(); }
};

// `tolerances` overrides the default of the named columns. Both row lists in index order, their
// cells those of `columns` (column 0 the configuration index); rows are paired by the cells of
// the configuration columns (ResultColumn::configuration), not by index.
// `baseline_lacks`: columns the baseline's file was written without (ResultsFile's
// absent_columns), not compared.
RegressionReport compare_results(const std::vector<ResultRow>& baseline,
                                 const std::vector<ResultRow>& current,
                                 const std::map<std::string, double>& tolerances,
                                 const std::vector<std::string>& baseline_lacks = {},
                                 const std::vector<ResultColumn>& columns = result_columns());

// Each of `rows`' name, telling it apart from the others: `describe`'s words, and where other
// rows read the same, ", HEADER VALUE" for each configuration column of `columns` (those the
// baseline has) in which those rows differ, in column order ("v 2, recompute RECOMPUTE_FULL").
// Rows alike in every configuration column (a sweep axis without a column) keep one name.
std::vector<std::string> row_names(const std::vector<const ResultRow*>& rows,
                                   const std::vector<ResultColumn>& columns,
                                   const std::function<std::string(const ResultRow&)>& describe,
                                   const std::vector<std::string>& baseline_lacks = {});

}  // namespace clustersim
