// Comparing a serving scenario's benchmark runs with their published figures: each run simulated
// on the scenario's one deployment, and the errors gathered per table and GPU (mean absolute
// error of throughput, time to first token, time per output token and peak memory), with the
// runs the model marks out of memory set against whether the source reports them (it drops
// failed runs, so a run it lacks is likely one that did not fit).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/io/catalog.h"
#include "sim/serve/serving_evaluation.h"
#include "sim/serve/serving_scenario.h"

namespace clustersim {

struct BenchmarkCheck {
  const schema::BatchBenchmark* run = nullptr;
  BenchmarkResult predicted;
};

// Every benchmark of `scenario` on its deployment, in file order. Requires: a loaded scenario
// with benchmarks and one configuration (no sweep).
std::vector<BenchmarkCheck> check_benchmarks(const Catalog& catalog,
                                             const LoadedServingScenario& scenario);

struct MetricError {
  double sum_abs_pct = 0;
  double worst_pct = 0;
  int rows = 0;
  void add(double predicted, double published);
  double mean_pct() const { return rows > 0 ? sum_abs_pct / rows : 0; }
};

struct ValidationCell {
  MetricError throughput, ttft, tpot, memory;
  int marked_oom = 0;       // runs the model says do not fit
  int oom_unreported = 0;   // of those, runs the source does not report
  int oom_reported = 0;     // of those, runs the source does report (it ran them)
};

// Errors by (table, GPU); "" as GPU holds the table's total.
class ValidationTally {
 public:
  void add(const std::string& group, const std::string& gpu, const BenchmarkCheck& check);
  const std::map<std::pair<std::string, std::string>, ValidationCell>& cells() const {
    return cells_;
  }

 private:
  std::map<std::pair<std::string, std::string>, ValidationCell> cells_;
};

// One line per cell: "TABLE (GPU): throughput 6.1% (653 rows, worst 31.2%), TTFT ..., TPOT ...,
// peak memory ...; 120 runs marked out of memory, 118 of them unreported by the source (98.3%)".
std::string describe(const std::string& group, const std::string& gpu, const ValidationCell& c);

}  // namespace clustersim
