// Chunked parallel evaluation: each chunk's candidates are evaluated by a oneTBB parallel loop
// into slots indexed by position (so the order of completion does not matter), then handed on in
// order. Each worker thread owns an Evaluator (its topology caches are not thread-safe). An
// interruption thrown by any evaluation cancels the chunk (oneTBB rethrows it here).
#include "sim/sweep/sweep_runner.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "sim/sweep/configuration_checks.h"
#include "sim/sweep/configuration_space.h"
#include "sim/sweep/evaluation.h"

namespace clustersim {
namespace {

// The outcome of one candidate.
using Slot = EvaluationSlot;

void evaluate_slot(const Configuration& c, const LoadedScenario& scenario, const CostModel& cost,
                   Evaluator* evaluator, Slot* slot) {
  slot->problem = configuration_problem(c, scenario).reason;
  if (!slot->problem.empty()) return;
  const Evaluation e = evaluator->evaluate(c);
  if (!e.error.empty()) {
    slot->problem = e.error;
    slot->failed = true;
    return;
  }
  slot->simulated = e.step.has_value();
  slot->rows = make_result_rows(c, e, scenario, cost);
}

// Chunk sizes: fixed, or adapted to take about kChunkSeconds each (doubling while a chunk takes
// under half of it, halving while over twice), never fewer candidates than threads.
class ChunkSizer {
 public:
  ChunkSizer(int64_t fixed, int threads)
      : fixed_(fixed), minimum_(threads), size_(fixed > 0 ? fixed : 2 * int64_t{threads}) {}
  int64_t size() const { return size_; }
  void finished(std::chrono::steady_clock::duration took) {
    if (fixed_ > 0) return;
    const double seconds = std::chrono::duration<double>(took).count();
    if (seconds < kChunkSeconds / 2) size_ = std::min(size_ * 2, kMaxChunk);
    if (seconds > kChunkSeconds * 2) size_ = std::max(size_ / 2, minimum_);
  }

 private:
  static constexpr int64_t kMaxChunk = 4096;
  int64_t fixed_;
  int64_t minimum_;
  int64_t size_;
};

}  // namespace

bool gather_slots(std::vector<EvaluationSlot>* slots, std::vector<ResultRow>* rows,
                  SweepCounts* counts, std::string* error) {
  for (EvaluationSlot& slot : *slots) {
    if (slot.failed) {
      *error = slot.problem;
      return false;
    }
    if (!slot.problem.empty()) {
      ++counts->pruned[slot.problem];
      continue;
    }
    ++counts->configurations;
    counts->simulated += slot.simulated;
    counts->rows += static_cast<int64_t>(slot.rows.size());
    for (ResultRow& row : slot.rows) rows->push_back(std::move(row));
  }
  return true;
}

void record_progress(const SweepSummary& start, int64_t next_index, const SweepCounts& counts,
                     SweepSummary* summary) {
  summary->next_index = next_index;
  summary->configurations = start.configurations + counts.configurations;
  summary->rows = start.rows + counts.rows;
  summary->simulated = start.simulated + counts.simulated;
  summary->pruned = start.pruned;
  for (const auto& [reason, count] : counts.pruned) summary->pruned[reason] += count;
}

int64_t shard_candidates(int64_t size, int shard, int shard_count, int64_t first_index) {
  // Indices i >= first with i % shard_count == shard.
  const auto below = [&](int64_t n) {  // count of such i < n (ignoring first)
    return n <= shard ? 0 : (n - shard + shard_count - 1) / shard_count;
  };
  return below(size) - below(std::min(first_index, size));
}

SweepCounts run_candidates(int64_t size, const SweepOptions& options,
                           const EvaluateCandidate& evaluate, const ChunkDone& chunk_done,
                           std::string* error) {
  SweepCounts counts;
  counts.candidates =
      shard_candidates(size, options.shard, options.shard_count, options.first_index);
  tbb::task_arena arena(options.threads > 0 ? options.threads : tbb::task_arena::automatic);
  ChunkSizer sizer(options.chunk, arena.max_concurrency());
  // The first index of this shard at or after first_index.
  int64_t next =
      options.first_index +
      ((options.shard - options.first_index % options.shard_count) + options.shard_count) %
          options.shard_count;
  std::vector<Slot> slots;
  while (next < size) {
    const int64_t in_chunk = std::min<int64_t>(
        sizer.size(), (size - next + options.shard_count - 1) / options.shard_count);
    slots.assign(in_chunk, Slot{});
    const auto start = std::chrono::steady_clock::now();
    try {
      arena.execute([&] {
        // Last candidates first: the axes put the largest clusters last, and starting the longest
        // simulations early leaves short ones to even out the threads at the end of the chunk.
        tbb::parallel_for(int64_t{0}, in_chunk, [&](int64_t reversed) {
          const InterruptionScope scope(options.interruption);
          check_interruption();
          const int64_t k = in_chunk - 1 - reversed;
          evaluate(next + k * options.shard_count, &slots[k]);
        });
      });
    } catch (const Interrupted&) {
      counts.interrupted = true;
      return counts;
    }
    sizer.finished(std::chrono::steady_clock::now() - start);
    std::vector<ResultRow> rows;
    if (!gather_slots(&slots, &rows, &counts, error)) return counts;
    next += in_chunk * options.shard_count;
    if (!chunk_done(rows, std::min(next, size), counts)) break;
  }
  return counts;
}

SweepCounts run_sweep(const Catalog& catalog, const LoadedScenario& scenario, const CostModel& cost,
                      const SweepOptions& options, const ChunkDone& chunk_done,
                      std::string* error) {
  const ConfigurationSpace space(scenario);
  tbb::enumerable_thread_specific<Evaluator> evaluators(std::cref(catalog), std::cref(scenario));
  return run_candidates(
      space.size(), options,
      [&](int64_t index, Slot* slot) {
        evaluate_slot(space.at(index), scenario, cost, &evaluators.local(), slot);
      },
      chunk_done, error);
}

}  // namespace clustersim
