// `clustersim serve SCENARIO`: sizes an inference deployment. Every deployment of the scenario
// (instance x TP x PP x replicas x quantization x scheduler caps, x concurrency levels of a
// closed-loop client) serves the traffic on the engine; the table lists latency percentiles,
// throughput, utilization and cost per million output tokens per billing mode (closed loop: per
// concurrency level, latency against concurrency as serving benchmarks publish it); the answer is the cheapest deployment that meets the latency
// objectives and, when none does, which objective binds (serve_answers.h; in JSON and CSV as
// columns of the rows). An autoscaling block prices a daily traffic curve on the cheapest
// deployment's replica. With --out, rows go to a journal as they
// come (sweep_journal.h, as a training sweep's), so that a sizing killed at any instant resumes
// with --resume to the output an uninterrupted run gives. With --shard K/N it sizes every N-th
// deployment from the K-th, as a training sweep's shard (clustersim merge joins the files).
#include <algorithm>
#include <filesystem>
#include <cmath>
#include <iostream>
#include <map>
#include <set>

#include "sim/io/field_checker.h"
#include "sim/io/output_file.h"
#include "sim/serve/autoscaling.h"
#include "sim/serve/serving_sweep.h"
#include "sim/serve/traffic.h"
#include "sim/serve/traffic_samples.h"
#include "sim/sweep/results_export.h"
#include "sim/sweep/results_file.h"
#include "sim/sweep/sweep_resume.h"
#include "sim/util/number_format.h"
#include "tools/clustersim/accuracy_notes.h"
#include "tools/clustersim/command_line.h"
#include "tools/clustersim/commands.h"
#include "tools/clustersim/serve_answers.h"
#include "tools/clustersim/slo_margin.h"
#include "tools/clustersim/serve_plots.h"
#include "tools/clustersim/serving_inputs.h"
#include "tools/clustersim/stop_signals.h"

namespace clustersim::cli {
namespace {

namespace s = schema;

struct ServeOptions {
  CommonOptions common;
  std::string scenario;
  std::string prices;
  std::string out;
  std::string plot_dir;
  std::string shard = "1/1";
  int threads = 0;
  int64_t chunk = 0;
  size_t limit = 20;
  bool max_rate = false;
  int samples = 0;  // --samples; 0: the scenario's traffic.samples
  bool resume = false;
};

// The day of the scenario's autoscaling block on a deployment's replica: its plan, or why there
// is none.
struct AutoscaledDay {
  ServingConfiguration deployment;
  std::optional<AutoscalingPlan> plan;
  std::string why;
};

// The day on `row`'s deployment, its replica's capacity met on all `samples` traffic samples.
AutoscaledDay plan_day(const Catalog& catalog, const LoadedServingScenario& loaded,
                       const ServingPrices& prices, const ResultRow& row, int samples) {
  AutoscaledDay day{ServingSpace(loaded).at(
                        static_cast<int64_t>(row_number(row, serving_column("index")))),
                    std::nullopt, ""};
  day.plan = plan_autoscaling(catalog, loaded, prices, day.deployment, samples, &day.why);
  return day;
}

// `day`: replicas per hour, baseline and burst, the day's cost against all on demand.
void print_autoscaling(std::ostream& out, const LoadedServingScenario& loaded,
                       const ServingPrices& prices, const AutoscaledDay& day, int samples) {
  if (!day.plan) {
    out << "\nautoscaling: " << day.why << "\n";
    return;
  }
  const ServingConfiguration& c = day.deployment;
  const AutoscalingPlan* plan = &*day.plan;
  const s::Autoscaling& a = loaded.scenario().autoscaling();
  Table t{{"hour", "hour"},
          {"rate_per_s", "req/s", 1},
          {"replicas", "replicas"},
          {"burst_nodes", "burst nodes"},
          {"cost", "cost", 2}};
  for (size_t h = 0; h < plan->hours.size(); ++h) {
    const HourPlan& p = plan->hours[h];
    t.add_row({static_cast<double>(h), p.rate_per_s, static_cast<double>(p.replicas),
               static_cast<double>(p.burst_nodes), p.cost});
  }
  const std::string currency = s::Currency_Name(prices.currency);
  out << "\nautoscaling over the day (one replica of " << c.instance->name() << " x "
      << c.replica_gpus() << " GPUs serves "
      << (plan->replica_rate_is_lower_bound ? "at least " : "up to ")
      << format_fixed(plan->replica_rate_per_s, 2) << " req/s within the SLO"
      << (samples > 1 ? " on every sample" : "");
  if (plan->replica_rate_is_lower_bound) {  // it printed the search's limit as the capacity
    out << ", the most the rate search tries ("
        << format_number(max_rate_scale_limit(loaded.scenario().traffic()))
        << " times the traffic's rate): raise the traffic's rate to find its capacity; the hours "
           "may get more replicas than they need";
  }
  out << "):\n";
  t.print(out, OutputFormat::kTable);
  const s::BillingMode base = a.has_baseline_billing() ? a.baseline_billing() : s::SUBSCRIPTION_MONTHLY;
  const s::BillingMode burst = a.has_burst_billing() ? a.burst_billing() : s::ON_DEMAND;
  out << "baseline " << plan->baseline_replicas << " replicas (" << plan->baseline_nodes
      << " nodes) on " << s::BillingMode_Name(base) << ", the rest " << s::BillingMode_Name(burst)
      << ": the day costs " << format_fixed(plan->day_cost, 2) << " " << currency << " against "
      << format_fixed(plan->all_on_demand_cost, 2) << " " << currency << " all ON_DEMAND";
  if (plan->all_on_demand_cost > 0) {
    out << " (" << format_fixed(100 * (1 - plan->day_cost / plan->all_on_demand_cost), 1)
        << "% saved)\n";
  } else {  // a saving of 0 was printed as -nan%
    out << " (no hour's traffic needs a replica)\n";
  }
}

// --max-rate: the deployments that met the objectives at the most the rate search tries, whose
// max req/s is a lower bound (it was printed as their highest rate).
void print_rate_search_limit(const LoadedServingScenario& loaded,
                             const std::vector<ResultRow>& rows) {
  const s::Traffic& traffic = loaded.scenario().traffic();
  const double limit = max_rate_scale_limit(traffic);
  const double at_limit = limit * mean_rate_per_s(traffic, loaded.trace);
  const int rate = serving_column("max_rate_per_s"), index = serving_column("index");
  std::set<double> deployments;
  for (const ResultRow& row : rows) {
    if (row_number(row, rate) == at_limit) deployments.insert(row_number(row, index));
  }
  if (deployments.empty()) return;
  std::cerr << "  " << deployments.size()
            << (deployments.size() == 1 ? " deployment meets" : " deployments meet")
            << " the SLO at " << format_number(limit) << " times the traffic's rate ("
            << format_number(at_limit)
            << " req/s), the most --max-rate tries: their max req/s is a lower bound (raise the "
               "traffic's rate to find it)\n";
}

// With several traffic samples: the rule, and the deployments whose verdict differs between
// samples (met on some, not all), as "#4 on 3 of 5" (the first 12).
void print_sample_verdicts(std::ostream& out, const std::vector<ResultRow>& rows, int samples,
                           bool slo) {
  out << "\n" << samples << " independent traffic samples per deployment: every figure is the "
      << "median over them, the worst p99s beside";
  if (!slo) {
    out << "\n";
    return;
  }
  out << "; a deployment meets the SLO only when it meets it on all " << samples
      << " samples (its worst p99s do)\n";
  const int index = serving_column("index"), met = serving_column("samples_meeting_slo");
  std::map<int64_t, int64_t> fragile;  // deployment -> samples meeting the SLO
  for (const ResultRow& row : rows) {
    const double k = row_number(row, met);
    if (k > 0 && k < samples) {
      fragile[static_cast<int64_t>(row_number(row, index))] = static_cast<int64_t>(k);
    }
  }
  if (fragile.empty()) {
    out << "every deployment meets it on all " << samples << " samples or on none\n";
    return;
  }
  out << fragile.size() << (fragile.size() == 1 ? " deployment meets" : " deployments meet")
      << " it on some samples but not all";
  // The first few: a large sizing has hundreds (samples_meeting_slo in --out has them all).
  constexpr size_t kListed = 12;
  std::string separator = ": ";
  size_t listed = 0;
  for (const auto& [deployment, k] : fragile) {
    if (listed++ == kListed) break;
    out << separator << "#" << deployment << " on " << k << " of " << samples;
    separator = ", ";
  }
  if (fragile.size() > kListed) {
    out << " and " << fragile.size() - kListed << " more (samples_meeting_slo in --out's rows)";
  }
  out << "\n";
}

// The note on a deployment larger than its traffic needs: at most half its replicas (prefill ones
// with them) had a request outstanding at once. Of the row the answer rests on alone: the one
// deployment of a scenario, else the cheapest (with several deployments and none meeting the
// objectives, none): in a sweep over replica counts the larger ones are oversized by design, and
// a line per row would be noise (their replicas_used and peak_busy_replicas are in --out's rows).
void print_idle_replicas(std::ostream& out, const std::vector<ResultRow>& rows,
                         const ResultRow* cheapest) {
  const int index = serving_column("index");
  const bool one = std::all_of(rows.begin(), rows.end(), [&](const ResultRow& row) {
    return row_number(row, index) == row_number(rows.front(), index);
  });
  const ResultRow* row = !rows.empty() && one ? &rows.front() : cheapest;
  const int used = serving_column("replicas_used"), peak = serving_column("peak_busy_replicas");
  if (row == nullptr || static_cast<int>(row->size()) <= peak) return;
  const double replicas = row_number(*row, serving_column("replicas")) +
                          row_number(*row, serving_column("prefill_replicas"));
  const double busy = row_number(*row, peak);
  if (!(2 * busy <= replicas)) return;  // NaN (out of memory): no note
  out << "replicas    " << (one ? "" : "the cheapest: ") << "at most " << format_number(busy)
      << " of its " << format_number(replicas) << " replicas busy at once, "
      << format_number(row_number(*row, used))
      << " ever sent a request: more than the traffic needs (size them with sweep.replicas or an "
         "autoscaling block; --max-rate finds the rate they sustain)\n";
}

// Every row to `path`: an HDF5 results file (results_file.h, the serving columns, the sizing's
// `summary` as attributes) for .h5, else CSV or JSON by extension.
bool write_rows(const ServeOptions& o, const SweepSummary& summary,
                const std::vector<ResultRow>& rows, int samples) {
  const std::vector<ResultColumn>& columns = serving_columns(samples);
  const auto ends_with = [&](const std::string& tail) {
    return o.out.size() >= tail.size() && o.out.compare(o.out.size() - tail.size(), tail.size(), tail) == 0;
  };
  std::string error;
  if (ends_with(".h5")) {
    auto writer = ResultsWriter::create(o.out, &error, columns);
    if (writer && writer->append(rows, &error) && writer->commit(summary, &error)) return true;
  } else {
    OutputFile out;
    std::vector<std::string> keys;
    for (const ResultColumn& c : columns) keys.push_back(c.key);
    if (out.open(o.out, &error)) {
      serving_table(keys, rows).print(out.stream(), ends_with(".json") ? OutputFormat::kJson
                                                                      : OutputFormat::kCsv);
      if (out.commit(&error)) return true;
    }
  }
  command_error("serve") << "--out: " << error << "\n";
  return false;
}

// The verdict when no deployment meets the SLO: what the rows above say binds. Where every
// simulated deployment is overloaded, no objective does: each falls behind the arrivals.
std::string why_none_meets(const std::vector<ResultRow>& rows) {
  const int status = serving_column("status");
  const auto has = [&](const char* st) {
    return std::any_of(rows.begin(), rows.end(),
                       [&](const ResultRow& row) { return row_text(row, status) == st; });
  };
  if (has(kStatusOverloaded) && !has(kStatusMissesSlo)) {
    return std::string(": every deployment") +
           (has(kStatusOutOfMemory) ? " that fits in GPU memory" : "") +
           " falls behind the arrivals (see above: what each serves of the rate offered)";
  }
  return " (see above: the objective each instance misses by least binds)";
}

// The answer on `rows`: the table, per instance type, the cheapest, the Pareto front, the
// autoscaled day; in JSON and CSV the answer columns (serve_answers.h) of the rows listed, with
// the rows past --limit an answer names. A shard's (`shard`) verdict is on its deployments only
// and exits 0: the whole sizing's is its merged file's, and on exit 1 a job array's
// `--resume || rerun` would size a finished shard again.
int report(const ServeOptions& o, const LoadedServingScenario& loaded,
           const std::vector<ResultRow>& rows, OutputFormat format, const Catalog& catalog,
           const ServingPrices& prices, bool shard, const AccuracyEvidence* evidence,
           int samples) {
  const s::ServingScenario& m = loaded.scenario();
  const bool table = format == OutputFormat::kTable;
  ServeAnswers answers = serve_answers(rows, samples, m.has_slo());
  const ResultRow* cheapest = answers.cheapest.best() ? *answers.cheapest.best() : nullptr;
  std::vector<ResultRow> shown = rows;
  if (o.limit > 0 && shown.size() > o.limit) {
    // The cut was silent: the 126 rows of the shipped chat sizing listed 20, its cheapest (row
    // 85) not among them, with nothing saying more were left out.
    if (table) {
      shown.resize(o.limit);
    } else {  // the rows the answers name follow, as the text's answers below the table
      shown = listed_rows(rows, o.limit, answers);
    }
    std::cerr << "listing the first " << o.limit << " of " << rows.size() << " rows";
    if (!table && shown.size() > o.limit) {
      std::cerr << " and the " << shown.size() - o.limit << " past them that an answer names";
    }
    std::cerr << " (--limit 0: all" << (table ? "; the answers below weigh every row" : "")
              << ")\n";
  }
  // Expert parallelism's column after tensor parallelism's, where the scenario sets it; the
  // prefix cache's before "limiting" (the last), where the traffic has shared prefixes.
  const bool expert_parallel =
      m.deployment().has_expert_parallel() || m.sweep().expert_parallel_size() > 0;
  // Attention data parallelism's after it, where the scenario sets or sweeps it.
  const bool attention_dp = m.deployment().has_attention_data_parallel() ||
                            m.sweep().attention_data_parallel_size() > 0;
  const auto with_expert_parallel = [&](std::vector<std::string> keys) {
    const auto tp = std::find(keys.begin(), keys.end(), "tensor_parallel");
    if (expert_parallel && tp != keys.end()) {
      const auto ep = keys.insert(tp + 1, "expert_parallel");
      if (attention_dp) keys.insert(ep + 1, "attention_data_parallel");
    }
    return keys;
  };
  std::vector<std::string> summary = with_expert_parallel(serving_summary_columns(
      m.traffic().has_closed_loop(), m.deployment().has_speculative_decoding(), samples));
  if (has_shared_prefixes(loaded)) {
    summary.insert(summary.end() - 1,
                   {"prefix_caching", "prefix_hit_tokens", "prefix_hit_requests"});
  }
  // How far a price can be relied on after its region, where a row pays a user's or a
  // second-hand one.
  if (any_price_in_doubt(rows, serving_column("price_confidence"))) {
    summary.insert(std::find(summary.begin(), summary.end(), "price_region") + 1,
                   "price_confidence");
  }
  // What --max-rate found: the rows listed it in --out's file alone.
  if (o.max_rate) summary.insert(summary.end() - 1, "max_rate_per_s");
  const int instance = serving_column("instance"), calibrated = serving_column("calibrated"),
            cost = serving_column("cost_per_million_tokens");
  AccuracyKeys accuracy(catalog,
                        is_transformer(loaded.model) && loaded.model->transformer().has_moe(),
                        serving_runtime(m, catalog)->name());
  for (const ResultRow& row : rows) {
    const Table::Cell& flag = row[calibrated];
    accuracy.note(row_text(row, instance),
                  std::holds_alternative<bool>(flag) && std::get<bool>(flag));
  }
  std::vector<std::string> margin;
  if (evidence && m.has_slo() && cheapest) {
    margin = margin_lines(rows, *cheapest, m.slo(), samples, *evidence, accuracy,
                          s::Currency_Name(prices.currency));
    for (const std::string& line : margin) {
      answers.margin += (answers.margin.empty() ? "" : " | ") + line;
    }
  }
  TieNotes ties;
  add_ranking_tie(evidence, accuracy, "the cheapest", answers.cheapest,
                  [&](const ResultRow* r) {
                    return TieContender{row_number(*r, serving_column("index")),
                                        row_text(*r, serving_column("billing")),
                                        row_text(*r, instance), row_number(*r, cost),
                                        describe_deployment(*r)};
                  },
                  &ties);
  const std::optional<AutoscaledDay> day =
      m.has_autoscaling() && cheapest
          ? std::optional(plan_day(catalog, loaded, prices, *cheapest, samples))
          : std::nullopt;
  const AutoscalingPlan* day_plan = day && day->plan ? &*day->plan : nullptr;
  if (table) {
    table_with_accuracy(serving_columns(samples), summary, shown, instance, false, evidence,
                        accuracy)
        .print(std::cout, format);
  } else {
    for (ResultRow& row : shown) {
      const std::vector<Table::Cell> cells =
          answer_cells(row, answers, m.has_autoscaling(), day_plan);
      row.insert(row.end(), cells.begin(), cells.end());
    }
    table_with_accuracy(serving_columns(samples), summary, shown, instance,
                        format == OutputFormat::kJson, evidence, accuracy, ties,
                        answer_columns(m.has_autoscaling()))
        .print(std::cout, format);
    if (day && !day->plan) std::cerr << "autoscaling: " << day->why << "\n";
  }
  if (table) print_accuracy(std::cout, evidence, accuracy);
  if (table) print_idle_replicas(std::cout, rows, cheapest);
  if (table && samples > 1) print_sample_verdicts(std::cout, rows, samples, m.has_slo());
  if (table && m.has_slo()) {
    std::cout << "\nper instance type:\n";
    for (const InstanceAnswer& a : answers.per_instance) {
      std::cout << "  " << a.instance << ": " << a.line << "\n";
    }
  }
  // The verdict's exit status is the same in every format: with --format csv or json, a sizing
  // no deployment of which met the SLO (or fit) exited 0.
  const std::string none = shard ? "no deployment of shard " + o.shard : "no deployment";
  const int none_exit = shard ? kExitOk : kExitInputError;
  if (!cheapest && m.has_slo()) {
    std::cerr << o.scenario << ": " << none << " meets the SLO" << why_none_meets(rows) << "\n";
    return none_exit;
  }
  if (!cheapest && std::none_of(rows.begin(), rows.end(), [](const ResultRow& row) {
        return row_text(row, serving_column("status")) == kStatusOk;
      })) {  // without an SLO, this ended in exit 0 with no answer
    std::cerr << o.scenario << ": " << none << " fits in GPU memory (see above: limiting says "
              << "by how much each misses)\n";
    return none_exit;
  }
  if (!table || !cheapest) return kExitOk;
  std::cout << "\ncheapest"
            << (!m.has_slo()   ? ""
                : samples > 1 ? " meeting the SLO on every sample"
                              : " meeting the SLO")
            << ": "
            << describe_deployment(*cheapest) << ": "
            << format_fixed(row_number(*cheapest, cost), 3)
            << " " << s::Currency_Name(prices.currency) << " per million output tokens\n";
  print_ties(std::cout, ties);
  for (const std::string& line : margin) std::cout << "margin      " << line << "\n";
  std::cout << "\nPareto front of cost per million output tokens against "
            << (samples > 1 ? "the worst sample's " : "") << "p99 TTFT:\n";
  std::vector<std::string> keys = {"index", "instance", "replicas", "tensor_parallel",
                                   "pipeline_parallel", "prefill_replicas", "weights", "billing",
                                   verdict_ttft_p99_key(samples), "tpot_p99_ms",
                                   "cost_per_million_tokens", "currency", "price_region"};
  if (any_price_in_doubt(answers.pareto, serving_column("price_confidence"))) {
    keys.push_back("price_confidence");
  }
  if (m.traffic().has_closed_loop()) keys.insert(keys.begin() + 7, "concurrency");
  serving_table(with_expert_parallel(keys), answers.pareto).print(std::cout, OutputFormat::kTable);
  if (day) print_autoscaling(std::cout, loaded, prices, *day, samples);
  return kExitOk;
}

}  // namespace

int serve_command(const std::vector<std::string>& args) {
  ServeOptions o;
  po::options_description options("serve options");
  add_common_options(&options, &o.common, "serve");
  options.add_options()("scenario", po::value(&o.scenario)->required(), "serving scenario file")(
      "prices", po::value(&o.prices), "price overrides (a PriceFile)")(
      "jobs,j", po::value(&o.threads)->default_value(0), "worker threads (0: every core)")(
      "shard", po::value(&o.shard)->default_value("1/1"),
      "size shard K of N (every N-th deployment from the K-th; clustersim merge joins them)")(
      "chunk", po::value(&o.chunk)->default_value(0),
      "deployments per hand-over to the journal (0: adaptive, about 0.25 s of work each)")(
      "resume", po::bool_switch(&o.resume), "continue the interrupted sizing of --out FILE")(
      "limit", count_value(&o.limit), "deployments to list (0: all)")(
      "max-rate", po::bool_switch(&o.max_rate),
      "also find each deployment's highest request rate within the SLO")(
      "samples", po::value(&o.samples),
      "serve N independent samples of the traffic (1 to 100; replaces traffic.samples): "
      "medians and worst p99s, the SLO met only on every sample")(
      "out", po::value(&o.out), "write every row to FILE (.h5, .csv or .json)")(
      "plot-dir", po::value(&o.plot_dir),
      "write SVG charts of latency against throughput and cost into DIR");
  po::positional_options_description positional;
  positional.add("scenario", 1);
  po::variables_map values;
  if (!parse(args, options, positional, &values, "clustersim serve SCENARIO [options]")) {
    return kExitOk;
  }
  auto format = output_format(o.common);
  if (!format) return kExitUsage;
  ServingSweepOptions sweep;
  for (const std::string& why :
       {threads_problem(o.threads), shard_problem(o.shard, &sweep.sweep)}) {
    if (!why.empty()) {
      command_error("serve") << why << "\n";
      return kExitUsage;
    }
  }
  if (values.count("samples") && (o.samples < 1 || o.samples > kMaxTrafficSamples)) {
    command_error("serve") << "--samples must be 1 to " << kMaxTrafficSamples << ", not "
                           << o.samples << "\n";
    return kExitUsage;
  }
  if (o.chunk < 0) {
    command_error("serve") << "--chunk must be 0 (adaptive) or more\n";
    return kExitUsage;
  }
  if (o.resume && o.out.empty()) {
    command_error("serve") << "--resume needs --out FILE (the interrupted sizing's)\n";
    return kExitUsage;
  }
  if (!o.out.empty() && !results_format(o.out)) {  // else a .txt got CSV
    command_error("serve") << "--out must end in .h5, .csv or .json: " << o.out << "\n";
    return kExitUsage;
  }
  if (const std::string why = shard_output_problem(o.out, sweep.sweep); !why.empty()) {
    command_error("serve") << why << "\n";
    return kExitUsage;
  }
  // Checked before any work: a missing directory was found only after every deployment ran.
  if (std::string why;
      !o.out.empty() && !check_output_path(o.out, &why, {o.scenario, o.prices})) {
    command_error("serve") << "--out: " << why << "\n";
    return kExitUsage;
  }
  if (std::string why; !o.plot_dir.empty() && !make_output_directory(o.plot_dir, &why)) {
    command_error("serve") << "--plot-dir: " << why << "\n";
    return kExitUsage;
  }
  auto catalog = load_catalog(o.common);
  if (!catalog) return kExitInputError;
  bool evidence_failed = false;
  const auto evidence = load_accuracy_evidence(o.common.root, *catalog, &evidence_failed);
  if (evidence_failed) return kExitInputError;
  int exit_code = kExitOk;
  ServingRunOptions run_options{o.max_rate, o.samples};
  std::optional<ServingInputs> inputs =
      load_serving_inputs(o.scenario, o.prices, *catalog, run_options, &exit_code);
  if (!inputs) return exit_code;
  const LoadedServingScenario* loaded = inputs->loaded.get();
  const ServingPrices* prices = inputs->prices.get();
  // --samples is recorded when it changes the scenario's count: --samples 1 on a scenario
  // without traffic.samples writes the file the sizing without it does.
  if (o.samples == traffic_samples(*loaded, 0)) run_options.samples = 0;
  SweepSummary summary =
      serving_identity(o.scenario, o.prices, *catalog, sweep.sweep, *loaded, run_options);
  sweep.samples = traffic_samples(*loaded, o.samples);
  sweep.sweep.threads = o.threads;
  sweep.sweep.chunk = o.chunk;
  sweep.sweep.interruption = stop_on_signals();
  sweep.max_rate = o.max_rate;
  std::vector<ResultRow> rows;
  std::unique_ptr<SweepJournal> journal;
  if (!o.out.empty()) {
    std::string notice, error;
    journal = open_sweep_journal(
        o.out, o.resume, serving_columns(sweep.samples),
        [&](ResultRow&& row) { rows.push_back(std::move(row)); }, &summary, &notice, &error);
    if (!journal) {
      command_error("serve") << (o.resume ? "--resume: " : "--out: ") << error << "\n";
      return o.resume ? kExitInputError : kExitUsage;
    }
    if (!notice.empty()) std::cerr << notice << "\n";
  }
  sweep.sweep.first_index = summary.next_index;
  const SweepSummary start = summary;
  std::string error;
  bool written = true;
  const ServingSweepCounts counts = run_serving_sweep(
      *catalog, *loaded, *prices, sweep,
      [&](std::vector<ResultRow>& chunk, int64_t next_index, const ServingSweepCounts& so_far) {
        record_progress(start, next_index, so_far, &summary);
        written = !journal || journal->append(chunk, summary, &error);
        rows.insert(rows.end(), chunk.begin(), chunk.end());
        return written;
      },
      &error);
  if (counts.interrupted) {
    command_error("serve") << "interrupted after " << summary.configurations << " deployments"
                           << (journal ? "; continue with the same command and --resume" : "")
                           << "\n";
    return kExitInterrupted;
  }
  if (!written) {
    command_error("serve") << "--out: " << error << "\n";
    return kExitUsage;
  }
  if (!error.empty()) {
    // What stops a deployment's simulation is the traffic it drew (a closed loop past its
    // bounds, no request after the warm-up: serving_evaluation.cpp), located at its block.
    Diagnostics at_traffic;
    FieldChecker::root(*loaded->file, &at_traffic).error("traffic", error);
    print_diagnostics(at_traffic);
    return kExitInputError;
  }
  summary.complete = true;
  summary.next_index = summary.candidates;
  std::cerr << summary.candidates << " deployments";
  if (summary.shard_count > 1) {
    std::cerr << ", " << shard_candidates(summary.candidates, summary.shard, summary.shard_count, 0)
              << " in shard " << o.shard;
  }
  std::cerr << ", " << summary.configurations << " valid, " << summary.simulated
            << " simulated\n";
  for (const auto& [why, n] : summary.pruned) std::cerr << "  " << n << " pruned: " << why << "\n";
  if (o.max_rate) print_rate_search_limit(*loaded, rows);
  if (!o.out.empty()) {
    if (!write_rows(o, summary, rows, sweep.samples)) return kExitUsage;
    journal->remove();
  }
  if (!o.plot_dir.empty() &&
      !write_serving_plots(o.plot_dir, std::filesystem::path(o.scenario).stem().string(), rows,
                           sweep.samples, s::Currency_Name(prices->currency), "serve",
                           "--plot-dir")) {
    return kExitUsage;
  }
  if (summary.shard_count > 1) {
    std::cerr << "the answer below is shard " << o.shard
              << "'s: clustersim merge joins every shard's --out file into the whole sizing's\n";
  }
  return report(o, *loaded, rows, *format, *catalog, *prices, summary.shard_count > 1,
                evidence.get(), sweep.samples);
}

}  // namespace clustersim::cli
