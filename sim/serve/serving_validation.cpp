// Benchmark runs against their published figures.
#include "sim/serve/serving_validation.h"

#include <algorithm>
#include <cmath>

#include "sim/util/check.h"
#include "sim/util/number_format.h"

namespace clustersim {

std::vector<BenchmarkCheck> check_benchmarks(const Catalog& catalog,
                                             const LoadedServingScenario& scenario) {
  const ServingSpace space(scenario);
  CLUSTERSIM_CHECK(space.size() == 1, "benchmarks of a scenario with several deployments");
  const ServingConfiguration c = space.at(0);
  ServingEvaluator evaluator(catalog, scenario);
  std::vector<BenchmarkCheck> checks;
  for (const schema::BatchBenchmark& run : scenario.scenario().benchmark()) {
    checks.push_back({&run, evaluator.benchmark(c, run)});
  }
  return checks;
}

void MetricError::add(double predicted, double published) {
  const double error = 100 * std::abs(predicted / published - 1);
  sum_abs_pct += error;
  worst_pct = std::max(worst_pct, error);
  ++rows;
}

void ValidationTally::add(const std::string& group, const std::string& gpu,
                          const BenchmarkCheck& check) {
  const schema::BatchBenchmark& run = *check.run;
  const BenchmarkResult& p = check.predicted;
  for (ValidationCell* cell : {&cells_[{group, gpu}], &cells_[{group, ""}]}) {
    if (!p.fits) {
      ++cell->marked_oom;
      ++(run.has_published() ? cell->oom_reported : cell->oom_unreported);
      continue;
    }
    if (!run.has_published()) continue;
    const schema::PublishedServing& pub = run.published();
    if (pub.has_output_tokens_per_s()) cell->throughput.add(p.output_tokens_per_s, pub.output_tokens_per_s());
    if (pub.has_ttft_ms()) cell->ttft.add(p.ttft_ms, pub.ttft_ms());
    if (pub.has_tpot_ms() && run.output_tokens() > 1) cell->tpot.add(p.tpot_ms, pub.tpot_ms());
    if (pub.has_peak_memory_gb()) cell->memory.add(p.peak_memory_bytes / 1e9, pub.peak_memory_gb());
  }
}

namespace {

std::string metric(const char* name, const MetricError& e) {
  return std::string(name) + " " + format_fixed(e.mean_pct(), 1) + "% (" + std::to_string(e.rows) +
         " rows, worst " + format_fixed(e.worst_pct, 1) + "%)";
}

}  // namespace

std::string describe(const std::string& group, const std::string& gpu, const ValidationCell& c) {
  std::string line = group + " (" + (gpu.empty() ? "all GPUs" : gpu) + "): mean absolute error " +
                     metric("throughput", c.throughput) + ", " + metric("TTFT", c.ttft) + ", " +
                     metric("TPOT", c.tpot) + ", " + metric("peak memory", c.memory) + "; " +
                     std::to_string(c.marked_oom) + " runs marked out of memory";
  if (c.marked_oom > 0) {
    line += ", " + std::to_string(c.oom_unreported) + " of them unreported by the source (" +
            format_fixed(100.0 * c.oom_unreported / c.marked_oom, 1) + "%)";
  }
  return line;
}

}  // namespace clustersim
