// The latency-throughput and cost-latency charts of a serving sizing.
#include "tools/clustersim/serve_plots.h"

#include <filesystem>
#include <iostream>
#include <map>

#include "sim/io/output_file.h"
#include "sim/serve/serving_rows.h"
#include "sim/sweep/ranking.h"
#include "sim/util/number_format.h"
#include "tools/clustersim/command_line.h"
#include "tools/clustersim/svg_chart.h"

namespace clustersim::cli {
namespace {

// A scatter of (x, y) columns of the rows with both positive, one series per instance type.
ScatterChart scatter(const std::vector<ResultRow>& rows, const char* x, const char* y,
                     ScatterChart chart) {
  std::map<std::string, size_t> series_of;
  const int xc = serving_column(x), yc = serving_column(y);
  for (const ResultRow& row : rows) {
    const double a = row_number(row, xc), b = row_number(row, yc);
    if (!(a > 0) || !(b > 0)) continue;
    const std::string& instance = row_text(row, serving_column("instance"));
    const auto [it, added] = series_of.try_emplace(instance, chart.series.size());
    if (added) chart.series.push_back({instance, {}, {}});
    chart.series[it->second].points.push_back({a, b});
    chart.series[it->second].labels.push_back(describe_deployment(row) + ": " +
                                              row_text(row, serving_column("status")));
  }
  return chart;
}

bool write_svg(const std::filesystem::path& path, const std::string& svg,
               const std::string& command, const std::string& option) {
  std::string error;
  if (!write_output_file(path.string(), svg, &error)) {
    command_error(command) << option << ": " << error << "\n";
    return false;
  }
  std::cout << "wrote " << path.string() << "\n";
  return true;
}

}  // namespace

bool write_serving_plots(const std::string& dir, const std::string& name,
                         const std::vector<ResultRow>& rows, const std::string& currency,
                         const std::string& command, const std::string& option) {
  const ScatterChart latency =
      scatter(rows, "output_tokens_per_s", "ttft_p99_ms",
              {"p99 time to first token against throughput", "output tokens/s (log)",
               "p99 TTFT (ms, log)", {}, {}, ""});
  ScatterChart pareto =
      scatter(rows, "cost_per_million_tokens", "ttft_p99_ms",
              {"Cost against latency: every deployment with a price",
               "cost per million output tokens (" + currency + ", log)", "p99 TTFT (ms, log)",
               {}, {}, "Pareto front (deployments meeting the SLO)"});
  ParetoFront front(serving_column("cost_per_million_tokens"), serving_column("ttft_p99_ms"),
                    serving_column("status"));
  for (const ResultRow& row : rows) front.offer(row);
  for (const ResultRow& row : front.rows()) {
    pareto.line.push_back({row_number(row, serving_column("cost_per_million_tokens")),
                           row_number(row, serving_column("ttft_p99_ms"))});
  }
  const std::filesystem::path base(dir);
  return write_svg(base / (name + "-latency.svg"), render(latency), command, option) &&
         write_svg(base / (name + "-pareto.svg"), render(pareto), command, option);
}

}  // namespace clustersim::cli
