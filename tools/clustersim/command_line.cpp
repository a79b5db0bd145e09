// Shared option handling and catalog loading for the clustersim subcommands.
#include "tools/clustersim/command_line.h"

#include <algorithm>
#include <charconv>
#include <iostream>

#include "sim/cost/run_simulation.h"
#include "sim/io/field_checker.h"
#include "sim/io/text_file.h"
#include "sim/parallel/expert_parallel.h"
#include "sim/parallel/memory_model.h"
#include "sim/serve/serving_rows.h"
#include "sim/sweep/results_export.h"

namespace clustersim::cli {

void add_common_options(po::options_description* options, CommonOptions* common,
                        const std::string& command) {
  common->command = command;
  options->add_options()(
      "root", po::value(&common->root)->default_value(CLUSTERSIM_DEFAULT_ROOT),
      "project directory whose models/ and topologies/ hold the shipped catalog")(
      "catalog", po::value(&common->catalogs)->composing(),
      "extra catalog directory (repeatable); its entries replace shipped ones of the same name")(
      "format", po::value(&common->format)->default_value("table"),
      "output format: table, csv or json");
}

std::ostream& command_error(const std::string& command) {
  return std::cerr << "clustersim " << command << ": ";
}

const std::vector<ResultsKind>& results_kinds() {
  static const std::vector<ResultsKind> kinds = {
      {&result_columns(), "a training sweep (clustersim sweep --out)"},
      {&serving_columns(), "a serving sizing (clustersim serve --out)"},
      {&sampled_serving_columns(),
       "a serving sizing over several traffic samples (clustersim serve --samples N --out)"}};
  return kinds;
}

std::string shard_problem(const std::string& text, SweepOptions* options) {
  // std::from_chars into 64 bits, not sscanf's %d: "1/99999999999" overflowed an int (undefined;
  // in practice N became 1215752191, and merge then asked for as many shard slots).
  int64_t k = 0, n = 0;
  const char* end = text.data() + text.size();
  const auto [slash, k_error] = std::from_chars(text.data(), end, k);
  bool parsed = k_error == std::errc() && slash != end && *slash == '/';
  if (parsed) {
    const auto [n_end, n_error] = std::from_chars(slash + 1, end, n);
    parsed = n_error == std::errc() && n_end == end;
  }
  if (!parsed || k < 1 || n < 1 || k > n) {
    return "--shard must be K/N with 1 <= K <= N, not \"" + text + "\"";
  }
  if (n > kMaxShards) {
    return "--shard splits into at most " + std::to_string(kMaxShards) + " shards, not \"" + text +
           "\"";
  }
  options->shard = static_cast<int>(k - 1);
  options->shard_count = static_cast<int>(n);
  return "";
}

std::string shard_output_problem(const std::string& out, const SweepOptions& options) {
  // A CSV or JSON file holds the rows only, not the scenario, catalog, split and counts by which
  // merge checks that its shards are every shard of one sweep, once: it was written, and merge
  // then refused it.
  if (options.shard_count == 1 || out.empty() || results_format(out) == ResultsFormat::kHdf5) {
    return "";
  }
  return "--shard " + std::to_string(options.shard + 1) + "/" +
         std::to_string(options.shard_count) +
         " writes a shard for clustersim merge, which joins HDF5 results files only (a CSV or JSON "
         "file holds the rows, not the sweep and shard merge checks): give --out with .h5, not " +
         out + ", and merge the shards' files with clustersim merge SHARD.h5... -o ALL.h5";
}

SweepSummary sweep_identity(const std::string& scenario_path, const std::string& prices_path,
                            const Catalog& catalog, const SweepOptions& options) {
  SweepSummary summary;
  summary.shard = options.shard;
  summary.shard_count = options.shard_count;
  Diagnostics diagnostics;  // both files were read, and checked, by the command's loading
  read_whole_file(scenario_path, &summary.scenario_text, &diagnostics);
  if (!prices_path.empty()) read_whole_file(prices_path, &summary.prices, &diagnostics);
  summary.tool_version = CLUSTERSIM_VERSION;
  summary.catalog = catalog.fingerprint();
  return summary;
}

bool parse(const std::vector<std::string>& args, const po::options_description& options,
           const po::positional_options_description& positional, po::variables_map* values,
           const std::string& usage) {
  po::options_description all(options);
  all.add_options()("help,h", "show this help");
  po::store(po::command_line_parser(args).options(all).positional(positional).run(), *values);
  if (values->count("help")) {
    std::cout << "usage: " << usage << "\n\n" << all << "\n";
    return false;
  }
  po::notify(*values);
  return true;
}

std::string threads_problem(int threads) {
  if (threads >= 0 && threads <= kMaxThreads) return "";
  return "-j must be 0 (every core) to " + std::to_string(kMaxThreads) + ", got " +
         std::to_string(threads);
}

void validate(boost::any& value, const std::vector<std::string>& texts, Count*, int) {
  po::validators::check_first_occurrence(value);
  const std::string& text = po::validators::get_single_string(texts);
  Count count;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), count.value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    throw po::invalid_option_value(text);
  }
  value = count;
}

po::typed_value<Count>* count_value(size_t* target) {
  return po::value<Count>()
      ->default_value(Count{*target}, std::to_string(*target))
      ->notifier([target](const Count& count) { *target = count.value; });
}

void print_diagnostics(const Diagnostics& diagnostics) {
  for (const Diagnostic& d : diagnostics.all()) std::cerr << d.to_string() << "\n";
  if (diagnostics.has_errors()) {
    std::cerr << diagnostics.error_count()
              << (diagnostics.error_count() == 1 ? " error\n" : " errors\n");
  }
}

std::unique_ptr<Catalog> load_catalog(const CommonOptions& common) {
  std::vector<std::string> directories = {common.root + "/models", common.root + "/topologies"};
  directories.insert(directories.end(), common.catalogs.begin(), common.catalogs.end());
  Diagnostics diagnostics;
  auto catalog = Catalog::load(directories, &diagnostics);
  print_diagnostics(diagnostics);
  if (diagnostics.has_errors()) return nullptr;
  // The memory and step models take the software's own memory and default efficiencies from it.
  if (!catalog->runtimes().find("default")) {
    command_error(common.command) << "the catalog has no runtime \"default\"\n";
    return nullptr;
  }
  return catalog;
}

std::optional<OutputFormat> output_format(const CommonOptions& common) {
  auto format = parse_output_format(common.format);
  if (!format) {
    command_error(common.command) << "--format: unknown format \"" << common.format
                                  << "\": use table, csv or json\n";
  }
  return format;
}

Table layout_table() {
  return Table{{"instance", "instance"},   {"nodes", "nodes"},          {"tensor_parallel", "TP"},
               {"context_parallel", "CP"}, {"pipeline_parallel", "PP"}, {"data_parallel", "DP"},
               {"expert_parallel", "EP"},  {"micro_batch_size", "mbs"}};
}

std::vector<Table::Cell> layout_cells(const Configuration& c) {
  const schema::Parallelism& p = c.parallelism;
  return {cluster_label(c),
          static_cast<double>(c.nodes),
          static_cast<double>(p.tensor_parallel()),
          static_cast<double>(p.context_parallel()),
          static_cast<double>(p.pipeline_parallel()),
          static_cast<double>(p.data_parallel()),
          static_cast<double>(expert_layout(p).expert_parallel),
          static_cast<double>(p.micro_batch_size())};
}

ShardingColumns::ShardingColumns(const std::vector<Configuration>& configurations)
    : shard_groups_(
          std::any_of(configurations.begin(), configurations.end(), [](const Configuration& c) {
            return data_parallel_shard_ranks(c.parallelism) < c.parallelism.data_parallel();
          })) {}

void ShardingColumns::add_to(Table* table) const {
  table->add_columns({{"zero_stage", "ZeRO"}, {"distributed_optimizer", "dist opt"}});
  if (shard_groups_) table->add_column("data_parallel_shard", "shard");
}

void ShardingColumns::add_cells(const Configuration& c, std::vector<Table::Cell>* cells) const {
  const schema::Parallelism& p = c.parallelism;
  cells->insert(cells->end(), {static_cast<double>(p.zero_stage()), p.distributed_optimizer()});
  if (shard_groups_) cells->emplace_back(static_cast<double>(data_parallel_shard_ranks(p)));
}

Runnability check_scenario_runs(const ScenarioInputs& inputs) {
  Runnability runnable = check_runnable(*inputs.catalog, *inputs.scenario);
  if (!runnable.runs) std::cerr << inputs.path << ": " << runnable.reason() << "\n";
  return runnable;
}

void report_unsimulated_runs(const ScenarioInputs& inputs, const std::string& reason,
                             bool never_finishes) {
  const schema::Scenario& scenario = inputs.scenario->scenario();
  const schema::TrainingJob& job = scenario.job();
  const schema::Cost& cost = scenario.cost();
  Diagnostics unused;
  const FieldChecker root = FieldChecker::root(*inputs.scenario->file, &unused);
  // A run that never finishes is not one of too large a budget: a forced checkpoint interval of
  // a second, writing for minutes, was reported at job.token_budget.
  FieldChecker owner = root.child("job");
  const char* field = job.has_token_budget() ? "token_budget"
                      : job.has_epochs()     ? "epochs"
                                             : "steps";
  if (never_finishes) {
    owner = root;
    field = "cost";
    if (cost.checkpoint().has_interval_s()) {
      owner = root.child("cost").child("checkpoint");
      field = "interval_s";
    } else if (cost.has_preemptions_per_instance_hour() || cost.has_interruptions_per_node_hour()) {
      owner = root.child("cost");
      field = cost.has_preemptions_per_instance_hour() ? "preemptions_per_instance_hour"
                                                       : "interruptions_per_node_hour";
    }
  }
  std::cerr << owner.location(field).to_string() << ": " << owner.path(field)
            << ": no configuration's run can be simulated: " << reason << "\n";
}

void report_checkpoint_over_volume(const ScenarioInputs& inputs, const std::string& reason) {
  Diagnostics unused;
  const FieldChecker root = FieldChecker::root(*inputs.scenario->file, &unused);
  // The volumes are the sweep's where it sweeps them (sweep.checkpoint_storage).
  const bool swept = inputs.scenario->scenario().sweep().checkpoint_storage_size() > 0;
  const FieldChecker owner = swept ? root.child("sweep") : root.child("cost").child("checkpoint");
  const char* field = swept ? "checkpoint_storage" : "volume";
  std::cerr << owner.location(field).to_string() << ": " << owner.path(field)
            << ": no configuration's checkpoint fits" << (swept ? " on any of its volumes" : "")
            << ": " << reason << "\n";
}

bool parse_scenario_command(const std::vector<std::string>& args, const std::string& command,
                            const std::string& limit_help, int* exit_code,
                            const po::options_description* extra, CommonOptions* common,
                            ScenarioInputs* inputs) {
  po::options_description options(command + " options");
  add_common_options(&options, common, command);
  options.add_options()("scenario", po::value(&inputs->path)->required(), "scenario file")(
      "limit", count_value(&inputs->limit), limit_help.c_str());
  if (extra) options.add(*extra);
  po::positional_options_description positional;
  positional.add("scenario", 1);
  po::variables_map values;
  *exit_code = kExitOk;
  if (!parse(args, options, positional, &values, "clustersim " + command + " SCENARIO [options]")) {
    return false;
  }
  auto format = output_format(*common);
  *exit_code = kExitUsage;
  if (!format) return false;
  inputs->format = *format;
  *exit_code = kExitOk;
  return true;
}

std::optional<ScenarioInputs> load_scenario_command(const std::vector<std::string>& args,
                                                    const std::string& command,
                                                    const std::string& limit_help, int* exit_code,
                                                    const po::options_description* extra) {
  CommonOptions common;
  ScenarioInputs inputs;
  if (!parse_scenario_command(args, command, limit_help, exit_code, extra, &common, &inputs)) {
    return std::nullopt;
  }
  *exit_code = kExitInputError;
  inputs.root = common.root;
  inputs.catalog = load_catalog(common);
  if (!inputs.catalog) return std::nullopt;
  Diagnostics diagnostics;
  inputs.scenario = load_scenario(inputs.path, *inputs.catalog, &diagnostics);
  print_diagnostics(diagnostics);
  if (!inputs.scenario) return std::nullopt;
  *exit_code = kExitOk;
  return inputs;
}

std::optional<CostInputs> load_cost_inputs(const ScenarioInputs& inputs,
                                           const std::string& prices_path) {
  Diagnostics diagnostics;
  CostInputs cost;
  if (!prices_path.empty()) {
    cost.price_file = read_text_file<schema::PriceFile>(prices_path, &diagnostics);
    if (!cost.price_file) {
      print_diagnostics(diagnostics);
      return std::nullopt;
    }
  }
  cost.model =
      load_cost_model(*inputs.scenario, *inputs.catalog, cost.price_file.get(), &diagnostics);
  print_diagnostics(diagnostics);
  if (!cost.model) return std::nullopt;
  return cost;
}

std::optional<size_t> evaluate_each(
    const ScenarioInputs& inputs, const ExpandedConfigurations& space,
    const std::function<void(const Configuration&, const Evaluation&)>& visit) {
  Evaluator evaluator(*inputs.catalog, *inputs.scenario);
  const size_t shown =
      inputs.limit == 0 ? space.valid.size() : std::min(inputs.limit, space.valid.size());
  for (size_t i = 0; i < shown; ++i) {
    const Evaluation e = evaluator.evaluate(space.valid[i]);
    if (!e.error.empty()) {
      std::cerr << inputs.path << ": " << e.error << "\n";
      return std::nullopt;
    }
    visit(space.valid[i], e);
  }
  return shown;
}

}  // namespace clustersim::cli
