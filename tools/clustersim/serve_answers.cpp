// serve's answers on every row of a sizing, and their columns in JSON and CSV rows.
#include "tools/clustersim/serve_answers.h"

#include <cmath>
#include <map>

#include "sim/serve/serving_rows.h"
#include "sim/sweep/ranking.h"
#include "sim/util/number_format.h"

namespace clustersim::cli {
namespace {

std::pair<double, std::string> row_key(const ResultRow& row) {
  return {row_number(row, serving_column("index")), row_text(row, serving_column("billing"))};
}

RankingLeaders<const ResultRow*> cheapest_leaders(const std::vector<ResultRow>& rows) {
  const int cost = serving_column("cost_per_million_tokens"), index = serving_column("index");
  RankingLeaders<const ResultRow*> leaders;
  for (const ResultRow& row : rows) {
    if (!priced_and_meeting(row)) continue;
    leaders.offer({row_number(row, cost), 0}, static_cast<int64_t>(row_number(row, index)), &row);
  }
  return leaders;
}

std::vector<InstanceAnswer> per_instance_answers(const std::vector<ResultRow>& rows,
                                                 int samples) {
  const int status = serving_column("status"), instance = serving_column("instance");
  const int cost = serving_column("cost_per_million_tokens"),
            ttft = serving_column(verdict_ttft_p99_key(samples)),
            served = serving_column("requests_per_s"), limiting = serving_column("limiting");
  std::vector<std::string> order;
  std::map<std::string, const ResultRow*> best_ok, closest, most_served, last;
  for (const ResultRow& row : rows) {
    const std::string& name = row_text(row, instance);
    if (!last.count(name)) order.push_back(name);
    last[name] = &row;
    const std::string& st = row_text(row, status);
    if (st == kStatusOk) {
      const ResultRow*& b = best_ok[name];
      const double c = row_number(row, cost);
      if (!b || (!std::isnan(c) && (std::isnan(row_number(*b, cost)) || c < row_number(*b, cost)))) b = &row;
    } else if (st == kStatusMissesSlo) {
      const ResultRow*& c = closest[name];
      if (!c || row_number(row, ttft) < row_number(*c, ttft)) c = &row;
    } else if (st == kStatusOverloaded) {
      const ResultRow*& o = most_served[name];
      if (!o || row_number(row, served) > row_number(*o, served)) o = &row;
    }
  }
  std::vector<InstanceAnswer> answers;
  for (const std::string& name : order) {
    if (const ResultRow* b = best_ok[name]) {
      const double c = row_number(*b, cost);
      answers.push_back({name, b, "meets it with " + describe_deployment(*b) +
                                      (std::isnan(c) ? " (no price)"
                                                     : ", " + format_fixed(c, 3) +
                                                           " per million tokens")});
    } else if (const ResultRow* c = closest[name]) {
      answers.push_back({name, c, "misses it: at best " + row_text(*c, limiting) + " (" +
                                      describe_deployment(*c) + ")"});
    } else if (const ResultRow* o = most_served[name]) {
      answers.push_back({name, o, "misses it: overloaded, at best " + row_text(*o, limiting) +
                                      " (" + describe_deployment(*o) + ")"});
    } else {
      answers.push_back({name, last[name], "does not fit: " + row_text(*last[name], limiting)});
    }
  }
  return answers;
}

}  // namespace

bool priced_and_meeting(const ResultRow& row) {
  return row_text(row, serving_column("status")) == kStatusOk &&
         !std::isnan(row_number(row, serving_column("cost_per_million_tokens")));
}

ServeAnswers serve_answers(const std::vector<ResultRow>& rows, int samples, bool slo) {
  ServeAnswers answers;
  answers.cheapest = cheapest_leaders(rows);
  if (slo) answers.per_instance = per_instance_answers(rows, samples);
  // Several samples: against the worst sample's p99 TTFT, which the SLO verdict is on.
  ParetoFront front(serving_column("cost_per_million_tokens"),
                    serving_column(verdict_ttft_p99_key(samples)), serving_column("status"));
  for (const ResultRow& row : rows) front.offer(row);
  answers.pareto = front.rows();
  for (const ResultRow& row : answers.pareto) answers.on_pareto.insert(row_key(row));
  return answers;
}

std::vector<ResultColumn> answer_columns(bool autoscaling) {
  using Kind = ResultColumn::Kind;
  std::vector<ResultColumn> columns = {identity_column("cheapest", "cheapest", Kind::kBool),
                                       identity_column("pareto", "Pareto", Kind::kBool),
                                       identity_column("instance_answer", "answer", Kind::kText),
                                       identity_column("margin", "margin", Kind::kText)};
  if (autoscaling) {
    columns.insert(columns.end(), {figure_column("autoscaling_day_cost", "day cost", 2),
                                   figure_column("autoscaling_all_on_demand_cost", "on demand", 2),
                                   figure_column("autoscaling_baseline_replicas", "baseline", 0),
                                   figure_column("autoscaling_baseline_nodes", "nodes", 0)});
  }
  return columns;
}

std::vector<ResultRow> listed_rows(const std::vector<ResultRow>& rows, size_t limit,
                                   const ServeAnswers& answers) {
  std::set<const ResultRow*> named;
  if (answers.cheapest.best()) named.insert(*answers.cheapest.best());
  for (const InstanceAnswer& a : answers.per_instance) named.insert(a.row);
  std::vector<ResultRow> listed;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (limit == 0 || i < limit || named.count(&rows[i]) ||
        answers.on_pareto.count(row_key(rows[i]))) {
      listed.push_back(rows[i]);
    }
  }
  return listed;
}

std::vector<Table::Cell> answer_cells(const ResultRow& row, const ServeAnswers& answers,
                                      bool autoscaling, const AutoscalingPlan* day) {
  // `row` may be a copy of the sizing's row: known by its deployment index and billing mode.
  const auto same = [&](const ResultRow* answer) { return row_key(*answer) == row_key(row); };
  const bool cheapest = answers.cheapest.best() && same(*answers.cheapest.best());
  std::vector<Table::Cell> cells = {cheapest, answers.on_pareto.count(row_key(row)) > 0,
                                    Table::Cell(), Table::Cell()};
  for (const InstanceAnswer& a : answers.per_instance) {
    if (same(a.row)) cells[2] = a.line;
  }
  if (cheapest && !answers.margin.empty()) cells[3] = answers.margin;
  if (autoscaling && cheapest && day) {
    cells.insert(cells.end(), {day->day_cost, day->all_on_demand_cost,
                               static_cast<double>(day->baseline_replicas),
                               static_cast<double>(day->baseline_nodes)});
  } else if (autoscaling) {
    cells.resize(cells.size() + 4);  // the day is the cheapest row's
  }
  return cells;
}

}  // namespace clustersim::cli
