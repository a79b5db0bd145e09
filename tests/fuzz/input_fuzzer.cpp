// libFuzzer target over everything a user writes: one input is one file, its first byte choosing
// the kind ('S' a scenario, training or serving as the tool tells them apart, 'C' a catalog file,
// 'P' a price file, 'T' a serving trace; any other byte by its value mod 3 among the first three),
// the rest its text. A trace is replayed by a fixed serving scenario (tests/fuzz/traced.textproto)
// with an SLO and autoscaling, so that the rate search reads it too. Each is loaded as the
// tool loads it; when it loads, the work after loading runs too, bounded: the configuration space
// is expanded, the first valid configuration of at most kMaxFuzzGpus GPUs is evaluated (memory,
// one simulated step) and priced (at most kMaxFuzzTrials spot trials); a serving scenario's first
// valid deployment of at most kMaxFuzzGpus GPUs is simulated when its traffic holds at most
// kMaxFuzzRequests requests. Any crash, sanitizer report, CLUSTERSIM_CHECK failure or hang is a
// bug: bad input must end in diagnostics, never anywhere else.
//
// Run by tests/fuzz/run_fuzzer.sh (CI: a fixed number of inputs from a fixed seed, corpus made
// from the shipped files).
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "sim/cost/cost_model.h"
#include "sim/io/catalog.h"
#include "sim/io/scenario_loader.h"
#include "sim/io/text_file.h"
#include "sim/serve/serving_evaluation.h"
#include "sim/serve/serving_scenario.h"
#include "sim/serve/serving_space.h"
#include "sim/sweep/configuration_checks.h"
#include "sim/sweep/configuration_space.h"
#include "sim/sweep/evaluation.h"
#include "sim/sweep/result_row.h"

namespace clustersim {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxFuzzGpus = 16;  // larger clusters are valid input but slow to simulate
constexpr int64_t kMaxFuzzCandidates = 256;  // candidates looked at for one to evaluate
constexpr int kMaxFuzzTrials = 4;
constexpr double kMaxFuzzRequests = 2000;
constexpr size_t kMaxFuzzTraceRequests = 200;  // a rate search simulates it about 10 times

// A directory of this process for the input written as a file (the loaders read paths), with
// base/ holding the shipped runtime and link classes that every evaluation needs.
const fs::path& work_directory() {
  static const fs::path directory = [] {
    const fs::path d = fs::temp_directory_path() / ("clustersim-fuzz-" + std::to_string(getpid()));
    fs::create_directories(d / "catalog");
    fs::create_directories(d / "base");
    for (const char* file : {"runtime.textproto", "links.textproto"}) {
      fs::copy_file(fs::path(CLUSTERSIM_SOURCE_DIR) / "topologies" / file, d / "base" / file,
                    fs::copy_options::overwrite_existing);
    }
    return d;
  }();
  return directory;
}

std::string write_input(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path.string();
}

const Catalog& shipped_catalog() {
  static const std::unique_ptr<Catalog> catalog = [] {
    Diagnostics diagnostics;
    return Catalog::load({std::string(CLUSTERSIM_SOURCE_DIR) + "/models",
                          std::string(CLUSTERSIM_SOURCE_DIR) + "/topologies"},
                         &diagnostics);
  }();
  return *catalog;
}

// The loaded scenario's bounded work: the first small valid configuration, evaluated and priced.
void evaluate_some(const Catalog& catalog, const LoadedScenario& scenario,
                   const TextFile<schema::PriceFile>* prices) {
  Diagnostics diagnostics;
  std::unique_ptr<CostModel> cost = load_cost_model(scenario, catalog, prices, &diagnostics);
  if (!cost || !catalog.runtimes().find("default")) return;
  cost->trials = std::min(cost->trials, kMaxFuzzTrials);
  const ConfigurationSpace space(scenario);
  Evaluator evaluator(catalog, scenario);
  for (int64_t i = 0; i < std::min(space.size(), kMaxFuzzCandidates); ++i) {
    const Configuration c = space.at(i);
    if (c.gpus() > kMaxFuzzGpus || !configuration_problem(c, scenario).empty()) continue;
    const Evaluation e = evaluator.evaluate(c);
    if (e.error.empty()) make_result_rows(c, e, scenario, *cost);
    return;
  }
}

// The loaded serving scenario's bounded work: its first small valid deployment, simulated when the
// traffic is small.
void serve_some(const LoadedServingScenario& scenario) {
  const schema::ServingScenario& m = scenario.scenario();
  if (!m.has_traffic()) return;
  const schema::Traffic& t = m.traffic();
  const double requests = t.has_closed_loop()  ? (t.closed_loop().requests() > 0
                                                      ? t.closed_loop().requests()
                                                      : kMaxFuzzRequests + 1)
                          : t.has_trace_file() ? static_cast<double>(scenario.trace.size())
                                               : expected_requests(t);
  if (requests > kMaxFuzzRequests) return;
  const ServingSpace space(scenario);
  ServingEvaluator evaluator(shipped_catalog(), scenario);
  for (int64_t i = 0; i < std::min(space.size(), kMaxFuzzCandidates); ++i) {
    const ServingConfiguration c = space.at(i);
    if (c.gpus() > kMaxFuzzGpus || !serving_problem(c, shipped_catalog()).empty()) continue;
    evaluator.evaluate(c);
    return;
  }
}

void fuzz_scenario(const std::string& text) {
  Diagnostics diagnostics;
  const std::string path = write_input(work_directory() / "s.textproto", text);
  if (is_serving_scenario_file(path)) {
    const auto serving = load_serving_scenario(path, shipped_catalog(), &diagnostics);
    if (serving) serve_some(*serving);
    return;
  }
  const auto scenario = load_scenario(path, shipped_catalog(), &diagnostics);
  if (scenario) evaluate_some(shipped_catalog(), *scenario, nullptr);
}

// A catalog file on its own (with the shipped runtime and link classes, which every evaluation
// needs); when it loads with a model and an instance, a one-node job of the two is evaluated.
void fuzz_catalog(const std::string& text) {
  const fs::path directory = work_directory() / "catalog";
  write_input(directory / "fuzz.textproto", text);
  Diagnostics diagnostics;
  const auto catalog =
      Catalog::load({(work_directory() / "base").string(), directory.string()}, &diagnostics);
  if (diagnostics.has_errors() || catalog->models().all().empty() ||
      catalog->instances().all().empty()) {
    return;
  }
  const std::string job =
      "name: \"f\"\nmodel: \"" + catalog->models().all().begin()->first +
      "\"\njob { global_batch_size: 8 sequence_length: 512 precision: BF16 optimizer: ADAM "
      "steps: 10 }\ncluster { instance: \"" +
      catalog->instances().all().begin()->first + "\" nodes: 1 }\n";
  const auto scenario =
      load_scenario(write_input(work_directory() / "job.textproto", job), *catalog, &diagnostics);
  if (scenario) evaluate_some(*catalog, *scenario, nullptr);
}

// A price file against a fixed spot-priced scenario.
void fuzz_prices(const std::string& text) {
  static const std::unique_ptr<LoadedScenario> scenario = [] {
    Diagnostics diagnostics;
    return load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/fuzz/priced.textproto",
                         shipped_catalog(), &diagnostics);
  }();
  Diagnostics diagnostics;
  const auto prices = read_text_file<schema::PriceFile>(
      write_input(work_directory() / "p.textproto", text), &diagnostics);
  if (prices && scenario) evaluate_some(shipped_catalog(), *scenario, prices.get());
}

// A trace file replayed by tests/fuzz/traced.textproto (copied beside it, as the scenario names it
// relative to its own directory): loaded, its first deployment simulated and its rate searched
// when it holds few requests.
void fuzz_trace(const std::string& text) {
  static const std::string scenario_path = [] {
    const fs::path path = work_directory() / "traced.textproto";
    fs::copy_file(fs::path(CLUSTERSIM_SOURCE_DIR) / "tests/fuzz/traced.textproto", path,
                  fs::copy_options::overwrite_existing);
    return path.string();
  }();
  write_input(work_directory() / "traced.csv", text);
  Diagnostics diagnostics;
  const auto serving = load_serving_scenario(scenario_path, shipped_catalog(), &diagnostics);
  if (!serving || serving->trace.size() > kMaxFuzzTraceRequests) return;
  ServingEvaluator evaluator(shipped_catalog(), *serving);
  const ServingConfiguration c = ServingSpace(*serving).at(0);
  if (evaluator.evaluate(c).metrics) evaluator.max_rate_scale(c);
}

}  // namespace
}  // namespace clustersim

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] == 'S'   ? 0
          : data[0] == 'C' ? 1
          : data[0] == 'P' ? 2
          : data[0] == 'T' ? 3
                           : data[0] % 3) {
    case 0:
      clustersim::fuzz_scenario(text);
      break;
    case 1:
      clustersim::fuzz_catalog(text);
      break;
    case 2:
      clustersim::fuzz_prices(text);
      break;
    default:
      clustersim::fuzz_trace(text);
      break;
  }
  return 0;
}
