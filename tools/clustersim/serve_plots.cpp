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

// A scatter of (x, y) columns of the rows with both positive, one series per instance type. Over
// several traffic samples (`samples` > 1) each point's tooltip gives its p99 TTFT on the worst
// sample, which the y of a chart against latency is, and the median beside it.
ScatterChart scatter(const std::vector<ResultRow>& rows, const char* x, const char* y, int samples,
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
    std::string label =
        describe_deployment(row) + ": " + row_text(row, serving_column("status"));
    if (samples > 1) {
      label += ", p99 TTFT " +
               format_fixed(row_number(row, serving_column("ttft_p99_worst_ms")), 1) +
               " ms on the worst of " + std::to_string(samples) + " samples (median " +
               format_fixed(row_number(row, serving_column("ttft_p99_ms")), 1) + " ms)";
    }
    chart.series[it->second].labels.push_back(label);
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
                         const std::vector<ResultRow>& rows, int samples,
                         const std::string& currency, const std::string& command,
                         const std::string& option) {
  // The p99 TTFT the SLO verdict and the table's Pareto front are on (the worst sample's).
  const char* ttft = verdict_ttft_p99_key(samples);
  const std::string ttft_axis =
      samples > 1 ? "worst sample's p99 TTFT (ms, log; " + std::to_string(samples) + " samples)"
                  : "p99 TTFT (ms, log)";
  const ScatterChart latency =
      scatter(rows, "output_tokens_per_s", ttft, samples,
              {samples > 1 ? "Worst sample's p99 time to first token against median throughput"
                           : "p99 time to first token against throughput",
               samples > 1 ? "output tokens/s (log; the median over the samples)"
                           : "output tokens/s (log)",
               ttft_axis, {}, {}, ""});
  ScatterChart pareto =
      scatter(rows, "cost_per_million_tokens", ttft, samples,
              {"Cost against latency: every deployment with a price",
               "cost per million output tokens (" + currency + ", log)", ttft_axis, {}, {},
               "Pareto front (deployments meeting the SLO)"});
  ParetoFront front(serving_column("cost_per_million_tokens"), serving_column(ttft),
                    serving_column("status"));
  for (const ResultRow& row : rows) front.offer(row);
  for (const ResultRow& row : front.rows()) {
    pareto.line.push_back({row_number(row, serving_column("cost_per_million_tokens")),
                           row_number(row, serving_column(ttft))});
  }
  const std::filesystem::path base(dir);
  return write_svg(base / (name + "-latency.svg"), render(latency), command, option) &&
         write_svg(base / (name + "-pareto.svg"), render(pareto), command, option);
}

}  // namespace clustersim::cli
