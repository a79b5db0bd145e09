// `clustersim run SCENARIO`: simulates one training step of every configuration of a scenario
// and prints step time, throughput, MFU/HFU, where the time goes and what limits it; a
// configuration that does not fit in GPU memory is reported as OOM with the missing GiB, without
// simulation.
#include <algorithm>
#include <iostream>
#include <limits>

#include "sim/io/output_file.h"
#include "sim/io/scenario_loader.h"
#include "sim/io/trace_writer.h"
#include "sim/sweep/evaluation.h"
#include "sim/sweep/result_row.h"
#include "sim/sweep/runnable.h"
#include "sim/util/number_format.h"
#include "sim/workload/expert_load.h"
#include "tools/clustersim/accuracy_notes.h"
#include "tools/clustersim/command_line.h"
#include "tools/clustersim/commands.h"
#include "tools/clustersim/progress.h"

namespace clustersim::cli {
namespace {

// The columns `run` prints for `rows` (result_row.h defines them for every output); with a mix,
// its limiting pool, the others' wait and where each part of the job runs.
std::vector<std::string> run_columns(const std::vector<ResultRow>& rows) {
  std::vector<std::string> k = layout_columns(rows);
  k.insert(k.end(),
           {"step_s", "tokens_per_s", "samples_per_s", "mfu", "hfu", "compute_s", "tensor_comm_s",
            "context_comm_s", "expert_comm_s", "expert_compute_s", "bubble_s", "data_comm_s",
            "optimizer_s", "data_stall_s", "memory_gib", "capacity_gib", "limiting", "calibrated"});
  const int placement = result_column("pool_placement");
  if (std::any_of(rows.begin(), rows.end(),
                  [&](const ResultRow& r) { return !row_text(r, placement).empty(); })) {
    k.insert(k.end(), {"limiting_pool", "pool_wait_s", "pool_placement"});
  }
  return k;
}

// Writes the trace of `configuration` (simulated again, with its timeline) to `path`, atomically,
// with the configuration and tool version as its metadata. False (message printed) on failure.
bool write_trace(const std::string& path, const Configuration& configuration,
                 Evaluator* evaluator) {
  Timeline timeline;
  evaluator->evaluate(configuration, &timeline);
  OutputFile file;
  std::string error;
  if (file.open(path, &error)) {
    write_chrome_trace(timeline,
                       {{"configuration", describe(configuration)},
                        {"configuration_index", std::to_string(configuration.index)},
                        {"tool", std::string("clustersim ") + CLUSTERSIM_VERSION}},
                       file.stream());
    if (file.commit(&error)) {
      std::cerr << "trace of " << describe(configuration) << " written to " << path << "\n";
      return true;
    }
  }
  command_error("run") << "--trace: " << error << "\n";
  return false;
}

// What a job's expert_routing does to every configuration: the tokens dropped, which do not
// depend on the layout (the busiest rank's share does, and is in its times).
void print_expert_routing(const LoadedScenario& loaded) {
  const schema::TrainingJob& job = loaded.scenario().job();
  if (!job.has_expert_routing()) return;
  const schema::ExpertRouting& routing = job.expert_routing();
  const ExpertLoad load = expert_load(loaded.model->transformer(), routing, 1);
  std::cout << "expert routing: the busiest expert takes "
            << format_significant(1 + routing.max_violation(), 3) << "x the mean";
  if (routing.has_capacity_factor()) {
    std::cout << ", capacity " << format_number(routing.capacity_factor()) << "x"
              << (routing.pad_to_capacity() ? " (padded)" : "") << ": "
              << format_significant(100 * load.dropped, 3)
              << "% of routed token copies dropped (they skip their experts)";
  }
  std::cout << "\n";
}

}  // namespace

int run_command(const std::vector<std::string>& args) {
  std::string trace_path;
  size_t fastest = 0;
  po::options_description own("run");
  own.add_options()("trace", po::value(&trace_path),
                    "write a Chrome/Perfetto trace of the first simulated configuration listed")(
      "fastest", count_value(&fastest),
      "list only the N configurations with the shortest step (0: all, in sweep order)");
  int exit_code = kExitOk;
  auto inputs =
      load_scenario_command(args, "run", "configurations to simulate (0: all)", &exit_code, &own);
  if (!inputs) return exit_code;
  std::string error;
  if (!trace_path.empty() && !check_output_path(trace_path, &error, {inputs->path})) {
    command_error("run") << "--trace: " << error << "\n";
    return kExitUsage;
  }
  bool evidence_failed = false;
  const auto evidence = load_accuracy_evidence(inputs->root, *inputs->catalog, &evidence_failed);
  if (evidence_failed) return kExitInputError;
  const LoadedScenario* loaded = inputs->scenario.get();
  const ExpandedConfigurations space = expand_configurations(*loaded);
  const Runnability runnable = check_scenario_runs(*inputs);
  if (runnable.valid == 0) return kExitInputError;
  Evaluator evaluator(*inputs->catalog, *loaded);
  const size_t limit = inputs->limit;
  const size_t shown = limit == 0 ? space.valid.size() : std::min(limit, space.valid.size());
  std::vector<ResultRow> rows;
  Progress progress(static_cast<int64_t>(shown));
  for (size_t i = 0; i < shown; ++i) {
    progress.update(static_cast<int64_t>(i));
    const Evaluation e = evaluator.evaluate(space.valid[i]);
    if (!e.error.empty()) {
      std::cerr << inputs->path << ": " << e.error << "\n";
      return kExitInputError;
    }
    rows.push_back(make_step_row(space.valid[i], e));
  }
  progress.finish();
  const int step = result_column("step_s");
  if (fastest > 0) {
    const auto key = [&](const ResultRow& r) {  // OOM rows (no step) last
      const double s = row_number(r, step);
      return s == s ? s : std::numeric_limits<double>::infinity();
    };
    std::stable_sort(rows.begin(), rows.end(),
                     [&](const ResultRow& a, const ResultRow& b) { return key(a) < key(b); });
    if (rows.size() > fastest) rows.resize(fastest);
  }
  AccuracyKeys keys = training_accuracy_keys(*inputs->catalog, *loaded);
  for (const ResultRow& row : rows) note_result_row(row, &keys);
  table_with_accuracy(result_columns(), run_columns(rows), rows, result_column("instance"),
                      inputs->format == OutputFormat::kJson, evidence.get(), keys)
      .print(std::cout, inputs->format);
  if (inputs->format == OutputFormat::kTable && shown < space.valid.size()) {
    std::cout << "... " << space.valid.size() - shown << " more (--limit 0 simulates all)\n";
  }
  if (inputs->format == OutputFormat::kTable) {
    print_expert_routing(*loaded);
    print_accuracy(std::cout, evidence.get(), keys);
  }
  if (!trace_path.empty()) {
    const auto traced = std::find_if(rows.begin(), rows.end(), [&](const ResultRow& r) {
      return row_number(r, step) == row_number(r, step);
    });
    if (traced == rows.end()) {
      command_error("run") << "--trace: nothing written: none of the " << rows.size()
                           << " configurations listed was simulated (none fits in GPU memory)\n";
      return kExitInputError;
    }
    const auto index = static_cast<int64_t>(row_number(*traced, 0));
    const auto c = std::find_if(space.valid.begin(), space.valid.end(),
                                [&](const Configuration& v) { return v.index == index; });
    if (!write_trace(trace_path, *c, &evaluator)) return kExitUsage;
  }
  return runnable.runs ? kExitOk : kExitInputError;
}

}  // namespace clustersim::cli
