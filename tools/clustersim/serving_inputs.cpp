// Loading and checking a serving sizing's inputs, for serve and regress.
#include "tools/clustersim/serving_inputs.h"

#include <charconv>
#include <iostream>

#include "sim/io/field_checker.h"
#include "sim/serve/serving_space.h"
#include "sim/serve/traffic.h"
#include "tools/clustersim/command_line.h"

namespace clustersim::cli {

std::string serving_options_text(const ServingRunOptions& options) {
  std::string text = options.max_rate ? "--max-rate" : "";
  if (options.samples > 0) {
    text += (text.empty() ? "" : " ") + std::string("--samples ") + std::to_string(options.samples);
  }
  return text;
}

std::optional<ServingRunOptions> parse_serving_options(const std::string& text) {
  ServingRunOptions options;
  std::string rest = text;
  if (rest.rfind("--max-rate", 0) == 0) {
    options.max_rate = true;
    rest.erase(0, std::string("--max-rate").size());
    if (!rest.empty() && rest.front() == ' ') rest.erase(0, 1);
  }
  const std::string samples = "--samples ";
  if (rest.rfind(samples, 0) == 0) {
    const char* end = rest.data() + rest.size();
    const auto [stop, failed] = std::from_chars(rest.data() + samples.size(), end, options.samples);
    if (failed != std::errc() || stop != end || options.samples < 1) return std::nullopt;
    rest.clear();
  }
  if (!rest.empty() || serving_options_text(options) != text) return std::nullopt;
  return options;
}

std::optional<ServingInputs> load_serving_inputs(const std::string& scenario_path,
                                                 const std::string& prices_path,
                                                 const Catalog& catalog,
                                                 const ServingRunOptions& options,
                                                 int* exit_code) {
  const bool max_rate = options.max_rate;
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
  if (options.samples > 1 && scenario.traffic().has_trace_file()) {
    std::cerr << scenario_path << ": --samples " << options.samples
              << " draws independent samples of generated traffic, and a trace file is one fixed "
                 "sample: give --samples 1 or leave it out\n";
    return std::nullopt;
  }
  *exit_code = kExitOk;
  return inputs;
}

SweepSummary serving_identity(const std::string& scenario_path, const std::string& prices_path,
                              const Catalog& catalog, const SweepOptions& options,
                              const LoadedServingScenario& loaded,
                              const ServingRunOptions& run_options) {
  SweepSummary summary = sweep_identity(scenario_path, prices_path, catalog, options);
  summary.scenario_name = scenario_path;
  summary.candidates = ServingSpace(loaded).size();
  summary.options = serving_options_text(run_options);
  summary.other_inputs = trace_fingerprint(loaded.trace);
  return summary;
}

}  // namespace clustersim::cli
