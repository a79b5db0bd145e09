// Loading and checking a serving sizing's inputs, for serve and regress.
#include "tools/clustersim/serving_inputs.h"

#include <iostream>

#include "sim/io/field_checker.h"
#include "sim/serve/serving_space.h"
#include "sim/serve/traffic.h"
#include "tools/clustersim/command_line.h"

namespace clustersim::cli {

std::optional<ServingInputs> load_serving_inputs(const std::string& scenario_path,
                                                 const std::string& prices_path,
                                                 const Catalog& catalog, bool max_rate,
                                                 int* exit_code) {
  *exit_code = kExitInputError;
  ServingInputs inputs;
  Diagnostics diagnostics;
  inputs.loaded = load_serving_scenario(scenario_path, catalog, &diagnostics);
  if (inputs.loaded && !prices_path.empty()) {
    inputs.price_file = read_text_file<schema::PriceFile>(prices_path, &diagnostics);
  }
  if (inputs.loaded && (prices_path.empty() || inputs.price_file)) {
    inputs.prices =
        load_serving_prices(*inputs.loaded, catalog, inputs.price_file.get(), &diagnostics);
  }
  print_diagnostics(diagnostics);
  if (!inputs.prices) return std::nullopt;
  *exit_code = kExitUsage;
  const schema::ServingScenario& scenario = inputs.loaded->scenario();
  if (!scenario.has_traffic()) {
    std::cerr << scenario_path << ": has benchmark runs, no traffic: use clustersim validate\n";
    return std::nullopt;
  }
  if (max_rate && scenario.traffic().has_closed_loop()) {
    std::cerr << scenario_path
              << ": --max-rate scales open-loop request rates: a closed loop's "
                 "load is its concurrency (sweep.concurrency lists levels)\n";
    return std::nullopt;
  }
  if (max_rate && !scenario.has_slo()) {  // the search was skipped without a word
    std::cerr << scenario_path
              << ": --max-rate finds each deployment's highest rate within the "
                 "SLO, and the scenario sets none (slo { p99_ttft_ms: ... })\n";
    return std::nullopt;
  }
  // A trace arriving at one instant met the SLO at every speed-up and printed a max rate of 0.
  if (const std::string why = trace_without_rate(inputs.loaded->trace); max_rate && !why.empty()) {
    Diagnostics at_trace;
    FieldChecker::root(*inputs.loaded->file, &at_trace)
        .child("traffic")
        .error("trace_file", "--max-rate scales the trace's arrival times, but " + why);
    print_diagnostics(at_trace);
    return std::nullopt;
  }
  *exit_code = kExitOk;
  return inputs;
}

SweepSummary serving_identity(const std::string& scenario_path, const std::string& prices_path,
                              const Catalog& catalog, const SweepOptions& options,
                              const LoadedServingScenario& loaded, bool max_rate) {
  SweepSummary summary = sweep_identity(scenario_path, prices_path, catalog, options);
  summary.scenario_name = scenario_path;
  summary.candidates = ServingSpace(loaded).size();
  summary.options = max_rate ? kMaxRateOption : "";
  summary.other_inputs = trace_fingerprint(loaded.trace);
  return summary;
}

}  // namespace clustersim::cli
