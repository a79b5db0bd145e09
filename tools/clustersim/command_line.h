// What every clustersim subcommand shares: the catalog options (--root, --catalog), --format,
// loading the catalog, and printing diagnostics.
#pragma once

#include <boost/program_options.hpp>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "sim/cost/cost_model.h"
#include "sim/io/catalog.h"
#include "sim/io/scenario_loader.h"
#include "sim/io/table.h"
#include "sim/sweep/configuration_space.h"
#include "sim/sweep/evaluation.h"
#include "sim/sweep/results_merge.h"
#include "sim/sweep/runnable.h"
#include "sim/sweep/sweep_runner.h"
#include "sim/sweep/sweep_summary.h"

namespace clustersim::cli {

namespace po = boost::program_options;

// Exit codes of every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInputError = 1;  // a user file is wrong (diagnostics printed)
inline constexpr int kExitUsage = 2;       // the command line is wrong
inline constexpr int kExitDrift = 3;       // regress: results drifted from the baseline

// The most worker threads (-j) a command takes: more than the cores of any machine it runs on;
// oneTBB's arena of 100,000 slots crashed `serve` when it was destroyed.
inline constexpr int kMaxThreads = 1024;
// "" when `threads` (-j) is 0 (every core) to kMaxThreads, else what is wrong with it.
std::string threads_problem(int threads);

// The value of a count option (--limit, --fastest, --bars): a whole number >= 0. Boost reads
// "-1" into a size_t as 2^64 - 1, so --limit -1 listed every configuration without a word.
struct Count {
  size_t value = 0;
};
// Boost's hook (found by argument-dependent lookup) that reads a Count: throws
// po::invalid_option_value unless the text is all digits.
void validate(boost::any& value, const std::vector<std::string>& texts, Count*, int);
// The option's value semantic: a Count stored into `*target`, whose value is the default.
po::typed_value<Count>* count_value(size_t* target);

struct CommonOptions {
  std::string command;                // the subcommand ("run"): its errors start "clustersim run: "
  std::string root;                   // project root holding models/ and topologies/
  std::vector<std::string> catalogs;  // extra catalog directories, searched after the root's
  std::string format = "table";
};

// Adds --root, --catalog and --format to `options`, for subcommand `command`.
void add_common_options(po::options_description* options, CommonOptions* common,
                        const std::string& command);

// Standard error after "clustersim COMMAND: ", where every error of a subcommand that names no
// file location goes (one at file:line:col starts with its location, as a compiler's does).
std::ostream& command_error(const std::string& command);

// The kinds of results file: a training sweep's (clustersim sweep --out) and a serving sizing's
// (clustersim serve --out) of one traffic sample or of several, as merge tells them apart (one
// sample's before several's: a file of one sample's columns also reads as several's, those
// columns absent).
const std::vector<ResultsKind>& results_kinds();

// "" when `text`, a --shard value, is K/N with 1 <= K <= N (then set into `*options`, 0-based),
// else what is wrong with it. Shared by sweep and serve.
std::string shard_problem(const std::string& text, SweepOptions* options);
// "" when `out` (a --out value, of .h5, .csv or .json) can hold the shard `options` names, else
// why not: a shard of several is for clustersim merge, which reads HDF5 results files only.
std::string shard_output_problem(const std::string& out, const SweepOptions& options);

// What identifies a sweep or serving sizing in its journal and results file, for both commands:
// the scenario's and the price file's texts (`prices_path` may be empty), this tool's version,
// the catalog's fingerprint and the shard of `options`. The caller adds the rest (name,
// candidates, options).
SweepSummary sweep_identity(const std::string& scenario_path, const std::string& prices_path,
                            const Catalog& catalog, const SweepOptions& options);

// Parses `args` (after the subcommand name). Prints help and returns false on --help; throws
// po::error on bad options.
bool parse(const std::vector<std::string>& args, const po::options_description& options,
           const po::positional_options_description& positional, po::variables_map* values,
           const std::string& usage);

// Loads models/ and topologies/ under the root, then each --catalog directory. Prints every
// diagnostic to stderr. Returns nullptr when any was an error or there is no runtime "default".
std::unique_ptr<Catalog> load_catalog(const CommonOptions& common);

// The --format value, or nullopt after printing why it is wrong.
std::optional<OutputFormat> output_format(const CommonOptions& common);

void print_diagnostics(const Diagnostics& diagnostics);

// A table whose first columns name a configuration: instance, nodes, TP, CP, PP, DP, EP,
// micro-batch (the cost, memory and input tables), and a configuration's cells for them.
Table layout_table();
std::vector<Table::Cell> layout_cells(const Configuration& configuration);
// The columns saying how a table's configurations shard their model states, as a sweep's rows
// show them: the ZeRO stage, the distributed optimizer apart, and the hybrid-sharding group
// (data_parallel_shard) when one of the configurations shards within groups smaller than its
// data-parallel ranks.
class ShardingColumns {
 public:
  explicit ShardingColumns(const std::vector<Configuration>& configurations);
  void add_to(Table* table) const;
  void add_cells(const Configuration& configuration, std::vector<Table::Cell>* cells) const;

 private:
  bool shard_groups_;
};

// What a command that works on one scenario (plan, memory, run) has loaded.
struct ScenarioInputs {
  std::unique_ptr<Catalog> catalog;
  std::unique_ptr<LoadedScenario> scenario;  // points into catalog
  OutputFormat format = OutputFormat::kTable;
  size_t limit = 20;  // --limit: configurations to list (0: all)
  std::string path;
  std::string root;  // --root: the project directory of the shipped catalog and evidence
};

// Whether some configuration of the scenario can run (sweep/runnable.h); when none can, prints
// why, after the scenario's path. A command then exits with kExitInputError: before its output
// when no configuration is valid, after it (the memory it lacks is news) when none fits.
Runnability check_scenario_runs(const ScenarioInputs& inputs);
// Prints that no configuration's whole run could be simulated (run_simulation.h), with `reason`
// (a row's), at the field that causes it: the job's budget field ("s.textproto:9:3:
// job.token_budget: ...", the reason naming the largest budget that works), or, for a run not
// expected to finish (`never_finishes`: RunCost's), the checkpoint interval the scenario forces,
// else the interruption rate it states, else its cost block.
void report_unsimulated_runs(const ScenarioInputs& inputs, const std::string& reason,
                             bool never_finishes);
// Prints that no configuration's checkpoint fits its volume, at the scenario's
// cost.checkpoint.volume (sweep.checkpoint_storage where it sweeps them), with `reason` (a row's:
// how much does not fit in how much).
void report_checkpoint_over_volume(const ScenarioInputs& inputs, const std::string& reason);

// Parses `args` (a positional SCENARIO, --limit, the common options, and `extra`, the command's
// own options) into `*common` and `*inputs` (path, format, limit), loading nothing. Returns false
// with `*exit_code` set (kExitOk after --help, kExitUsage for a bad --format). regress parses
// with it, then loads the scenario as its baseline's kind (a training or a serving scenario).
bool parse_scenario_command(const std::vector<std::string>& args, const std::string& command,
                            const std::string& limit_help, int* exit_code,
                            const po::options_description* extra, CommonOptions* common,
                            ScenarioInputs* inputs);

// parse_scenario_command, then loads the catalog and the (training) scenario, printing every
// diagnostic. Returns the inputs, or nullopt with `*exit_code` set (kExitOk after --help).
std::optional<ScenarioInputs> load_scenario_command(const std::vector<std::string>& args,
                                                    const std::string& command,
                                                    const std::string& limit_help, int* exit_code,
                                                    const po::options_description* extra = nullptr);

// A scenario's cost model and the --prices file it reads (which must outlive it).
struct CostInputs {
  std::unique_ptr<TextFile<schema::PriceFile>> price_file;
  std::unique_ptr<CostModel> model;
};
// Reads the --prices file `prices_path` (none when empty) and builds the scenario's cost model,
// printing every diagnostic. Returns nullopt when either has an error.
std::optional<CostInputs> load_cost_inputs(const ScenarioInputs& inputs,
                                           const std::string& prices_path);

// Evaluates the first `inputs.limit` (0: all) valid configurations of `space` in order, handing
// each with its evaluation to `visit`. Returns how many, or nullopt after printing the error of a
// cluster that could not be built.
std::optional<size_t> evaluate_each(
    const ScenarioInputs& inputs, const ExpandedConfigurations& space,
    const std::function<void(const Configuration&, const Evaluation&)>& visit);

}  // namespace clustersim::cli
