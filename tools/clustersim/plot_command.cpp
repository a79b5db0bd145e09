// `clustersim plot RESULTS.h5`: SVG pictures of a sweep's results: the Pareto front of time to
// train against cost (every configuration that fits, coloured by instance type), and the time
// breakdown of one step for the fastest configurations as stacked bars. A serving sizing's results
// file (serve --out, or its shards merged) gets the charts serve --plot-dir draws (serve_plots.h).
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <utility>

#include "sim/io/output_file.h"
#include "sim/serve/serving_rows.h"
#include "sim/sweep/configuration_labels.h"
#include "sim/sweep/ranking.h"
#include "sim/sweep/results_file.h"
#include "sim/util/number_format.h"
#include "tools/clustersim/command_line.h"
#include "tools/clustersim/commands.h"
#include "tools/clustersim/serve_plots.h"
#include "tools/clustersim/svg_chart.h"

namespace clustersim::cli {
namespace {

ScatterChart pareto_chart(const ResultsFile& file, const std::string& currency) {
  ScatterChart chart{"Time to train against cost: every configuration that fits",
                     "time to train (hours, log)",
                     "cost (" + currency + ", log)",
                     {},
                     {},
                     "Pareto front"};
  std::map<std::string, size_t> series_of;
  ParetoFront front;
  const int time = result_column("time_to_train_h"), cost = result_column("cost");
  ChoiceSpread spread;
  for (const ResultRow& row : file.rows) spread.note(row);
  for (const ResultRow& row : file.rows) {
    const double t = row_number(row, time), c = row_number(row, cost);
    if (!is_ranked(row) || !(t > 0) || !(c > 0)) continue;
    const std::string& instance = row_text(row, result_column("instance"));
    const auto [it, added] = series_of.try_emplace(instance, chart.series.size());
    if (added) chart.series.push_back({instance, {}, {}});
    chart.series[it->second].points.push_back({t, c});
    chart.series[it->second].labels.push_back(describe_configuration(row, spread) + ": " +
                                              format_fixed(t, 1) + " h, " + format_fixed(c, 0) +
                                              " " + currency);
    front.offer(row);
  }
  for (const ResultRow& row : front.rows()) {
    chart.line.push_back({row_number(row, time), row_number(row, cost)});
  }
  return chart;
}

// The parts of a step its time is the sum of (the exposed breakdown: `experts` is a part of
// compute), each a segment of the bars.
constexpr std::pair<const char*, const char*> kStepParts[] = {
    {"compute", "compute_s"},
    {"tensor-parallel comm", "tensor_comm_s"},
    {"context-parallel comm", "context_comm_s"},
    {"expert-parallel all-to-all", "expert_comm_s"},
    {"pipeline bubble", "bubble_s"},
    {"data-parallel comm", "data_comm_s"},
    {"optimizer", "optimizer_s"},
    {"data stall", "data_stall_s"}};

// One bar per configuration (a row of each billing mode shares its step), the fastest first.
StackedBars breakdown_chart(const ResultsFile& file, size_t bars) {
  StackedBars chart{
      "Where one step's time goes: the fastest configurations", "seconds per step", {}, {}, {}, {}};
  for (const auto& [name, key] : kStepParts) chart.segment_names.push_back(name);
  TopRows fastest(result_column("step_s"), bars);
  std::set<double> offered;  // configurations, by their index
  for (const ResultRow& row : file.rows) {
    if (is_ranked(row) && offered.insert(row_number(row, result_column("index"))).second)
      fastest.offer(row);
  }
  ConfigurationLabels labels = configuration_labels(fastest.rows());
  chart.bar_labels = std::move(labels.labels);
  if (!labels.shared.empty()) chart.subtitle = "every bar: " + labels.shared;
  for (const ResultRow& row : fastest.rows()) {
    std::vector<double> values;
    for (const auto& [name, key] : kStepParts) {
      const double v = row_number(row, result_column(key));
      values.push_back(v > 0 ? v : 0);
    }
    chart.values.push_back(std::move(values));
  }
  return chart;
}

}  // namespace

int plot_command(const std::vector<std::string>& args) {
  std::string input, out_dir;
  size_t bars = 10;
  po::options_description options("plot options");
  options.add_options()("results", po::value(&input)->required(), "results file (.h5)")(
      "out-dir", po::value(&out_dir), "directory for the SVG files (default: beside RESULTS)")(
      "bars", count_value(&bars), "configurations in a sweep's breakdown chart");
  po::positional_options_description positional;
  positional.add("results", 1);
  po::variables_map values;
  if (!parse(args, options, positional, &values, "clustersim plot RESULTS.h5 [options]")) {
    return kExitOk;
  }
  ResultsFile file;
  std::string error;
  bool serving = false;  // a training sweep's file, or else a serving sizing's
  if (!read_results(input, &file, &error)) {
    std::string ignored;  // the training sweep's error names what is wrong with the file
    // Of one traffic sample or several (a sampled file's columns hold one sample's).
    serving = read_results(input, &file, &ignored, sampled_serving_columns());
    if (!serving) {
      command_error("plot") << error << "\n";
      return kExitInputError;
    }
  }
  const std::filesystem::path source(input);
  const std::filesystem::path directory =
      out_dir.empty() ? source.parent_path() : std::filesystem::path(out_dir);
  std::string currency;
  const int currency_column = serving ? serving_column("currency") : result_column("currency");
  for (const ResultRow& row : file.rows) {
    const std::string& c = row_text(row, currency_column);
    if (c.empty() || c == currency) continue;
    currency = currency.empty() ? c : "mixed currencies";
  }
  if (!directory.empty() && !make_output_directory(directory.string(), &error)) {
    command_error("plot") << "--out-dir: " << error << "\n";
    return kExitUsage;
  }
  if (serving) {
    return write_serving_plots(directory.string(), source.stem().string(), file.rows,
                               rows_samples(file.rows), currency.empty() ? "no price" : currency,
                               "plot", "--out-dir")
               ? kExitOk
               : kExitUsage;
  }
  const std::string stem = (directory / source.stem()).string();
  const ScatterChart pareto = pareto_chart(file, currency.empty() ? "no price" : currency);
  const StackedBars breakdown = breakdown_chart(file, bars);
  for (const auto& [path, text] : {std::pair{stem + "-pareto.svg", render(pareto)},
                                   {stem + "-breakdown.svg", render(breakdown)}}) {
    if (!write_output_file(path, text, &error)) {
      command_error("plot") << error << "\n";
      return kExitUsage;
    }
    std::cout << "wrote " << path << "\n";
  }
  std::cout << pareto.line.size() << " configurations on the Pareto front, "
            << breakdown.values.size() << " in the breakdown\n";
  return kExitOk;
}

}  // namespace clustersim::cli
