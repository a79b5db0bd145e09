// What `clustersim serve` answers, weighed on every row of a sizing (not only the rows --limit
// lists): the cheapest deployment meeting the objectives with its runner-up, the cheapest of
// another deployment (RankingLeaders, whose tie note the answer carries); per instance type the
// row that answers it and its line; the Pareto front of cost against p99 TTFT. And the same
// answers as the columns JSON and CSV rows carry after the row's own, with the rows past --limit
// that an answer names, so that a script reads from the rows what the table's text says.
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/serve/autoscaling.h"
#include "sim/sweep/ranking_leaders.h"
#include "sim/sweep/result_row.h"

namespace clustersim::cli {

// An instance type's answer: the cheapest of its deployments meeting the objectives, or why none
// does (the objective its deployment of the lowest p99 TTFT misses, on the worst of the traffic
// samples as the verdict takes it, with that deployment; when every simulated one is overloaded,
// the most requests one serves of those offered; or that none fits in memory, on its last row).
struct InstanceAnswer {
  std::string instance;
  const ResultRow* row;
  std::string line;  // "meets it with ...", "misses it: ...", "does not fit: ..."
};

struct ServeAnswers {
  // Among rows meeting the objectives with a cost, by cost per million output tokens (of equal
  // costs the first row); the runner-up is of another deployment index.
  RankingLeaders<const ResultRow*> cheapest;
  std::vector<InstanceAnswer> per_instance;  // in the rows' order of instance types
  std::vector<ResultRow> pareto;             // the front, cheapest first
  // The front's rows as (index, billing).
  std::set<std::pair<double, std::string>> on_pareto;
  // What the cheapest's margin under its objectives says against the model's error (slo_margin.h
  // margin_lines, joined by " | "); empty without one. Set by the caller, which has the evidence.
  std::string margin;
};

// Whether `row` may answer "the cheapest": it meets the objectives (status ok) with a cost per
// million output tokens.
bool priced_and_meeting(const ResultRow& row);

// The answers on `rows`, a sizing over `samples` traffic samples (the verdict's p99 TTFT is the
// worst sample's, serving_rows.h verdict_ttft_p99_key). Per-instance answers only when `slo`.
// The answers point into `rows`, which must outlive them.
ServeAnswers serve_answers(const std::vector<ResultRow>& rows, int samples, bool slo);

// The answer columns: "cheapest" (true on the row of the cheapest deployment meeting the
// objectives), "pareto" (true on the Pareto front's rows), "instance_answer" (the per-instance
// line on the row it names, without the instance's name; empty elsewhere and without an SLO),
// "margin" (ServeAnswers::margin on the cheapest row; empty elsewhere);
// with `autoscaling`, on the cheapest row, the day's totals of the autoscaling block:
// "autoscaling_day_cost", "autoscaling_all_on_demand_cost" (the report currency),
// "autoscaling_baseline_replicas" and "autoscaling_baseline_nodes".
std::vector<ResultColumn> answer_columns(bool autoscaling);

// The rows JSON and CSV list: the first `limit` of `rows` (0: all) and after them, in the rows'
// order, those past it that an answer names.
std::vector<ResultRow> listed_rows(const std::vector<ResultRow>& rows, size_t limit,
                                   const ServeAnswers& answers);

// `row`'s cells of answer_columns(autoscaling): `day` the plan of the cheapest deployment's day
// (null: none, or it failed).
std::vector<Table::Cell> answer_cells(const ResultRow& row, const ServeAnswers& answers,
                                      bool autoscaling, const AutoscalingPlan* day);

}  // namespace clustersim::cli
