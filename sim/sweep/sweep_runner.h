// Evaluates a scenario's configurations in parallel (oneTBB) and hands the rows on in
// configuration order, a chunk at a time, so memory stays flat however many there are. Cheap
// checks come first: structural validity and constraints (pruned, no row), then the memory model
// (OOM rows, no simulation), and only then the step simulation. The chunked loop itself
// (run_candidates) also runs a serving sizing's deployments (serving_sweep.h).
//
// Deterministic: the rows, their order and the counts are the same for any thread count and any
// chunking. Interruptible: an interruption (interruption.h) stops it within milliseconds, the
// chunk under way discarded.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "sim/cost/cost_model.h"
#include "sim/engine/interruption.h"
#include "sim/io/catalog.h"
#include "sim/io/scenario_loader.h"
#include "sim/sweep/result_row.h"
#include "sim/sweep/sweep_summary.h"

namespace clustersim {

struct SweepOptions {
  int threads = 0;  // 0: every core
  int shard = 0;    // this run evaluates candidates with index % shard_count == shard
  int shard_count = 1;
  int64_t first_index = 0;  // resume: skip candidates below this index
  // Candidates evaluated between two hand-overs; 0: adaptive, chunks of about kChunkSeconds (so
  // a hand-over, and a journal record, comes often whatever a configuration costs).
  int64_t chunk = 0;
  const Interruption* interruption = nullptr;  // checked inside every evaluation
};

// The wall time an adaptive chunk aims at.
inline constexpr double kChunkSeconds = 0.25;

struct SweepCounts {
  int64_t candidates = 0;      // of this shard from first_index on
  int64_t configurations = 0;  // valid configurations evaluated
  int64_t rows = 0;            // result rows handed over (one per configuration and billing mode)
  int64_t simulated = 0;       // configurations whose step was simulated (the others did not fit)
  std::map<std::string, int64_t> pruned;  // reason -> count
  bool interrupted = false;  // stopped by options.interruption before the end
};

// The outcome of evaluating one candidate of a chunk (training or serving).
struct EvaluationSlot {
  std::string problem;  // pruned with this reason, or a cluster error when `failed`
  bool failed = false;
  std::vector<ResultRow> rows;  // one per billing mode; none when pruned
  bool simulated = false;
};

// Hands a chunk's slots on in order: their rows appended to `*rows`, pruned reasons, evaluated
// and simulated candidates and rows counted into `*counts`. Returns false with `*error` set at the
// first failed slot (the rows before it are kept).
bool gather_slots(std::vector<EvaluationSlot>* slots, std::vector<ResultRow>* rows,
                  SweepCounts* counts, std::string* error);

// Called after each chunk with its rows (configuration order), the index of the first candidate
// not yet handled, and the counts so far. Returning false stops the sweep.
using ChunkDone = std::function<bool(std::vector<ResultRow>& rows, int64_t next_index,
                                     const SweepCounts& counts)>;

// Evaluates candidate `index` into `slot`; called on oneTBB's worker threads, each candidate once.
using EvaluateCandidate = std::function<void(int64_t index, EvaluationSlot* slot)>;

// The chunked loop of a sweep over `size` candidates: those of options' shard from
// options.first_index on, each chunk evaluated in parallel on options.threads threads and handed
// to `chunk_done` in index order. Returns the counts (candidates: of the shard from first_index
// on; interrupted when options.interruption stopped it); a failed slot sets `*error` and stops it.
SweepCounts run_candidates(int64_t size, const SweepOptions& options,
                           const EvaluateCandidate& evaluate, const ChunkDone& chunk_done,
                           std::string* error);

// Runs the sweep: a row per valid configuration and billing mode of `cost`. Returns the counts
// (interrupted when options.interruption stopped it), or an error message when a cluster could
// not be built (then `*error` is set). Either way the rows handed over so far are all there is.
SweepCounts run_sweep(const Catalog& catalog, const LoadedScenario& scenario,
                      const CostModel& cost, const SweepOptions& options,
                      const ChunkDone& chunk_done, std::string* error);

// `*summary` becomes `start` (a sweep's summary when this run of it began, e.g. resumed) with the
// progress of this run's chunks so far: next_index, and `counts` added to start's counts.
void record_progress(const SweepSummary& start, int64_t next_index, const SweepCounts& counts,
                     SweepSummary* summary);

// Candidates of shard `shard` (of `shard_count`) with index >= `first_index` among `size`.
int64_t shard_candidates(int64_t size, int shard, int shard_count, int64_t first_index);

}  // namespace clustersim
