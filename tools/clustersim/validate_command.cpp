// `clustersim validate [SCENARIO...]`: checks the catalog and the given scenarios, reporting every
// problem with its file, line and field; exits non-zero if there was any error. Scenarios that
// carry a published measurement are simulated and compared with it: predicted against published
// TFLOP/s per GPU (in the publication's FLOPs convention) and step time, the error of each, and
// the mean absolute percentage error of each group (table). A published run was tuned for
// throughput: where its scenario sweeps what the publication leaves out (micro-batch size,
// schedule, model chunks) over one cluster and one tensor x pipeline x data split, the fastest
// configuration that fits in memory is the one compared.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>

#include "sim/io/scenario_loader.h"
#include "sim/sweep/evaluation.h"
#include "sim/sweep/runnable.h"
#include "sim/util/number_format.h"
#include "tools/clustersim/command_line.h"
#include "tools/clustersim/commands.h"

namespace clustersim::cli {
namespace {

namespace s = schema;
using Cell = Table::Cell;

// The predicted TFLOP/s per GPU in the publication's convention.
// Requires: a simulated step (e.step).
double predicted_tflops(const Evaluation& e, const LoadedScenario& loaded) {
  const s::Published& published = loaded.scenario().published();
  const double fraction =
      published.flops_convention() == s::Published::WITH_FULL_RECOMPUTE ? e.step->hfu : e.step->mfu;
  return fraction * e.peak_flops / 1e12;
}

// Whether every configuration runs the same cluster and the same tensor x pipeline x data split:
// only the unknowns of a published run may vary.
bool one_split(const std::vector<Configuration>& configurations) {
  const Configuration& first = configurations.front();
  return std::all_of(configurations.begin(), configurations.end(), [&](const Configuration& c) {
    const s::Parallelism &p = c.parallelism, &q = first.parallelism;
    return c.instance == first.instance && c.nodes == first.nodes &&
           p.tensor_parallel() == q.tensor_parallel() &&
           p.pipeline_parallel() == q.pipeline_parallel() && p.data_parallel() == q.data_parallel();
  });
}

struct GroupError {
  double sum_abs = 0;
  double worst = 0;
  int rows = 0;
};

}  // namespace

int validate_command(const std::vector<std::string>& args) {
  CommonOptions common;
  std::vector<std::string> scenarios;
  po::options_description options("validate options");
  add_common_options(&options, &common);
  options.add_options()("scenario", po::value(&scenarios)->composing(), "scenario files");
  po::positional_options_description positional;
  positional.add("scenario", -1);
  po::variables_map values;
  if (!parse(args, options, positional, &values, "clustersim validate [SCENARIO...] [options]")) {
    return kExitOk;
  }
  auto format = output_format(common);
  if (!format) return kExitUsage;
  auto catalog = load_catalog(common);
  if (!catalog) return kExitInputError;
  std::cerr << "catalog: " << catalog->gpus().all().size() << " GPUs, "
            << catalog->instances().all().size() << " instance types, "
            << catalog->storage().all().size() << " storage tiers, "
            << catalog->fabrics().all().size() << " fabrics, " << catalog->models().all().size()
            << " models: ok\n";
  Table table{{"scenario", "scenario"},
              {"group", "group"},
              {"gpus", "GPUs"},
              {"micro_batch_size", "mbs"},
              {"virtual_stages", "v"},
              {"published_tflops_per_gpu", "published TFLOP/s", 1},
              {"predicted_tflops_per_gpu", "predicted TFLOP/s", 1},
              {"published_step_s", "published step s", 2},
              {"predicted_step_s", "predicted step s", 2},
              {"error_pct", "error %", 1}};
  std::map<std::string, GroupError> groups;
  int failed = 0;
  for (const std::string& path : scenarios) {
    Diagnostics diagnostics;
    auto loaded = load_scenario(path, *catalog, &diagnostics);
    print_diagnostics(diagnostics);
    const std::string why_not = loaded ? check_runnable(*catalog, *loaded).reason() : "";
    if (!why_not.empty()) std::cerr << path << ": " << why_not << "\n";
    std::cerr << path << ": " << (loaded && why_not.empty() ? "ok" : "invalid") << "\n";
    if (!loaded || !why_not.empty()) {
      ++failed;
      continue;
    }
    const s::Scenario& sc = loaded->scenario();
    if (!sc.has_published() || !loaded->model->has_transformer()) continue;
    const ExpandedConfigurations space = expand_configurations(*loaded);
    if (!one_split(space.valid)) {
      std::cerr << path
                << ": a scenario with a published figure needs one cluster and one tensor x "
                   "pipeline x data split (it may sweep micro-batch size, schedule and chunks)\n";
      ++failed;
      continue;
    }
    Evaluator evaluator(*catalog, *loaded);
    const FastestEvaluation fastest = evaluate_fastest(space.valid, &evaluator);
    const Evaluation& e = fastest.evaluation;
    const Configuration& c = fastest.configuration ? *fastest.configuration : space.valid.front();
    std::vector<Cell> row = {sc.name(), sc.published().group(), static_cast<double>(c.gpus())};
    if (fastest.configuration) {
      row.insert(row.end(), {static_cast<double>(c.parallelism.micro_batch_size()),
                             static_cast<double>(c.parallelism.virtual_stages())});
    } else {
      row.insert(row.end(), {Cell(), Cell()});
    }
    row.push_back(sc.published().tflops_per_gpu());
    if (!e.step) {
      row.insert(row.end(), {Cell(), Cell(), Cell(), Cell()});
      std::string why = e.error;
      if (why.empty()) {
        why = space.valid.size() > 1 ? "none of its configurations fits in GPU memory"
                                     : "does not fit in GPU memory";
      }
      std::cerr << path << ": not simulated: " << why << "\n";
    } else {
      const double predicted = predicted_tflops(e, *loaded);
      const double error = 100 * (predicted / sc.published().tflops_per_gpu() - 1);
      GroupError& g = groups[sc.published().group()];
      g.sum_abs += std::abs(error);
      g.worst = std::max(g.worst, std::abs(error));
      ++g.rows;
      row.insert(row.end(),
                 {predicted,
                  sc.published().has_step_time_s() ? Cell(sc.published().step_time_s()) : Cell(),
                  e.step->step_s, error});
    }
    table.add_row(std::move(row));
  }
  if (table.row_count() > 0) {
    table.print(std::cout, *format);
    if (*format == OutputFormat::kTable) {
      for (const auto& [group, g] : groups) {
        std::cout << group << ": mean absolute error " << format_fixed(g.sum_abs / g.rows, 1)
                  << "% over " << g.rows << " rows, worst " << format_fixed(g.worst, 1) << "%\n";
      }
    }
  }
  return failed == 0 ? kExitOk : kExitInputError;
}

}  // namespace clustersim::cli
