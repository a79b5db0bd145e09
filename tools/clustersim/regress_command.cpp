// `clustersim regress --baseline B.h5 SCENARIO`: the nightly regression of sizing assumptions.
// Re-evaluates the scenario as the baseline's kind records it (a training sweep's, or a serving
// sizing's with the options the sizing recorded, e.g. --max-rate) and compares every row and
// column with the baseline under each column's tolerance (relative for times, costs and memory;
// absolute for MFU/HFU; exact for the configuration, status and limiting resource); names the
// inputs that changed since the baseline (scenario, --prices file, catalog files, a serving
// trace), prints what drifted and exits 3 if anything did. Refresh a baseline on purpose with
// `clustersim sweep SCENARIO --out B.h5` (or `clustersim serve SCENARIO --out B.h5`).
#include <google/protobuf/util/message_differencer.h>

#include <iostream>
#include <memory>
#include <sstream>

#include "sim/io/schema/cost.pb.h"
#include "sim/io/schema/scenario.pb.h"
#include "sim/io/schema/serving.pb.h"
#include "sim/io/text_file.h"
#include "sim/serve/serving_rows.h"
#include "sim/serve/serving_sweep.h"
#include "sim/serve/traffic_samples.h"
#include "sim/sweep/configuration_labels.h"
#include "sim/sweep/regression.h"
#include "sim/sweep/results_file.h"
#include "sim/sweep/sweep_runner.h"
#include "sim/sweep/sweep_summary.h"
#include "sim/util/number_format.h"
#include "tools/clustersim/command_line.h"
#include "tools/clustersim/commands.h"
#include "tools/clustersim/serving_inputs.h"

namespace clustersim::cli {
namespace {

// Catalog files whose fingerprint line differs between two fingerprints.
std::vector<std::string> changed_files(const std::string& before, const std::string& after) {
  std::map<std::string, std::string> a, b;
  for (auto [text, map] : {std::pair{&before, &a}, {&after, &b}}) {
    std::istringstream lines(*text);
    for (std::string line; std::getline(lines, line);) {
      const size_t space = line.rfind(' ');
      (*map)[line.substr(0, space)] = line.substr(space + 1);
    }
  }
  std::vector<std::string> changed;
  for (const auto& [file, hash] : a) {
    if (!b.count(file))
      changed.push_back(file + " (gone)");
    else if (b[file] != hash)
      changed.push_back(file);
  }
  for (const auto& [file, hash] : b) {
    if (!a.count(file)) changed.push_back(file + " (new)");
  }
  return changed;
}

// What a changed file's line adds after the two texts of the file (a message of `type`'s type):
// " (comments or layout only)" when they parse to equal messages, "" when not (or one does not
// parse).
std::string only_layout_changed(const google::protobuf::Message& type, const std::string& then,
                                const std::string& now) {
  const std::unique_ptr<google::protobuf::Message> a(type.New()), b(type.New());
  google::protobuf::TextFormat::ParseInfoTree tree_a, tree_b;
  Diagnostics ignored;  // the current text parsed when it was loaded; the baseline's may not now
  const bool same = parse_text("", then, a.get(), &tree_a, &ignored) &&
                    parse_text("", now, b.get(), &tree_b, &ignored) &&
                    google::protobuf::util::MessageDifferencer::Equals(*a, *b);
  return same ? " (comments or layout only)" : "";
}

// Prints which inputs changed since `baseline` was written, `now` being their identity today
// (sweep_identity): the scenario file's text (a message of `scenario_type`'s type), the --prices
// file's (or that one side has none) and each catalog file. Training and serving baselines alike.
void print_changed_inputs(const SweepSummary& baseline, const SweepSummary& now,
                          const std::string& scenario_path, const std::string& prices_path,
                          const google::protobuf::Message& scenario_type) {
  if (baseline.scenario_text != now.scenario_text) {
    std::cout << "scenario changed since the baseline: " << scenario_path
              << only_layout_changed(scenario_type, baseline.scenario_text, now.scenario_text)
              << "\n";
  }
  if (baseline.prices != now.prices) {
    std::cout << "prices changed since the baseline: ";
    if (baseline.prices.empty()) {
      std::cout << "none then, " << prices_path << " now\n";
    } else if (prices_path.empty()) {
      std::cout << "a --prices file then, none now\n";
    } else {
      std::cout << prices_path
                << only_layout_changed(schema::PriceFile::default_instance(), baseline.prices,
                                       now.prices)
                << "\n";
    }
  }
  for (const std::string& file : changed_files(baseline.catalog, now.catalog)) {
    std::cout << "catalog changed since the baseline: " << file << "\n";
  }
}

// Parses --tolerance COLUMN=VALUE items, COLUMN a figure column of `columns` (`examples` names a
// few in the error); false after printing why one is wrong.
bool parse_tolerances(const std::vector<std::string>& items,
                      const std::vector<ResultColumn>& columns, const std::string& examples,
                      std::map<std::string, double>* out) {
  for (const std::string& item : items) {
    const size_t equals = item.find('=');
    const std::string key = item.substr(0, equals);
    double value = -1;
    if (equals != std::string::npos) {
      std::istringstream in(item.substr(equals + 1));
      if (!(in >> value) || !in.eof()) value = -1;
    }
    const int column = column_index(columns, key);
    if (column < 0 || columns[column].drift == ResultColumn::Drift::kExact || !(value >= 0)) {
      command_error("regress")
          << "--tolerance " << item
          << ": expected COLUMN=VALUE with a non-negative VALUE and a figure column "
             "of the baseline's ("
          << examples << ", ...)\n";
      return false;
    }
    (*out)[key] = value;
  }
  return true;
}

// A chunk callback of either re-run (training sweep or serving sizing) that appends its rows to
// `*rows` in order.
auto append_to(std::vector<ResultRow>* rows) {
  return [rows](std::vector<ResultRow>& chunk, int64_t, const auto&) {
    for (ResultRow& row : chunk) rows->push_back(std::move(row));
    return true;
  };
}

// Re-runs the training sweep of `inputs->path` into `*rows`. Returns the exit code.
int rerun_sweep(const std::string& prices_path, int threads, ScenarioInputs* inputs,
                std::vector<ResultRow>* rows) {
  Diagnostics diagnostics;
  inputs->scenario = load_scenario(inputs->path, *inputs->catalog, &diagnostics);
  print_diagnostics(diagnostics);
  if (!inputs->scenario) return kExitInputError;
  const std::optional<CostInputs> cost = load_cost_inputs(*inputs, prices_path);
  if (!cost) return kExitInputError;
  SweepOptions options;
  options.threads = threads;
  std::string error;
  run_sweep(
      *inputs->catalog, *inputs->scenario, *cost->model, options,
      append_to(rows),
      &error);
  if (!error.empty()) {
    std::cerr << inputs->path << ": " << error << "\n";
    return kExitInputError;
  }
  return kExitOk;
}

// Re-runs the serving sizing of `inputs.path` with the options `recorded` (the baseline's:
// --max-rate, --samples) into `*rows`, after printing whether the trace the scenario reads changed
// since. Returns the exit code.
int rerun_sizing(const std::string& prices_path, int threads, const ScenarioInputs& inputs,
                 const SweepSummary& baseline, const ServingRunOptions& recorded,
                 std::vector<ResultRow>* rows) {
  ServingSweepOptions options;
  options.sweep.threads = threads;
  options.max_rate = recorded.max_rate;
  int exit_code = kExitOk;
  const std::optional<ServingInputs> serving =
      load_serving_inputs(inputs.path, prices_path, *inputs.catalog, recorded, &exit_code);
  if (!serving) return exit_code;
  options.samples = traffic_samples(*serving->loaded, recorded.samples);
  const SweepSummary now = serving_identity(inputs.path, prices_path, *inputs.catalog,
                                            options.sweep, *serving->loaded, recorded);
  if (now.other_inputs != baseline.other_inputs) {
    std::cout << "trace changed since the baseline: "
              << serving->loaded->scenario().traffic().trace_file() << "\n";
  }
  std::string error;
  run_serving_sweep(
      *inputs.catalog, *serving->loaded, *serving->prices, options,
      append_to(rows),
      &error);
  if (!error.empty()) {
    std::cerr << inputs.path << ": " << error << "\n";
    return kExitInputError;
  }
  return kExitOk;
}

// Whether the file at `path` parses as the other kind of scenario than the baseline's (a serving
// one where `sizing` is false, a training one where it is true).
bool reads_as_other_kind(const std::string& path, bool sizing) {
  Diagnostics ignored;
  return sizing ? read_text_file<schema::Scenario>(path, &ignored) != nullptr
                : read_text_file<schema::ServingScenario>(path, &ignored) != nullptr;
}

}  // namespace

int regress_command(const std::vector<std::string>& args) {
  std::string baseline_path;
  std::vector<std::string> tolerance_items;
  int threads = 0;
  std::string prices_path;
  po::options_description own("regress");
  own.add_options()("baseline", po::value(&baseline_path)->required(),
                    "results file of the sweep or serving sizing to compare with (.h5)")(
      "tolerance", po::value(&tolerance_items)->composing(),
      "COLUMN=VALUE: tolerance of one figure column (repeatable; relative for times, costs "
      "and memory, absolute for mfu and hfu)")("jobs,j", po::value(&threads)->default_value(0),
                                               "worker threads (0: every core)")(
      "prices", po::value(&prices_path), "the --prices file the baseline's sweep or sizing used");
  int exit_code = kExitOk;
  CommonOptions common;
  ScenarioInputs inputs;
  if (!parse_scenario_command(args, "regress", "drifted cells, and gone or new rows, to print (0: all)", &exit_code, &own,
                              &common, &inputs)) {
    return exit_code;
  }
  if (const std::string why = threads_problem(threads); !why.empty()) {
    command_error("regress") << why << "\n";
    return kExitUsage;
  }
  ResultsFile baseline;
  std::string error;
  const int kind = read_results_of_kind(baseline_path, results_kinds(), 0, &baseline, &error);
  if (kind < 0) {
    command_error("regress") << error << "\n";
    return kExitInputError;
  }
  const std::vector<ResultColumn>& columns = *results_kinds()[kind].columns;
  const bool sizing = &columns == &serving_columns() || &columns == &sampled_serving_columns();
  std::map<std::string, double> tolerances;
  const char* examples = sizing ? "ttft_p99_ms, cost_per_million_tokens" : "step_s, mfu, cost";
  if (!parse_tolerances(tolerance_items, columns, examples, &tolerances)) return kExitUsage;
  const SweepSummary* summary = &baseline.summary;
  if (!summary->complete || summary->shard_count != 1) {
    command_error("regress") << baseline_path << " is not the complete results file of a whole "
                             << (sizing ? "serving sizing" : "sweep") << "\n";
    return kExitInputError;
  }
  const std::optional<ServingRunOptions> recorded = parse_serving_options(summary->options);
  if (sizing && !recorded) {
    command_error("regress") << baseline_path << ": sized with options this version does not know: "
                             << summary->options << "\n";
    return kExitInputError;
  }
  inputs.catalog = load_catalog(common);
  if (!inputs.catalog) return kExitInputError;
  std::vector<ResultRow> current;
  exit_code = sizing ? rerun_sizing(prices_path, threads, inputs, *summary, *recorded, &current)
                     : rerun_sweep(prices_path, threads, &inputs, &current);
  if (exit_code != kExitOk) {
    // A scenario of the other kind than the baseline's: say which kind the baseline asks for.
    // Any other mistake (a misspelt instance, a value out of range) is the scenario's alone.
    if (reads_as_other_kind(inputs.path, sizing)) {
      command_error("regress") << baseline_path << " holds the results of "
                               << results_kinds()[kind].written_by << ", so " << inputs.path
                               << " was read as " << (sizing ? "a serving" : "a training")
                               << " scenario\n";
    }
    return exit_code;
  }
  const RegressionReport report =
      compare_results(baseline.rows, current, tolerances, baseline.absent_columns, columns);
  const SweepSummary now = sweep_identity(inputs.path, prices_path, *inputs.catalog, {});
  print_changed_inputs(*summary, now, inputs.path, prices_path,
                       sizing ? static_cast<const google::protobuf::Message&>(
                                    schema::ServingScenario::default_instance())
                              : schema::Scenario::default_instance());
  for (const std::string& column : baseline.absent_columns) {
    std::cout << "not compared: " << column
              << " (a column added since the baseline was written; refresh it to compare)\n";
  }
  // Rows, not configurations: a configuration has a row per billing mode.
  std::cout << "compared " << report.compared << " rows with " << baseline_path << ": "
            << report.drifts.size() << " drifted cells, " << report.missing.size()
            << " rows gone, " << report.added.size() << " new\n";
  // Each row's name among both runs' rows (the baseline's first, then the current ones): its
  // description, with the configuration columns that set it apart from rows described alike.
  std::vector<std::string> names;
  if (!report.passed()) {
    std::vector<const ResultRow*> rows;
    for (const ResultRow& row : baseline.rows) rows.push_back(&row);
    for (const ResultRow& row : current) rows.push_back(&row);
    const ChoiceSpread spread = sizing ? ChoiceSpread() : choice_spread(rows);
    names = row_names(
        rows, columns,
        [&](const ResultRow& row) {
          return sizing ? describe_deployment(row) : describe_configuration(row, spread);
        },
        baseline.absent_columns);
  }
  // Which configurations the sweep lost or gained (a scenario edited since the baseline).
  const auto list_rows = [&](const char* what, const std::vector<size_t>& positions,
                             const std::vector<ResultRow>& rows, size_t first_name) {
    const size_t shown =
        inputs.limit == 0 ? positions.size() : std::min(inputs.limit, positions.size());
    for (size_t i = 0; i < shown; ++i) {
      std::cout << what << " #" << format_number(row_number(rows[positions[i]], 0)) << " "
                << names[first_name + positions[i]] << "\n";
    }
    if (shown < positions.size()) {
      std::cout << what << " ... " << positions.size() - shown << " more (--limit 0 lists all)\n";
    }
  };
  list_rows("gone", report.missing_rows, baseline.rows, 0);
  list_rows("new ", report.added_rows, current, baseline.rows.size());
  if (!report.drifts.empty()) {
    // The row's name last: the columns before it keep their places.
    Table table{{"index", "#"},
                {"column", "column"},
                {"baseline", "baseline"},
                {"current", "current"},
                {"difference", "difference", 6},
                {"configuration", "configuration"}};
    const size_t shown =
        inputs.limit == 0 ? report.drifts.size() : std::min(inputs.limit, report.drifts.size());
    for (size_t i = 0; i < shown; ++i) {
      const ColumnDrift& d = report.drifts[i];
      table.add_row({static_cast<double>(d.index), d.column, d.baseline, d.current,
                     d.difference == d.difference ? Table::Cell(d.difference) : Table::Cell(),
                     names[baseline.rows.size() + d.row]});
    }
    table.print(std::cout, inputs.format);
    if (shown < report.drifts.size()) {
      std::cout << "... " << report.drifts.size() - shown << " more (--limit 0 prints all)\n";
    }
  }
  return report.passed() ? kExitOk : kExitDrift;
}

}  // namespace clustersim::cli
