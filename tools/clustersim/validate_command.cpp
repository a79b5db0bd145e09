// `clustersim validate [SCENARIO...]`: checks the catalog and the given scenarios, reporting every
// problem with its file, line and field; exits non-zero if there was any error. Scenarios that
// carry a published measurement are simulated and compared with it: predicted against published
// TFLOP/s per GPU (in the publication's FLOPs convention) and step time (published, or from the
// published tokens/s per GPU), the error of each, and per group (a table, or a system and
// precision of one) the mean absolute percentage error of the step time where every row has one,
// else of the TFLOP/s. A published run was tuned for throughput: where its scenario sweeps what
// the publication leaves out (micro-batch size, schedule, model chunks) over one cluster and one
// tensor x context x pipeline x data split, the fastest configuration that fits in memory is the
// one compared. Serving scenarios with benchmark runs are compared per table and GPU
// (sim/serve/serving_validation.h).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>

#include "sim/cost/cost_model.h"
#include "sim/hw/sustained_fraction.h"
#include "sim/io/accuracy_evidence.h"
#include "sim/io/scenario_loader.h"
#include "sim/serve/serving_cost.h"
#include "sim/serve/serving_validation.h"
#include "sim/sweep/evaluation.h"
#include "sim/sweep/runnable.h"
#include "sim/util/number_format.h"
#include "sim/workload/bridge_dsv4_flops.h"
#include "sim/workload/bridge_hybrid_flops.h"
#include "sim/workload/lora.h"
#include "sim/workload/transformer_flops.h"
#include "tools/clustersim/command_line.h"
#include "tools/clustersim/commands.h"

namespace clustersim::cli {
namespace {

namespace s = schema;
using Cell = Table::Cell;

// The predicted TFLOP/s per GPU in the publication's convention: model FLOPs with a decoder's
// attention counted whole or causal (or by Megatron-Bridge v0.3.x-v0.4.x's formula, its hybrid
// models' formula, bridge_hybrid_flops.h, or its DeepSeek V4 formula, bridge_dsv4_flops.h), or
// with the recomputed forward (SC'21's Eq. 3); a LoRA job's with its frozen base
// (transformer_flops.h), or as full training scaled (AutoModel's peft_flops_scale).
// Requires: a simulated step (e.step) of a transformer.
double predicted_tflops(const Evaluation& e, const Configuration& c,
                        const LoadedScenario& loaded) {
  const s::Scenario& sc = loaded.scenario();
  const s::Published::FlopsConvention convention = sc.published().flops_convention();
  const s::Transformer& t = loaded.model->transformer();
  const bool peft_scaled = convention == s::Published::MODEL_FLOPS_CAUSAL_PEFT_SCALED;
  const bool bridge_v03 = convention == s::Published::MODEL_FLOPS_CAUSAL_BRIDGE_V03;
  const bool bridge_hybrid = convention == s::Published::MODEL_FLOPS_CAUSAL_BRIDGE_HYBRID;
  const int seq = sc.job().sequence_length(), tp = c.parallelism.tensor_parallel();
  TransformerFlops flops =
      bridge_hybrid ? bridge_hybrid_flops(t, seq, tp)
      : convention == s::Published::MODEL_FLOPS_CAUSAL_BRIDGE_DSV4
          ? bridge_dsv4_flops(t, seq, tp)
          : transformer_flops(
                t, seq,
                convention == s::Published::MODEL_FLOPS_CAUSAL || peft_scaled || bridge_v03
                    ? AttentionCount::kCausal
                    : AttentionCount::kFullSquare,
                bridge_v03 ? FlopsFormula::kBridgeV03 : FlopsFormula::kExact);
  double scale = 1;
  if (sc.job().has_lora() && peft_scaled)
    scale = peft_flops_scale(t, sc.job());
  else if (sc.job().has_lora())
    add_lora_flops(t, sc.job(), &flops);
  const double per_token = scale * (convention == s::Published::WITH_FULL_RECOMPUTE
                                        ? flops.with_full_recompute_per_token()
                                        : flops.model_per_token());
  return per_token * e.step->tokens_per_s / c.gpus() / 1e12;
}

// The published step time: given, or from the published tokens/s per GPU; 0 when neither is.
double published_step_s(const s::Scenario& sc, int gpus) {
  const s::Published& published = sc.published();
  if (published.has_step_time_s()) return published.step_time_s();
  if (!published.has_tokens_per_s_per_gpu()) return 0;
  return static_cast<double>(sc.job().global_batch_size()) * sc.job().sequence_length() /
         (published.tokens_per_s_per_gpu() * gpus);
}

// Whether every configuration runs the same cluster and the same tensor x pipeline x data split:
// only the unknowns of a published run may vary.
bool one_split(const std::vector<Configuration>& configurations) {
  const Configuration& first = configurations.front();
  return std::all_of(configurations.begin(), configurations.end(), [&](const Configuration& c) {
    const s::Parallelism &p = c.parallelism, &q = first.parallelism;
    return c.instance == first.instance && c.nodes == first.nodes &&
           p.tensor_parallel() == q.tensor_parallel() &&
           p.context_parallel() == q.context_parallel() &&
           p.pipeline_parallel() == q.pipeline_parallel() && p.data_parallel() == q.data_parallel();
  });
}

// One row per benchmark run: published against predicted (printed with --format csv or json).
Table benchmark_table() {
  return Table{{"scenario", "scenario"},
               {"batch_size", "batch"},
               {"input_tokens", "in"},
               {"output_tokens", "out"},
               {"published_ttft_ms", "pub TTFT", 2},
               {"predicted_ttft_ms", "TTFT", 2},
               {"published_tpot_ms", "pub TPOT", 3},
               {"predicted_tpot_ms", "TPOT", 3},
               {"published_output_tokens_per_s", "pub tok/s", 1},
               {"predicted_output_tokens_per_s", "tok/s", 1},
               {"published_peak_memory_gb", "pub GB", 2},
               {"predicted_peak_memory_gb", "GB", 2}};
}

void add_benchmark_row(const std::string& name, const BenchmarkCheck& check, Table* table) {
  const s::BatchBenchmark& run = *check.run;
  const s::PublishedServing& pub = run.published();
  const auto published = [&](bool has, double value) { return has ? Cell(value) : Cell(); };
  const auto predicted = [&](double value) { return check.predicted.fits ? Cell(value) : Cell(); };
  table->add_row({name, static_cast<double>(run.batch_size()),
                  static_cast<double>(run.input_tokens()), static_cast<double>(run.output_tokens()),
                  published(pub.has_ttft_ms(), pub.ttft_ms()), predicted(check.predicted.ttft_ms),
                  published(pub.has_tpot_ms(), pub.tpot_ms()), predicted(check.predicted.tpot_ms),
                  published(pub.has_output_tokens_per_s(), pub.output_tokens_per_s()),
                  predicted(check.predicted.output_tokens_per_s),
                  published(pub.has_peak_memory_gb(), pub.peak_memory_gb()),
                  check.predicted.peak_memory_bytes / 1e9});
}

// Loads a serving scenario and, when it has benchmark runs, adds their comparison to `tally` and
// `rows`. Returns false when the file is invalid.
bool validate_serving(const std::string& path, const Catalog& catalog, ValidationTally* tally,
                      Table* rows) {
  Diagnostics diagnostics;
  auto loaded = load_serving_scenario(path, catalog, &diagnostics);
  // Its prices as serve reads them: an ambiguous price or a missing exchange rate is an error.
  if (loaded && !load_serving_prices(*loaded, catalog, nullptr, &diagnostics)) loaded.reset();
  print_diagnostics(diagnostics);
  std::cerr << path << ": " << (loaded ? "ok" : "invalid") << "\n";
  if (!loaded || loaded->scenario().benchmark_size() == 0) return loaded != nullptr;
  const std::string& gpu = loaded->instances.front()->gpu();
  for (const BenchmarkCheck& check : check_benchmarks(catalog, *loaded)) {
    tally->add(loaded->scenario().group(), gpu, check);
    if (check.run->has_published()) add_benchmark_row(loaded->scenario().name(), check, rows);
  }
  return true;
}

struct ErrorSum {
  double sum_abs = 0;
  double worst = 0;
  int rows = 0;
  void add(double error) {
    sum_abs += std::abs(error);
    worst = std::max(worst, std::abs(error));
    ++rows;
  }
  std::string text() const {
    return format_fixed(sum_abs / rows, 1) + "% over " + std::to_string(rows) + " rows, worst " +
           format_fixed(worst, 1) + "%";
  }
};

struct GroupError {
  ErrorSum tflops, step;
  int rows = 0;
};

}  // namespace

int validate_command(const std::vector<std::string>& args) {
  CommonOptions common;
  std::vector<std::string> scenarios;
  po::options_description options("validate options");
  add_common_options(&options, &common, "validate");
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
              {"tflops_error_pct", "TFLOP/s err %", 1},
              {"step_error_pct", "step err %", 1}};
  // With --format csv or json, what each row's accuracy is evidence of (accuracy_evidence.h): the
  // GPU its instance holds, the precision label and kind of its job, and whether the step's
  // sustained fraction is fitted on that GPU and precision's own runs rather than derived
  // (sustained_fraction.h; tools/accuracy_tables.py keys results/accuracy_evidence.textproto by
  // them). The aligned table leaves them out: its text stays the record the accuracy tables read.
  const bool keyed = *format != OutputFormat::kTable;
  if (keyed) {
    table.add_columns({{"gpu", "GPU"},
                       {"precision", "precision"},
                       {"moe", "MoE"},
                       {"fraction_fitted", "fitted"}});
  }
  std::map<std::string, GroupError> groups;
  ValidationTally serving;
  Table serving_rows = benchmark_table();
  int failed = 0;
  for (const std::string& path : scenarios) {
    if (is_serving_scenario_file(path)) {
      failed += validate_serving(path, *catalog, &serving, &serving_rows) ? 0 : 1;
      continue;
    }
    Diagnostics diagnostics;
    auto loaded = load_scenario(path, *catalog, &diagnostics);
    // Its prices as sweep and cost read them (an ambiguous price, a missing exchange rate).
    if (loaded && !load_cost_model(*loaded, *catalog, nullptr, &diagnostics)) loaded.reset();
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
    row.push_back(sc.published().has_tflops_per_gpu() ? Cell(sc.published().tflops_per_gpu())
                                                      : Cell());
    if (!e.step) {
      row.insert(row.end(), {Cell(), Cell(), Cell(), Cell(), Cell()});
      std::string why = e.error;
      if (why.empty()) {
        why = space.valid.size() > 1 ? "none of its configurations fits in GPU memory"
                                     : "does not fit in GPU memory";
      }
      std::cerr << path << ": not simulated: " << why << "\n";
    } else {
      const double predicted = predicted_tflops(e, c, *loaded);
      const double error = 100 * (predicted / sc.published().tflops_per_gpu() - 1);
      const double published_step = published_step_s(sc, c.gpus());
      GroupError& g = groups[sc.published().group()];
      ++g.rows;
      if (sc.published().has_tflops_per_gpu()) g.tflops.add(error);
      const double step_error = 100 * (e.step->step_s / published_step - 1);
      if (published_step > 0) g.step.add(step_error);
      row.insert(row.end(), {predicted, published_step > 0 ? Cell(published_step) : Cell(),
                             e.step->step_s,
                             sc.published().has_tflops_per_gpu() ? Cell(error) : Cell(),
                             published_step > 0 ? Cell(step_error) : Cell()});
    }
    if (keyed) {
      const std::string& gpu = loaded->instances.front()->gpu();
      const s::TrainingJob& job = sc.job();
      row.insert(row.end(), {gpu, precision_label(job.precision(), job.fp8_recipe()),
                             loaded->model->transformer().has_moe(),
                             step_sustained_fraction_fitted(*catalog->gpus().find(gpu)->value,
                                                            job.precision(), job.fp8_recipe())});
    }
    table.add_row(std::move(row));
  }
  if (table.row_count() > 0) {
    table.print(std::cout, *format);
    if (*format == OutputFormat::kTable) {
      for (const auto& [group, g] : groups) {
        std::cout << group << ": mean absolute error ";
        if (g.step.rows == g.rows) std::cout << "of step time " << g.step.text();
        if (g.step.rows == g.rows && g.tflops.rows > 0) std::cout << "; ";
        if (g.tflops.rows > 0) std::cout << "of TFLOP/s " << g.tflops.text();
        std::cout << "\n";
      }
    }
  }
  if (*format != OutputFormat::kTable && serving_rows.row_count() > 0) {
    serving_rows.print(std::cout, *format);
  }
  for (const auto& [key, cell] : serving.cells()) {
    if (*format == OutputFormat::kTable) std::cout << describe(key.first, key.second, cell) << "\n";
  }
  return failed == 0 ? kExitOk : kExitInputError;
}

}  // namespace clustersim::cli
