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
#include "sim/util/units.h"
#include "tools/clustersim/command_line.h"
#include "tools/clustersim/commands.h"

namespace clustersim::cli {
namespace {

namespace s = schema;
using Cell = Table::Cell;

Table result_table() {
  return Table{{"instance", "instance"},
               {"nodes", "nodes"},
               {"tensor_parallel", "TP"},
               {"pipeline_parallel", "PP"},
               {"data_parallel", "DP"},
               {"micro_batch_size", "mbs"},
               {"virtual_stages", "v"},
               {"recompute", "recompute"},
               {"step_s", "step s", 3},
               {"tokens_per_s", "tokens/s", 0},
               {"samples_per_s", "samples/s", 1},
               {"mfu", "MFU", 3},
               {"hfu", "HFU", 3},
               {"compute_s", "compute", 3},
               {"tensor_comm_s", "TP comm", 3},
               {"bubble_s", "bubble", 3},
               {"data_comm_s", "DP comm", 3},
               {"optimizer_s", "optim", 3},
               {"data_stall_s", "data stall", 3},
               {"memory_gib", "mem GiB", 1},
               {"capacity_gib", "cap GiB", 1},
               {"limiting", "limiting"},
               {"calibrated", "calibrated"}};
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
  Table table = result_table();
  const size_t shown = limit == 0 ? space.valid.size() : std::min(limit, space.valid.size());
  bool traced = false;
  std::vector<std::pair<double, std::vector<Cell>>> rows;  // (step seconds, row); OOM last
  for (size_t i = 0; i < shown; ++i) {
    const Configuration& c = space.valid[i];
    const s::Parallelism& p = c.parallelism;
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
    std::vector<Cell> row = {c.instance->name(),
                             static_cast<double>(c.nodes),
                             static_cast<double>(p.tensor_parallel()),
                             static_cast<double>(p.pipeline_parallel()),
                             static_cast<double>(p.data_parallel()),
                             static_cast<double>(p.micro_batch_size()),
                             static_cast<double>(p.virtual_stages()),
                             s::Recompute_Name(p.recompute())};
    const double step_key = e.step ? e.step->step_s : std::numeric_limits<double>::infinity();
    const double memory_gib = e.memory.total_bytes() / kBytesPerGibibyte;
    const double capacity_gib = e.memory.capacity_bytes / kBytesPerGibibyte;
    if (!e.step) {
      row.resize(row.size() + 11);  // nothing simulated
      const auto missing = static_cast<int>(e.memory.missing_bytes() / kBytesPerGibibyte + 0.5);
      row.insert(row.end(),
                 {memory_gib, capacity_gib,
                  "GPU memory (OOM by " + std::to_string(missing) + " GiB)", e.calibrated});
    } else {
      const StepResult& r = *e.step;
      row.insert(row.end(), {r.step_s, r.tokens_per_s, r.samples_per_s, r.mfu, r.hfu, r.compute_s,
                             r.tensor_comm_s, r.bubble_s, r.data_comm_s, r.optimizer_s,
                             r.data_stall_s, memory_gib, capacity_gib, r.limiting, e.calibrated});
    }
    rows.emplace_back(step_key, std::move(row));
  }
  if (fastest > 0) {
    std::stable_sort(rows.begin(), rows.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    if (rows.size() > fastest) rows.resize(fastest);
  }
  for (auto& [key, row] : rows) table.add_row(std::move(row));
  table.print(std::cout, inputs->format);
  if (inputs->format == OutputFormat::kTable && shown < space.valid.size()) {
    std::cout << "... " << space.valid.size() - shown << " more (--limit 0 simulates all)\n";
  }
  return kExitOk;
}

}  // namespace clustersim::cli
