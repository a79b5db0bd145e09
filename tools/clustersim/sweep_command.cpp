// `clustersim sweep SCENARIO`: the main job. Evaluates every configuration of a scenario in
// parallel, streams every row to a results file (--out: HDF5, CSV or JSON), and answers with the
// fastest, the cheapest and the Pareto front of time against cost (or the best N by time or cost).
// Also runs one shard of a sweep (--shard K/N) and resumes an interrupted one (--resume).
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>

#include "sim/io/text_file.h"
#include "sim/sweep/ranking.h"
#include "sim/sweep/results_file.h"
#include "sim/sweep/sweep_runner.h"
#include "sim/sweep/sweep_summary.h"
#include "sim/util/number_format.h"
#include "tools/clustersim/command_line.h"
#include "tools/clustersim/commands.h"

namespace clustersim::cli {
namespace {

constexpr int64_t kCandidateLimit = 10'000'000;  // above this, --force is required
constexpr int kExitInterrupted = 130;            // as a shell reports a SIGINT

// Set by SIGINT/SIGTERM (Ctrl-C, a Slurm time limit, a Kubernetes eviction): the sweep stops
// after its current chunk, leaving a .partial file that --resume continues.
volatile std::sig_atomic_t stop_requested = 0;
extern "C" void request_stop(int) { stop_requested = 1; }

enum class Ranking { kPareto, kTime, kCost };

struct SweepArguments {
  int threads = 0;
  std::string rank = "pareto";
  std::string out;
  std::string shard = "1/1";
  bool resume = false;
  bool force = false;
  std::string prices;
};

// Parses "K/N" (1 <= K <= N) into a 0-based shard; false when malformed.
bool parse_shard(const std::string& text, SweepOptions* options) {
  int k = 0, n = 0;
  char slash = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c", &k, &slash, &n, &extra) != 3 || slash != '/' || k < 1 ||
      n < 1 || k > n) {
    return false;
  }
  options->shard = k - 1;
  options->shard_count = n;
  return true;
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Where every row goes besides the rankings: an HDF5 results file, a CSV/JSON file, or nowhere.
class RowOutput {
 public:
  // Opens the output before any work, so a wrong path fails at once.
  bool open(const std::string& path, bool resume, std::string* error) {
    path_ = path;
    if (path.empty()) return true;
    if (ends_with(path, ".h5")) {
      hdf5_ = resume ? ResultsWriter::reopen(path, error) : ResultsWriter::create(path, error);
      return hdf5_ != nullptr;
    }
    const OutputFormat format = ends_with(path, ".csv") ? OutputFormat::kCsv : OutputFormat::kJson;
    text_file_.open(path);
    if (!text_file_) {
      *error = "cannot write " + path + " (does the directory exist and is it writable?)";
      return false;
    }
    text_ = std::make_unique<StreamingTable>(&text_file_, format, result_column_keys());
    return true;
  }
  ResultsWriter* hdf5() { return hdf5_.get(); }

  bool write(const std::vector<ResultRow>& rows, const SweepSummary& summary, std::string* error) {
    if (hdf5_) {
      return hdf5_->append(rows, error) && hdf5_->set_attributes(to_attributes(summary), error);
    }
    if (text_) {
      for (const ResultRow& row : rows) text_->add_row(row);
      if (!text_file_) *error = "cannot write " + path_;
      return static_cast<bool>(text_file_);
    }
    return true;
  }

  bool finish(std::string* error) {
    if (hdf5_) return hdf5_->commit(error);
    if (text_) {
      text_->finish();
      text_file_.close();
      if (!text_file_) *error = "cannot write " + path_;
      return static_cast<bool>(text_file_);
    }
    return true;
  }

 private:
  std::string path_;
  std::unique_ptr<ResultsWriter> hdf5_;
  std::ofstream text_file_;
  std::unique_ptr<StreamingTable> text_;
};

// "done/total, rate, ETA" on one rewritten line of stderr, only when it is a terminal.
class Progress {
 public:
  explicit Progress(int64_t total)
      : total_(total), shown_(isatty(STDERR_FILENO)), start_(std::chrono::steady_clock::now()) {}
  void update(int64_t done) {
    if (!shown_) return;
    const double elapsed = seconds();
    const double rate = elapsed > 0 ? done / elapsed : 0;
    const double eta = rate > 0 ? (total_ - done) / rate : 0;
    std::fprintf(stderr, "\r  %lld/%lld configurations  %.0f/s  ETA %d:%02d   ",
                 static_cast<long long>(done), static_cast<long long>(total_), rate,
                 static_cast<int>(eta) / 60, static_cast<int>(eta) % 60);
  }
  void finish() {
    if (shown_) std::fprintf(stderr, "\r%60s\r", "");
  }
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  int64_t total_;
  bool shown_;
  std::chrono::steady_clock::time_point start_;
};

// The rankings, fed with every row (including those of a resumed file).
struct Rankings {
  explicit Rankings(size_t top)
      : fastest(result_column("time_to_train_h"), top), cheapest(result_column("cost"), top) {}
  void offer(const ResultRow& row) {
    ++statuses[row_text(row, result_column("status"))];
    fastest.offer(row);
    cheapest.offer(row);
    front.offer(row);
  }
  TopRows fastest, cheapest;
  ParetoFront front;
  std::map<std::string, int64_t> statuses;  // rows per status
};

void print_answer(const SweepSummary& summary, const Rankings& rankings, Ranking ranking,
                  size_t top, OutputFormat format) {
  const bool table = format == OutputFormat::kTable;
  std::vector<ResultRow> rows = ranking == Ranking::kTime   ? rankings.fastest.rows()
                                : ranking == Ranking::kCost ? rankings.cheapest.rows()
                                                            : rankings.front.rows();
  if (top > 0 && rows.size() > top) rows.resize(top);
  if (table) {
    std::cout << "scenario    " << summary.scenario_name << "\n"
              << "candidates  " << summary.candidates;
    if (summary.shard_count > 1) {
      std::cout << " (shard " << summary.shard + 1 << "/" << summary.shard_count << ")";
    }
    std::cout << "\nevaluated   " << summary.rows << " (" << summary.simulated << " simulated, "
              << summary.rows - summary.simulated << " out of GPU memory)\n";
    for (const auto& [reason, count] : summary.pruned) {
      std::cout << "pruned      " << count << ": " << reason << "\n";
    }
    for (const char* status : {kStatusOverTime, kStatusOverCost}) {
      const auto it = rankings.statuses.find(status);
      if (it != rankings.statuses.end()) {
        std::cout << "not ranked  " << it->second << ": " << status << "\n";
      }
    }
    const auto describe = [](const char* what, const std::vector<ResultRow>& best) {
      std::cout << what;
      if (best.empty()) {
        std::cout << "none (no configuration fits and has a price)\n";
        return;
      }
      const ResultRow& r = best.front();
      std::cout << describe_configuration(r) << ": "
                << format_fixed(row_number(r, result_column("time_to_train_h")), 1) << " h";
      const double cost = row_number(r, result_column("cost"));
      if (cost == cost) {
        std::cout << ", " << format_fixed(cost, 0) << " " << row_text(r, result_column("currency"));
      }
      std::cout << "\n";
    };
    describe("fastest     ", rankings.fastest.rows());
    describe("cheapest    ", rankings.cheapest.rows());
    std::cout << "\n"
              << (ranking == Ranking::kPareto ? "Pareto front of time to train against cost"
                  : ranking == Ranking::kTime ? "fastest configurations"
                                              : "cheapest configurations")
              << ":\n";
  }
  result_table(table ? summary_columns(rows) : result_column_keys(), rows).print(std::cout, format);
}

}  // namespace

int sweep_command(const std::vector<std::string>& args) {
  SweepArguments a;
  po::options_description own("sweep");
  own.add_options()("jobs,j", po::value(&a.threads)->default_value(0),
                    "worker threads (0: every core)")(
      "rank", po::value(&a.rank)->default_value("pareto"),
      "answer with the Pareto front of time against cost (pareto), or the best by time or cost")(
      "out", po::value(&a.out),
      "write every row: FILE.h5 (HDF5 results, for merge, regress and plot), FILE.csv, FILE.json")(
      "shard", po::value(&a.shard)->default_value("1/1"),
      "evaluate shard K of N (every N-th configuration from the K-th)")(
      "resume", po::bool_switch(&a.resume), "continue the interrupted sweep of --out FILE.h5")(
      "force", po::bool_switch(&a.force),
      "run a sweep of more than 10,000,000 candidate configurations")(
      "prices", po::value(&a.prices), "file of price overrides (a PriceFile; see clustersim cost)");
  int exit_code = kExitOk;
  auto inputs = load_scenario_command(args, "sweep", "rows of the answer to print (0: all)",
                                      &exit_code, &own);
  if (!inputs) return exit_code;
  SweepOptions options;
  options.threads = a.threads;
  const Ranking ranking = a.rank == "time"   ? Ranking::kTime
                          : a.rank == "cost" ? Ranking::kCost
                                             : Ranking::kPareto;
  if (a.rank != "pareto" && a.rank != "time" && a.rank != "cost") {
    std::cerr << "clustersim sweep: --rank must be pareto, time or cost, not \"" << a.rank
              << "\"\n";
    return kExitUsage;
  }
  if (!parse_shard(a.shard, &options)) {
    std::cerr << "clustersim sweep: --shard must be K/N with 1 <= K <= N, not \"" << a.shard
              << "\"\n";
    return kExitUsage;
  }
  if (a.threads < 0) {
    std::cerr << "clustersim sweep: --jobs must be 0 (every core) or more\n";
    return kExitUsage;
  }
  if (!a.out.empty() && !ends_with(a.out, ".h5") && !ends_with(a.out, ".csv") &&
      !ends_with(a.out, ".json")) {
    std::cerr << "clustersim sweep: --out must end in .h5, .csv or .json: " << a.out << "\n";
    return kExitUsage;
  }
  if (a.resume && !ends_with(a.out, ".h5")) {
    std::cerr << "clustersim sweep: --resume needs --out FILE.h5 (the interrupted sweep's file)\n";
    return kExitUsage;
  }

  const LoadedScenario& scenario = *inputs->scenario;
  const std::optional<CostInputs> cost = load_cost_inputs(*inputs, a.prices);
  if (!cost) return kExitInputError;
  SweepSummary summary;
  summary.scenario_name = scenario.scenario().name();
  Diagnostics diagnostics;
  read_whole_file(inputs->path, &summary.scenario_text, &diagnostics);
  if (!a.prices.empty()) read_whole_file(a.prices, &summary.prices, &diagnostics);
  summary.tool_version = CLUSTERSIM_VERSION;
  summary.catalog = inputs->catalog->fingerprint();
  summary.candidates = ConfigurationSpace(scenario).size();
  summary.shard = options.shard;
  summary.shard_count = options.shard_count;
  const int64_t in_shard =
      shard_candidates(summary.candidates, options.shard, options.shard_count, 0);
  std::cerr << inputs->path << ": " << summary.candidates << " candidate configurations";
  if (options.shard_count > 1) std::cerr << ", " << in_shard << " in shard " << a.shard;
  std::cerr << "\n";
  if (summary.candidates > kCandidateLimit && !a.force) {
    std::cerr << "clustersim sweep: more than " << kCandidateLimit
              << " candidates; narrow the axes or pass --force\n";
    return kExitUsage;
  }

  Rankings rankings(inputs->limit == 0 ? SIZE_MAX : inputs->limit);
  RowOutput output;
  std::string error;
  if (a.resume) {
    ResultsFile done;
    if (!read_results(partial_path(a.out), &done, &error)) {
      std::cerr << "clustersim sweep: --resume: " << error << "\n";
      return kExitInputError;
    }
    const auto before = from_attributes(done.attributes, &error);
    if (!before || !before->same_sweep(summary) || before->shard != summary.shard ||
        before->shard_count != summary.shard_count) {
      std::cerr << "clustersim sweep: --resume: " << partial_path(a.out)
                << " is not an interrupted run of this scenario, catalog and shard"
                << (before ? "" : ": " + error) << "\n";
      return kExitInputError;
    }
    summary = *before;
    options.first_index = summary.next_index;
    for (const ResultRow& row : done.rows) rankings.offer(row);
    std::cerr << "resuming after " << summary.rows << " rows\n";
  }
  if (!output.open(a.out, a.resume, &error)) {
    std::cerr << "clustersim sweep: --out: " << error << "\n";
    return kExitUsage;
  }

  Progress progress(in_shard);
  const SweepSummary start = summary;
  bool written = true;
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  const SweepCounts counts = run_sweep(
      *inputs->catalog, scenario, *cost->model, options,
      [&](std::vector<ResultRow>& rows, int64_t next_index, const SweepCounts& so_far) {
        summary.next_index = next_index;
        summary.rows = start.rows + so_far.rows;
        summary.simulated = start.simulated + so_far.simulated;
        summary.pruned = start.pruned;
        for (const auto& [reason, count] : so_far.pruned) summary.pruned[reason] += count;
        for (const ResultRow& row : rows) rankings.offer(row);
        written = output.write(rows, summary, &error);
        progress.update(in_shard - shard_candidates(summary.candidates, options.shard,
                                                    options.shard_count, next_index));
        return written && !stop_requested;
      },
      &error);
  progress.finish();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  if (stop_requested && written && error.empty() && summary.next_index < summary.candidates) {
    std::cerr << "interrupted after " << summary.rows << " rows"
              << (output.hdf5() ? "; continue with the same command and --resume" : "") << "\n";
    return kExitInterrupted;
  }
  if (!error.empty()) {
    std::cerr << (written ? inputs->path + ": " : "clustersim sweep: ") << error << "\n";
    return written ? kExitInputError : kExitUsage;
  }
  summary.complete = true;
  summary.next_index = summary.candidates;
  if (output.hdf5() && !output.hdf5()->set_attributes(to_attributes(summary), &error)) {
    std::cerr << "clustersim sweep: " << error << "\n";
    return kExitUsage;
  }
  if (!output.finish(&error)) {
    std::cerr << "clustersim sweep: " << error << "\n";
    return kExitUsage;
  }
  const double seconds = progress.seconds();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::fprintf(stderr, "%lld configurations in %.2f s (%.0f/s), peak memory %.0f MiB%s%s\n",
               static_cast<long long>(counts.candidates), seconds,
               seconds > 0 ? counts.candidates / seconds : 0.0, usage.ru_maxrss / 1024.0,
               a.out.empty() ? "" : ", every row in ", a.out.c_str());
  print_answer(summary, rankings, ranking, inputs->limit, inputs->format);
  return kExitOk;
}

}  // namespace clustersim::cli
