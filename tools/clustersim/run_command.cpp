// `clustersim run SCENARIO`: simulates one training step of every configuration of a scenario
// and prints step time, throughput, MFU/HFU, where the time goes and what limits it; a
// configuration that does not fit in GPU memory is reported as OOM with the missing GiB, without
// simulation.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <limits>

#include "sim/io/scenario_loader.h"
#include "sim/io/trace_writer.h"
#include "sim/sweep/evaluation.h"
#include "sim/sweep/result_row.h"
#include "tools/clustersim/command_line.h"
#include "tools/clustersim/commands.h"

namespace clustersim::cli {
namespace {

// The columns `run` prints (result_row.h defines them for every output).
const std::vector<std::string>& run_columns() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k = layout_columns();
    k.insert(k.end(), {"step_s", "tokens_per_s", "samples_per_s", "mfu", "hfu", "compute_s",
                       "tensor_comm_s", "context_comm_s", "bubble_s", "data_comm_s", "optimizer_s",
                       "data_stall_s",
                       "memory_gib", "capacity_gib", "limiting", "calibrated"});
    return k;
  }();
  return keys;
}

}  // namespace

int run_command(const std::vector<std::string>& args) {
  std::string trace_path;
  size_t fastest = 0;
  po::options_description own("run");
  own.add_options()("trace", po::value(&trace_path),
                    "write a Chrome/Perfetto trace of the first simulated configuration")(
      "fastest", po::value(&fastest)->default_value(0),
      "list only the N configurations with the shortest step (0: all, in sweep order)");
  int exit_code = kExitOk;
  auto inputs =
      load_scenario_command(args, "run", "configurations to simulate (0: all)", &exit_code, &own);
  if (!inputs) return exit_code;
  const Catalog* catalog = inputs->catalog.get();
  const LoadedScenario* loaded = inputs->scenario.get();
  const size_t limit = inputs->limit;
  const std::string& scenario_path = inputs->path;
  const ExpandedConfigurations space = expand_configurations(*loaded);
  if (report_no_valid_configuration(inputs->path, space)) return kExitInputError;
  Evaluator evaluator(*catalog, *loaded);
  const size_t shown = limit == 0 ? space.valid.size() : std::min(limit, space.valid.size());
  bool traced = false;
  std::vector<ResultRow> rows;
  for (size_t i = 0; i < shown; ++i) {
    const Configuration& c = space.valid[i];
    Timeline timeline;
    const bool tracing = !trace_path.empty() && !traced;
    const Evaluation e = evaluator.evaluate(c, tracing ? &timeline : nullptr);
    if (tracing && e.step) {
      traced = true;
      std::ofstream out(trace_path);
      write_chrome_trace(timeline, out);
      if (!out) {
        std::cerr << "--trace: cannot write " << trace_path << "\n";
        return kExitUsage;
      }
      std::cerr << "trace of configuration " << i + 1 << " written to " << trace_path << "\n";
    }
    if (!e.error.empty()) {
      std::cerr << scenario_path << ": " << e.error << "\n";
      return kExitInputError;
    }
    rows.push_back(make_step_row(c, e));
  }
  if (fastest > 0) {
    const int step = result_column("step_s");
    const auto key = [&](const ResultRow& r) {  // OOM rows (no step) last
      const double s = row_number(r, step);
      return s == s ? s : std::numeric_limits<double>::infinity();
    };
    std::stable_sort(rows.begin(), rows.end(),
                     [&](const ResultRow& a, const ResultRow& b) { return key(a) < key(b); });
    if (rows.size() > fastest) rows.resize(fastest);
  }
  result_table(run_columns(), rows).print(std::cout, inputs->format);
  if (inputs->format == OutputFormat::kTable && shown < space.valid.size()) {
    std::cout << "... " << space.valid.size() - shown << " more (--limit 0 simulates all)\n";
  }
  return kExitOk;
}

}  // namespace clustersim::cli
