// Bounded best-N lists and the two-objective Pareto front.
#include "sim/sweep/ranking.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace clustersim {

namespace {
const int kIndex = 0;  // result_columns() starts with the configuration index
}  // namespace

bool is_ranked(const ResultRow& row) {
  static const int status = result_column("status");
  return row_text(row, status) == kStatusOk;
}

void TopRows::offer(const ResultRow& row) {
  const double value = row_number(row, column_);
  if (!is_ranked(row) || std::isnan(value) || capacity_ == 0) return;
  const auto key = [&](const ResultRow& r) {
    return std::pair{row_number(r, column_), row_number(r, kIndex)};
  };
  leaders_.offer(key(row), static_cast<int64_t>(row_number(row, kIndex)), row);
  const auto position =
      std::upper_bound(rows_.begin(), rows_.end(), row,
                       [&](const ResultRow& a, const ResultRow& b) { return key(a) < key(b); });
  if (rows_.size() == capacity_ && position == rows_.end()) return;
  rows_.insert(position, row);
  if (rows_.size() > capacity_) rows_.pop_back();
}

ParetoFront::ParetoFront()
    : ParetoFront(result_column("time_to_train_h"), result_column("cost"),
                  result_column("status")) {}

ParetoFront::ParetoFront(int x_column, int y_column, int status_column)
    : time_(x_column), cost_(y_column), index_(kIndex), status_(status_column) {}

void ParetoFront::offer(const ResultRow& row) {
  const double time = row_number(row, time_), cost = row_number(row, cost_);
  if (row_text(row, status_) != kStatusOk || std::isnan(time) || std::isnan(cost)) return;
  const auto dominates = [&](const ResultRow& a, double t, double c) {
    const double at = row_number(a, time_), ac = row_number(a, cost_);
    return at <= t && ac <= c && (at < t || ac < c);
  };
  for (const ResultRow& kept : rows_) {
    if (dominates(kept, time, cost)) return;
  }
  std::erase_if(rows_, [&](const ResultRow& kept) {
    return dominates(row, row_number(kept, time_), row_number(kept, cost_));
  });
  const auto key = [&](const ResultRow& r) {
    return std::tuple{row_number(r, time_), row_number(r, cost_), row_number(r, index_)};
  };
  rows_.insert(
      std::upper_bound(rows_.begin(), rows_.end(), row,
                       [&](const ResultRow& a, const ResultRow& b) { return key(a) < key(b); }),
      row);
}

}  // namespace clustersim
