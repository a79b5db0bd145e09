// What a sweep answers with, gathered while rows stream past (memory bounded by what is kept, not
// by the number of rows): the N best rows by one figure, and the Pareto front of time to train
// against cost. Only rows whose status is "ok" take part. Ties go to the lower configuration
// index, so the answer does not depend on the order rows arrive in.
#pragma once

#include <cstddef>
#include <vector>

#include "sim/sweep/ranking_leaders.h"
#include "sim/sweep/result_row.h"

namespace clustersim {

// The `capacity` rows with the smallest value of one column (rows without a value are skipped).
class TopRows {
 public:
  TopRows(int column, size_t capacity) : column_(column), capacity_(capacity) {}
  void offer(const ResultRow& row);
  // Best first.
  const std::vector<ResultRow>& rows() const { return rows_; }
  // The best row and the best of another configuration, whatever the capacity; keyed as rows()
  // are (value, then index), so leaders().best() is rows().front().
  const RankingLeaders<ResultRow>& leaders() const { return leaders_; }

 private:
  int column_;
  size_t capacity_;
  std::vector<ResultRow> rows_;  // sorted, best first
  RankingLeaders<ResultRow> leaders_;
};

// Rows not dominated in (time to train, cost): no other row is at least as fast and as cheap
// and strictly better in one. Rows without a cost (no price known) are skipped.
class ParetoFront {
 public:
  ParetoFront();
  // The front of two other columns (both minimized) of rows whose `status` column is "ok" (a
  // serving sizing's cost per million tokens against p99 latency). Column 0 is the index.
  ParetoFront(int x_column, int y_column, int status_column);
  void offer(const ResultRow& row);
  // Fastest first (and so most expensive first).
  const std::vector<ResultRow>& rows() const { return rows_; }

 private:
  int time_, cost_, index_, status_;
  std::vector<ResultRow> rows_;  // sorted by (time, cost, index)
};

// Whether `row` takes part in rankings (status "ok").
bool is_ranked(const ResultRow& row);

}  // namespace clustersim
