// `clustersim sweep SCENARIO`: the main job. Evaluates every configuration of a scenario in
// parallel, streams every row to a results file (--out: HDF5, CSV or JSON), and answers with the
// fastest, the cheapest and the Pareto front of time against cost (or the best N by time or cost).
// Also runs one shard of a sweep (--shard K/N) and resumes an interrupted one (--resume): rows go
// to a journal as they come (sweep_journal.h, sweep_resume.h), and the results file is made from
// it at the end.
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>

#include "sim/cost/run_cost.h"
#include "sim/io/output_file.h"
#include "sim/sweep/configuration_labels.h"
#include "sim/sweep/configuration_space.h"
#include "sim/sweep/evaluation.h"
#include "sim/sweep/ranking.h"
#include "sim/sweep/results_export.h"
#include "sim/sweep/sweep_resume.h"
#include "sim/sweep/sweep_runner.h"
#include "sim/sweep/sweep_summary.h"
#include "sim/util/number_format.h"
#include "tools/clustersim/accuracy_notes.h"
#include "tools/clustersim/command_line.h"
#include "tools/clustersim/commands.h"
#include "tools/clustersim/progress.h"
#include "tools/clustersim/stop_signals.h"

namespace clustersim::cli {
namespace {

constexpr int64_t kCandidateLimit = 10'000'000;  // above this, --force is required

enum class Ranking { kPareto, kTime, kCost };

struct SweepArguments {
  int threads = 0;
  std::string rank = "pareto";
  std::string out;
  std::string shard = "1/1";
  bool resume = false;
  bool force = false;
  std::string prices;
  int64_t chunk = 0;
};

// The rankings, fed with every row (including those of a resumed file).
struct Rankings {
  // Each ranking keeps the `top` rows printed (and its runner-up, TopRows::leaders).
  Rankings(size_t top, AccuracyKeys accuracy_keys)
      : fastest(result_column("time_to_train_h"), top),
        cheapest(result_column("cost"), top),
        keys(std::move(accuracy_keys)) {}
  void offer(const ResultRow& row) {
    note_result_row(row, &keys);
    const std::string& status = row_text(row, result_column("status"));
    if (status == kStatusTooLong && statuses[status] == 0) first_too_long = row;
    if (status == kStatusCheckpointOverVolume && statuses[status] == 0) {
      first_over_volume = row_text(row, result_column("limiting"));
    }
    ++statuses[status];
    spread.note(row);
    fastest.offer(row);
    cheapest.offer(row);
    front.offer(row);
    if (row_number(row, result_column("pools")) == 1) fastest_one_type.offer(row);
    const double hours = row_number(row, result_column("time_to_train_h"));
    if (status == kStatusOverAvailability &&
        (fastest_unavailable.empty() ||
         hours < row_number(fastest_unavailable, result_column("time_to_train_h")))) {
      fastest_unavailable = row;
    }
  }
  TopRows fastest, cheapest;
  TopRows fastest_one_type{result_column("time_to_train_h"), 1};  // one instance type
  ResultRow fastest_unavailable;  // the fastest row over an availability cap; empty when none
  ParetoFront front;
  std::map<std::string, int64_t> statuses;  // rows per status
  ResultRow first_too_long;                 // the first row too long to simulate
  std::string first_over_volume;            // why the first checkpoint over its volume is
  AccuracyKeys keys;                        // of every simulated row
  ChoiceSpread spread;                      // of every row: what the summary's lines name
};

// Whether the run of `row`, a row too long to simulate, is not expected to finish (RunCost's
// never_finishes): planned again as the row was. A row keeps only its columns, and one read back
// from the journal of a resumed sweep has nothing else, so its run is planned anew.
bool never_finishes(const ScenarioInputs& inputs, const CostModel& model, const ResultRow& row) {
  const Configuration c =
      ConfigurationSpace(*inputs.scenario).at(static_cast<int64_t>(row_number(row, 0)));
  const Evaluation e = Evaluator(*inputs.catalog, *inputs.scenario).evaluate(c);
  schema::BillingMode billing = schema::BILLING_MODE_UNSPECIFIED;
  schema::BillingMode_Parse(row_text(row, result_column("billing")), &billing);
  return run_cost(model, c, plan_checkpoints(model, c, e.memory, *e.step), billing).never_finishes;
}

// The tie notes (accuracy_notes.h) of the fastest and the cheapest row, each against its
// runner-up.
TieNotes rank_ties(const Rankings& rankings, const AccuracyEvidence* evidence) {
  const auto contender = [&](const char* key) {
    return [column = result_column(key), &rankings](const ResultRow& r) {
      return TieContender{row_number(r, 0), row_text(r, result_column("billing")),
                          row_text(r, result_column("instance")), row_number(r, column),
                          describe_configuration(r, rankings.spread)};
    };
  };
  TieNotes ties;
  add_ranking_tie(evidence, rankings.keys, "the fastest", rankings.fastest.leaders(),
                  contender("time_to_train_h"), &ties);
  add_ranking_tie(evidence, rankings.keys, "the cheapest", rankings.cheapest.leaders(),
                  contender("cost"), &ties);
  return ties;
}

// The rows of the answer: the first `top` (0: all) of `ranked` and, in JSON, the fastest and the
// cheapest row where they carry a tie note and are not among them, after them (the table prints
// every note as a line under its summary, whatever rows it shows).
std::vector<ResultRow> answer_rows(std::vector<ResultRow> ranked, size_t top, bool json,
                                   const Rankings& rankings, const TieNotes& ties) {
  if (top > 0 && ranked.size() > top) ranked.resize(top);
  if (!json) return ranked;
  const int billing = result_column("billing");
  const auto same_row = [&](const ResultRow& a, const ResultRow& b) {
    return row_number(a, 0) == row_number(b, 0) && row_text(a, billing) == row_text(b, billing);
  };
  for (const TopRows* ranking : {&rankings.fastest, &rankings.cheapest}) {
    const ResultRow* best = ranking->leaders().best();
    if (!best || ties.of(row_number(*best, 0), row_text(*best, billing)).empty() ||
        std::any_of(ranked.begin(), ranked.end(),
                    [&](const ResultRow& r) { return same_row(r, *best); })) {
      continue;
    }
    ranked.push_back(*best);
  }
  return ranked;
}

// When the fastest row mixes instance types: what each type alone gives, what faster rows an
// availability cap leaves out, and which pool limits the mix.
void explain_mix(const Rankings& rankings) {
  if (rankings.fastest.rows().empty()) return;
  const ResultRow& best = rankings.fastest.rows().front();
  if (row_number(best, result_column("pools")) < 2) return;
  const auto hours = [](const ResultRow& r) {
    return format_fixed(row_number(r, result_column("time_to_train_h")), 1) + " h";
  };
  std::cout << "why         the mix is the fastest within the limits: its pool "
            << row_text(best, result_column("limiting_pool")) << " limits, the others wait "
            << format_fixed(row_number(best, result_column("pool_wait_s")), 3) << " s a step\n";
  if (!rankings.fastest_one_type.rows().empty()) {
    const ResultRow& alone = rankings.fastest_one_type.rows().front();
    std::cout << "            one instance type at best: "
              << describe_configuration(alone, rankings.spread) << ": " << hours(alone) << "\n";
  }
  if (!rankings.fastest_unavailable.empty()) {
    std::cout << "            faster but over availability (constraints.availability): "
              << describe_configuration(rankings.fastest_unavailable, rankings.spread) << ": "
              << hours(rankings.fastest_unavailable) << "\n";
  }
}

// `checkpoint_axis`: the scenario sweeps the checkpoint volume (its column in the table).
void print_answer(const SweepSummary& summary, const Rankings& rankings, Ranking ranking,
                  size_t top, OutputFormat format, const AccuracyEvidence* evidence,
                  bool checkpoint_axis) {
  const bool table = format == OutputFormat::kTable;
  const TieNotes ties = rank_ties(rankings, evidence);
  const std::vector<ResultRow> rows =
      answer_rows(ranking == Ranking::kTime   ? rankings.fastest.rows()
                  : ranking == Ranking::kCost ? rankings.cheapest.rows()
                                              : rankings.front.rows(),
                  top, format == OutputFormat::kJson, rankings, ties);
  if (table) {
    std::cout << "scenario    " << summary.scenario_name << "\n"
              << "candidates  " << summary.candidates;
    if (summary.shard_count > 1) {
      std::cout << " (shard " << summary.shard + 1 << "/" << summary.shard_count << ")";
    }
    std::cout << "\nevaluated   " << summary.configurations << " (" << summary.simulated
              << " simulated, " << summary.configurations - summary.simulated
              << " out of GPU memory)\n";
    for (const auto& [reason, count] : summary.pruned) {
      std::cout << "pruned      " << count << ": " << reason << "\n";
    }
    for (const char* status : {kStatusOverTime, kStatusOverCost, kStatusOverAvailability,
                               kStatusTooLong, kStatusCheckpointOverVolume}) {
      const auto it = rankings.statuses.find(status);
      if (it != rankings.statuses.end()) {
        std::cout << "not ranked  " << it->second << ": " << status << "\n";
      }
    }
    // Why a ranking is empty: nothing fits in GPU memory, every row that fits is one of the
    // `not ranked` counts above, or (the cost ranking alone) no ranked row has a price.
    const char* unranked = summary.simulated == 0 ? "no configuration fits in GPU memory"
                                                  : "no configuration that fits is ranked";
    const auto describe = [&](const char* what, const std::vector<ResultRow>& best) {
      std::cout << what;
      if (best.empty()) {
        std::cout << "none ("
                  << (rankings.fastest.rows().empty() ? unranked
                                                      : "no ranked configuration has a price")
                  << ")\n";
        return;
      }
      const ResultRow& r = best.front();
      std::cout << describe_configuration(r, rankings.spread) << ": "
                << format_fixed(row_number(r, result_column("time_to_train_h")), 1) << " h";
      const double cost = row_number(r, result_column("cost"));
      if (cost == cost) {
        std::cout << ", " << format_fixed(cost, 0) << " " << row_text(r, result_column("currency"));
      }
      std::cout << "\n";
    };
    describe("fastest     ", rankings.fastest.rows());
    explain_mix(rankings);
    describe("cheapest    ", rankings.cheapest.rows());
    print_ties(std::cout, ties);
    std::cout << "\n"
              << (ranking == Ranking::kPareto ? "Pareto front of time to train against cost"
                  : ranking == Ranking::kTime ? "fastest configurations"
                                              : "cheapest configurations")
              << ":\n";
  }
  if (table && rows.empty() && !rankings.fastest.rows().empty()) {
    std::cout << "none: no ranked configuration has a price to weigh against its time "
                 "(--rank time lists the fastest)\n";
  } else {
    table_with_accuracy(result_columns(),
                        table ? summary_columns(rows, checkpoint_axis) : result_column_keys(), rows,
                        result_column("instance"), format == OutputFormat::kJson, evidence,
                        rankings.keys, ties)
        .print(std::cout, format);
  }
  if (table) print_accuracy(std::cout, evidence, rankings.keys);
}

// The command line's checks that need no loaded scenario (its path only: --out must not replace
// it); false (message printed) when one fails.
bool check_arguments(const SweepArguments& a, const std::string& scenario_path,
                     SweepOptions* options) {
  const auto fail = [](const std::string& message) {
    command_error("sweep") << message << "\n";
    return false;
  };
  if (a.rank != "pareto" && a.rank != "time" && a.rank != "cost") {
    return fail("--rank must be pareto, time or cost, not \"" + a.rank + "\"");
  }
  if (const std::string why = shard_problem(a.shard, options); !why.empty()) return fail(why);
  if (const std::string why = threads_problem(a.threads); !why.empty()) return fail(why);
  if (a.chunk < 0) return fail("--chunk must be 0 (adaptive) or more");
  if (a.resume && a.out.empty()) return fail("--resume needs --out FILE (the interrupted sweep's)");
  if (a.out.empty()) return true;
  if (!results_format(a.out)) return fail("--out must end in .h5, .csv or .json: " + a.out);
  if (const std::string why = shard_output_problem(a.out, *options); !why.empty()) return fail(why);
  std::string error;
  return check_output_path(a.out, &error, {scenario_path, a.prices}) || fail("--out: " + error);
}

// The sweep's identity and counts before it starts.
SweepSummary new_summary(const ScenarioInputs& inputs, const SweepArguments& a,
                         const SweepOptions& options) {
  SweepSummary summary = sweep_identity(inputs.path, a.prices, *inputs.catalog, options);
  summary.scenario_name = inputs.scenario->scenario().name();
  summary.candidates = ConfigurationSpace(*inputs.scenario).size();
  return summary;
}

// The journal of --out: new (none may be left by an interrupted sweep), or (--resume) the
// interrupted one, whose rows go to `rankings` and whose progress replaces `*summary`. Null
// (message printed) when it cannot be had; also null, without a message, when there is no --out.
std::unique_ptr<SweepJournal> open_journal(const SweepArguments& a, SweepSummary* summary,
                                           Rankings* rankings, bool* failed) {
  *failed = false;
  if (a.out.empty()) return nullptr;
  std::string notice, error;
  std::unique_ptr<SweepJournal> journal = open_sweep_journal(
      a.out, a.resume, result_columns(), [&](ResultRow&& row) { rankings->offer(row); }, summary,
      &notice, &error);
  if (!journal) {
    command_error("sweep") << (a.resume ? "--resume: " : "--out: ") << error << "\n";
    *failed = true;
  } else if (!notice.empty()) {
    std::cerr << notice << "\n";
  }
  return journal;
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
      "resume", po::bool_switch(&a.resume), "continue the interrupted sweep of --out FILE")(
      "force", po::bool_switch(&a.force),
      "run a sweep of more than 10,000,000 candidate configurations")(
      "prices", po::value(&a.prices), "file of price overrides (a PriceFile; see clustersim cost)")(
      "chunk", po::value(&a.chunk)->default_value(0),
      "configurations per hand-over to the journal (0: adaptive, about 0.25 s of work each)");
  int exit_code = kExitOk;
  auto inputs = load_scenario_command(args, "sweep", "rows of the answer to print (0: all)",
                                      &exit_code, &own);
  if (!inputs) return exit_code;
  SweepOptions options;
  options.threads = a.threads;
  options.chunk = a.chunk;
  if (!check_arguments(a, inputs->path, &options)) return kExitUsage;
  const Ranking ranking = a.rank == "time"   ? Ranking::kTime
                          : a.rank == "cost" ? Ranking::kCost
                                             : Ranking::kPareto;
  const std::optional<CostInputs> cost = load_cost_inputs(*inputs, a.prices);
  if (!cost) return kExitInputError;
  SweepSummary summary = new_summary(*inputs, a, options);
  const int64_t in_shard =
      shard_candidates(summary.candidates, options.shard, options.shard_count, 0);
  std::cerr << inputs->path << ": " << summary.candidates << " candidate configurations";
  if (options.shard_count > 1) std::cerr << ", " << in_shard << " in shard " << a.shard;
  std::cerr << "\n";
  if (summary.candidates > kCandidateLimit && !a.force) {
    command_error("sweep") << "more than " << kCandidateLimit
                           << " candidates; narrow the axes or pass --force\n";
    return kExitUsage;
  }
  if (!check_scenario_runs(*inputs).runs) return kExitInputError;
  bool evidence_failed = false;
  const auto evidence = load_accuracy_evidence(inputs->root, *inputs->catalog, &evidence_failed);
  if (evidence_failed) return kExitInputError;

  Rankings rankings(inputs->limit == 0 ? SIZE_MAX : inputs->limit,
                    training_accuracy_keys(*inputs->catalog, *inputs->scenario));
  options.interruption = stop_on_signals();
  bool failed = false;
  std::unique_ptr<SweepJournal> journal = open_journal(a, &summary, &rankings, &failed);
  if (failed) return a.resume ? kExitInputError : kExitUsage;
  options.first_index = summary.next_index;

  Progress progress(in_shard);
  const SweepSummary start = summary;
  std::string error;
  bool written = true;
  const SweepCounts counts = run_sweep(
      *inputs->catalog, *inputs->scenario, *cost->model, options,
      [&](std::vector<ResultRow>& rows, int64_t next_index, const SweepCounts& so_far) {
        record_progress(start, next_index, so_far, &summary);
        for (const ResultRow& row : rows) rankings.offer(row);
        written = !journal || journal->append(rows, summary, &error);
        progress.update(in_shard - shard_candidates(summary.candidates, options.shard,
                                                    options.shard_count, next_index));
        return written;
      },
      &error);
  progress.finish();
  if (counts.interrupted) {
    command_error("sweep") << "interrupted after " << summary.configurations << " configurations"
                           << (journal ? "; continue with the same command and --resume" : "")
                           << "\n";
    return kExitInterrupted;
  }
  if (!error.empty()) {
    std::cerr << (written ? inputs->path + ": " : "clustersim sweep: ") << error << "\n";
    return written ? kExitInputError : kExitUsage;
  }
  summary.complete = true;
  summary.next_index = summary.candidates;
  if (journal) {
    if (!export_results(*journal, summary, a.out, &error)) {
      command_error("sweep") << error << "\n";
      return kExitUsage;
    }
    journal->remove();
  }
  const double seconds = progress.seconds();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::fprintf(stderr, "%lld configurations in %.2f s (%.0f/s), peak memory %.0f MiB%s%s\n",
               static_cast<long long>(counts.candidates), seconds,
               seconds > 0 ? counts.candidates / seconds : 0.0, usage.ru_maxrss / 1024.0,
               a.out.empty() ? "" : ", every row in ", a.out.c_str());
  print_answer(summary, rankings, ranking, inputs->limit, inputs->format, evidence.get(),
               inputs->scenario->scenario().sweep().checkpoint_storage_size() > 0);
  // No row got a time, every one too long to simulate or with a checkpoint over its volume.
  const auto rows_of = [&](const char* status) {
    const auto it = rankings.statuses.find(status);
    return it == rankings.statuses.end() ? int64_t{0} : it->second;
  };
  const int64_t too_long = rows_of(kStatusTooLong);
  const int64_t over_volume = rows_of(kStatusCheckpointOverVolume);
  if (too_long + over_volume > 0 && too_long + over_volume == summary.rows) {
    if (too_long > 0) {
      report_unsimulated_runs(*inputs, row_text(rankings.first_too_long, result_column("limiting")),
                              never_finishes(*inputs, *cost->model, rankings.first_too_long));
    }
    if (over_volume > 0) report_checkpoint_over_volume(*inputs, rankings.first_over_volume);
    return kExitInputError;
  }
  return kExitOk;
}

}  // namespace clustersim::cli
