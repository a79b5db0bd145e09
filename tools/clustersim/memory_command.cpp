// `clustersim memory SCENARIO`: the per-GPU memory of every configuration of a scenario - model
// states, activations, logits and runtime against the GPU's capacity - with OOM rows marked and
// the missing GiB, before any simulation.
#include <iostream>

#include "sim/io/scenario_loader.h"
#include "sim/parallel/memory_model.h"
#include "sim/sweep/evaluation.h"
#include "sim/sweep/result_row.h"
#include "sim/util/units.h"
#include "tools/clustersim/command_line.h"
#include "tools/clustersim/commands.h"

namespace clustersim::cli {
namespace {

namespace s = schema;
using Cell = Table::Cell;

double gib(double bytes) { return bytes / kBytesPerGibibyte; }

}  // namespace

int memory_command(const std::vector<std::string>& args) {
  int exit_code = kExitOk;
  auto inputs = load_scenario_command(
      args, "memory", "configurations to list in table format (0: all; csv and json list all)",
      &exit_code);
  if (!inputs) return exit_code;
  const LoadedScenario* loaded = inputs->scenario.get();
  const size_t limit = inputs->limit;
  const ExpandedConfigurations space = expand_configurations(*loaded);
  const Runnability runnable = check_scenario_runs(*inputs);
  if (runnable.valid == 0) return kExitInputError;
  const ShardingColumns sharding(space.valid);
  Table table = layout_table();
  sharding.add_to(&table);
  table.add_columns({{"recompute", "recompute"},
                     {"stage", "stage"},
                     {"weights_gib", "weights", 1},
                     {"gradients_gib", "grads", 1},
                     {"optimizer_gib", "optim", 1},
                     {"weight_cache_gib", "fp8 cache", 1},
                     {"activations_gib", "activ", 1},
                     {"logits_gib", "logits", 1},
                     {"runtime_gib", "runtime", 1},
                     {"total_gib", "total GiB", 1},
                     {"capacity_gib", "capacity", 1},
                     {"fits", "fits"},
                     {"missing_gib", "missing GiB", 1}});
  Evaluator evaluator(*inputs->catalog, *loaded);
  const bool aligned = inputs->format == OutputFormat::kTable;
  const size_t shown =
      aligned && limit != 0 ? std::min(limit, space.valid.size()) : space.valid.size();
  for (size_t i = 0; i < shown; ++i) {
    const Configuration& c = space.valid[i];
    const s::Parallelism& p = c.parallelism;
    const MemoryEstimate e = evaluator.memory(c);
    // "logits": the output layer's, with its deferred weight gradients' kept tensors.
    const double output_layer = e.logits_bytes + e.deferred_output_bytes;
    std::vector<Table::Cell> cells = layout_cells(c);
    sharding.add_cells(c, &cells);
    cells.insert(cells.end(),
                 {recompute_label(p), static_cast<double>(e.stage), gib(e.weights_bytes),
                  gib(e.gradients_bytes), gib(e.optimizer_bytes), gib(e.weight_cache_bytes),
                  gib(e.activations_bytes), gib(output_layer), gib(e.runtime_bytes),
                  gib(e.total_bytes()), gib(e.capacity_bytes), e.fits(), gib(e.missing_bytes())});
    table.add_row(std::move(cells));
  }
  table.print(std::cout, inputs->format);
  if (aligned && shown < space.valid.size()) {
    std::cout << "... " << space.valid.size() - shown << " more (--limit 0 lists all)\n";
  }
  return runnable.runs ? kExitOk : kExitInputError;
}

}  // namespace clustersim::cli
