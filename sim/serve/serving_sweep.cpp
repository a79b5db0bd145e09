// Serving deployments on the chunked loop of sweep_runner.h, one SampledServingEvaluator per
// thread.
#include "sim/serve/serving_sweep.h"

#include <tbb/enumerable_thread_specific.h>

#include "sim/io/schema/serving.pb.h"
#include "sim/serve/traffic.h"
#include "sim/serve/traffic_samples.h"

namespace clustersim {
namespace {

using Slot = EvaluationSlot;

void evaluate_slot(const Catalog& catalog, const LoadedServingScenario& scenario,
                   const ServingPrices& prices, bool max_rate, const ServingConfiguration& c,
                   SampledServingEvaluator* evaluator, Slot* slot) {
  slot->problem = serving_problem(c, catalog);
  if (!slot->problem.empty()) return;
  const ServingEvaluation e = evaluator->evaluate(c);
  if (!e.error.empty()) {
    slot->problem = e.error;
    slot->failed = true;
    return;
  }
  slot->simulated = e.metrics.has_value();
  std::optional<double> rate;
  if (max_rate && e.metrics && scenario.scenario().has_slo() &&
      !scenario.scenario().traffic().has_closed_loop()) {
    rate = evaluator->max_rate_scale(c) *
           mean_rate_per_s(scenario.scenario().traffic(), scenario.trace);
  }
  slot->rows = make_serving_rows(c, e, prices, rate);
}

}  // namespace

ServingSweepCounts run_serving_sweep(const Catalog& catalog, const LoadedServingScenario& scenario,
                                     const ServingPrices& prices,
                                     const ServingSweepOptions& options,
                                     const ChunkDone& chunk_done, std::string* error) {
  const ServingSpace space(scenario);
  tbb::enumerable_thread_specific<SampledServingEvaluator> evaluators(
      std::cref(catalog), std::cref(scenario), options.samples);
  return run_candidates(
      space.size(), options.sweep,
      [&](int64_t index, Slot* slot) {
        evaluate_slot(catalog, scenario, prices, options.max_rate, space.at(index),
                      &evaluators.local(), slot);
      },
      chunk_done, error);
}

}  // namespace clustersim
