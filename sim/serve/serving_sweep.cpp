// Chunked parallel evaluation of serving deployments: each chunk's deployments are evaluated by a
// oneTBB loop into slots indexed by position, then handed on in order.
#include "sim/serve/serving_sweep.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>

#include "sim/io/schema/serving.pb.h"
#include "sim/serve/traffic.h"

namespace clustersim {
namespace {

using Slot = EvaluationSlot;

void evaluate_slot(const Catalog& catalog, const LoadedServingScenario& scenario,
                   const ServingPrices& prices, bool max_rate, const ServingConfiguration& c,
                   ServingEvaluator* evaluator, Slot* slot) {
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
                                     const ServingChunkDone& chunk_done, std::string* error) {
  const ServingSpace space(scenario);
  ServingSweepCounts counts;
  counts.candidates = space.size();
  tbb::task_arena arena(options.threads > 0 ? options.threads : tbb::task_arena::automatic);
  tbb::enumerable_thread_specific<ServingEvaluator> evaluators(std::cref(catalog),
                                                               std::cref(scenario));
  std::vector<Slot> slots;
  for (int64_t next = 0; next < space.size();) {
    const int64_t in_chunk = std::min(options.chunk, space.size() - next);
    slots.assign(in_chunk, Slot{});
    arena.execute([&] {
      tbb::parallel_for(int64_t{0}, in_chunk, [&](int64_t k) {
        evaluate_slot(catalog, scenario, prices, options.max_rate, space.at(next + k),
                      &evaluators.local(), &slots[k]);
      });
    });
    std::vector<ResultRow> rows;
    if (!gather_slots(&slots, &rows, &counts, error)) return counts;
    next += in_chunk;
    if (!chunk_done(rows, counts)) break;
  }
  return counts;
}

}  // namespace clustersim
