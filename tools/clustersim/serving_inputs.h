// What `serve` and `regress` (against a serving sizing's results file) both load before a sizing:
// the serving scenario, its --prices file and prices, checked for what the sizing needs (traffic;
// for --max-rate an open loop, an SLO and a trace with a rate), and the identity its journal and
// results file record (sweep_summary.h).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "sim/io/catalog.h"
#include "sim/io/text_file.h"
#include "sim/serve/serving_cost.h"
#include "sim/serve/serving_scenario.h"
#include "sim/sweep/sweep_runner.h"
#include "sim/sweep/sweep_summary.h"

namespace clustersim::cli {

// The command-line options that change a sizing's rows, which its summary records (options).
struct ServingRunOptions {
  bool max_rate = false;  // --max-rate: each deployment's highest rate within the SLO
  // --samples N: traffic samples, replacing traffic.samples; 0: not given, or the scenario's own
  int samples = 0;
};

// The summary's text of `options`: "--max-rate", "--samples N" or both (in that order, a space
// between), "" for none (the text of sizings before --samples).
std::string serving_options_text(const ServingRunOptions& options);
// The options of a summary's text; nullopt for text this version does not write.
std::optional<ServingRunOptions> parse_serving_options(const std::string& text);

struct ServingInputs {
  std::unique_ptr<LoadedServingScenario> loaded;            // points into the catalog
  std::unique_ptr<TextFile<schema::PriceFile>> price_file;  // null without --prices
  std::unique_ptr<ServingPrices> prices;                    // points into price_file
};

// Loads the serving scenario `scenario_path` and the price file `prices_path` (none when empty)
// against `catalog`, printing every diagnostic, and checks that a sizing with `options` can run
// on them (--max-rate: open-loop traffic, an SLO, a trace with a rate; --samples above 1: no
// trace). Returns nullopt after printing why, with `*exit_code` set:
// kExitInputError for a file with errors, kExitUsage for a scenario the sizing does not take.
std::optional<ServingInputs> load_serving_inputs(const std::string& scenario_path,
                                                 const std::string& prices_path,
                                                 const Catalog& catalog,
                                                 const ServingRunOptions& options,
                                                 int* exit_code);

// The sizing's identity (and zero progress), as its journal and HDF5 file record it: the shared
// sweep_identity, the scenario's name and deployment count, the options and the trace's
// fingerprint.
SweepSummary serving_identity(const std::string& scenario_path, const std::string& prices_path,
                              const Catalog& catalog, const SweepOptions& options,
                              const LoadedServingScenario& loaded,
                              const ServingRunOptions& run_options);

}  // namespace clustersim::cli
