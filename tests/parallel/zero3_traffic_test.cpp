// ZeRO-3 layer-by-layer traffic: bytes gathered and reduced per step, closed forms of the
// communication-bound and compute-bound step, and the step on a real network.
#include "sim/parallel/zero3_traffic.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/parallel/pipeline_simulation.h"
#include "tests/testing/cluster.h"
#include "tests/testing/units.h"

namespace clustersim {
namespace {

using testing::ms;

struct Zero3Run {
  double task_end_ms = 0;  // the last task's compute
  double drained_ms = 0;   // the last reduce-scatter
  double waited_ms = 0;    // compute waiting for gathers
  double fetch_paced_ms = 0;  // of it, the waits a collective at its fetch floor ended
  double beside_ms = 0;    // work beside the chains of gathers waited for
  double gathered_bytes = 0, reduced_bytes = 0;
  int gathers = 0, reductions = 0;
};

// One stage, 1F1B over `micro_batches`; each gather takes `gather`, each reduce-scatter `reduce`
// (independent streams, no shared network).
Zero3Run run_stage(const Zero3Work& work, int micro_batches, Picoseconds forward,
                   Picoseconds backward, Picoseconds gather, Picoseconds reduce) {
  Simulation sim;
  Zero3Run run;
  const auto tasks = stage_schedule(schema::ONE_F_ONE_B, 1, 1, micro_batches, 0);
  CollectiveSmContention compute;  // no collective counted on it: compute at its own speed
  Zero3Stage stage(
      work, tasks, forward, backward, &sim,
      [&](CollectiveOp op, DataParallelGroup, double, std::function<void()> done) {
        const bool is_gather = op == CollectiveOp::kAllGather;
        ++(is_gather ? run.gathers : run.reductions);
        sim.call_after(is_gather ? gather : reduce, std::move(done));
      },
      &compute);
  stage.on_reductions_drained([&] { run.drained_ms = sim.now().seconds() * 1e3; });
  std::function<void(size_t)> next = [&](size_t i) {
    if (i == tasks.size()) {
      run.task_end_ms = sim.now().seconds() * 1e3;
      return;
    }
    stage.run_task(i, [&, i] { next(i + 1); });
  };
  next(0);
  sim.run();
  run.gathered_bytes = stage.gathered_bytes();
  run.reduced_bytes = stage.reduced_bytes();
  run.waited_ms = stage.waited().seconds() * 1e3;
  run.fetch_paced_ms = stage.fetch_paced_waited().seconds() * 1e3;
  run.beside_ms = compute.work_beside_collectives().seconds() * 1e3;
  return run;
}

Zero3Work work_of(int units) {
  Zero3Work w;
  w.units = units;
  w.unit_gather_bytes = 1e9;
  w.unit_gradient_bytes = 2e9;
  return w;
}

// FSDP2 with the forward's gather kept and the gradient sync deferred, its reduce-scatter after
// each run's last backward of a chunk when `per_run`.
Zero3Work deferred_fsdp2(int units, bool per_run) {
  Zero3Work w = work_of(units);
  make_fsdp2(&w);
  w.keep_forward_gather = true;
  w.defer_gradient_sync = true;
  w.reduce_after_backward = per_run;
  return w;
}

TEST_CASE("ZeRO-3 gathers 2 bytes x parameters per pass, every micro-batch, and reduces once") {
  // 10 layers of 1.2e9 parameters (fp16 weights, fp32 gradients), 3 micro-batches.
  const Zero3Work no_recompute = zero3_work(10, 12e9, 2, 12e9, 4);
  CHECK(no_recompute.units == 10);
  CHECK(no_recompute.regather_for_backward);     // 1.2e9 per layer: beyond the reuse distance
  CHECK(no_recompute.unit_reduce_buckets == 3);  // reduce_bucket_size 5e8
  CHECK(no_recompute.prefetch_units == 1);
  Zero3Run r = run_stage(no_recompute, 3, ms(10), ms(20), ms(1), ms(1));
  // Forward and backward passes: 2 x 2 bytes x 12e9 x 3 micro-batches.
  CHECK(r.gathered_bytes == Approx(2 * 2 * 12e9 * 3));
  CHECK(r.gathers == 2 * 10 * 3);
  CHECK(r.reduced_bytes == Approx(4 * 12e9 * 3));
  CHECK(r.reductions == 3 * 10 * 3);

  // Full recomputation adds a third pass when layers exceed the reuse distance...
  Zero3Work recompute = no_recompute;
  recompute.recompute = ms(10);
  r = run_stage(recompute, 3, ms(10), ms(30), ms(1), ms(1));
  CHECK(r.gathered_bytes == Approx(3 * 2 * 12e9 * 3));
  // ... and not when they stay gathered from the recomputed forward to the backward.
  const Zero3Work small = zero3_work(10, 1e9, 2, 1e9, 4);
  CHECK_FALSE(small.regather_for_backward);
  CHECK(small.prefetch_units == 1);
  CHECK(zero3_work(10, 1e8, 2, 1e8, 4).prefetch_units == 5);  // 1e7 per layer: 5e7 ahead
  Zero3Work small_recompute = small;
  small_recompute.recompute = ms(10);
  r = run_stage(small_recompute, 3, ms(10), ms(30), ms(1), ms(1));
  CHECK(r.gathered_bytes == Approx(2 * 2 * 1e9 * 3));
}

TEST_CASE("FSDP2: one gather per pass, the recomputed forward served by the backward's gather") {
  // 10 layers of 1.2e9 parameters, BF16 weights, fp32 reduce (reduce_dtype float32), full
  // recomputation, 3 micro-batches. Per step: gathers 2 passes x 2 bytes x 12e9 x 3 micro-batches
  // (the sharded weights' bytes x DP per pass, whole buffers), reduce-scatters 4 bytes x 12e9 x 3,
  // one collective per layer and pass; DeepSpeed would gather 3 times (reuse distance) in 3
  // buckets.
  Zero3Work w = zero3_work(10, 12e9, 2, 12e9, 4);
  make_fsdp2(&w);
  CHECK(w.prefetch_units == 1);
  CHECK(w.unit_reduce_buckets == 1);
  CHECK_FALSE(w.regather_for_backward);
  w.recompute = ms(10);
  const Zero3Run r = run_stage(w, 3, ms(10), ms(30), ms(1), ms(1));
  CHECK(r.gathered_bytes == Approx(2 * 2 * 12e9 * 3));
  CHECK(r.gathers == 2 * 10 * 3);
  CHECK(r.reduced_bytes == Approx(4 * 12e9 * 3));
  CHECK(r.reductions == 10 * 3);
}

// Every collective a stage issues, in order: (op, group, bytes); each takes 1 ms. `replicated`
// (when given) receives the stage's bytes all-reduced across hybrid sharding's replicas.
using Calls = std::vector<std::tuple<CollectiveOp, DataParallelGroup, double>>;

Calls stage_calls(const Zero3Work& work, const std::vector<PipelineTask>& tasks,
                  double* replicated = nullptr) {
  Simulation sim;
  Calls calls;
  CollectiveSmContention compute;
  Zero3Stage stage(
      work, tasks, ms(4), ms(8), &sim,
      [&](CollectiveOp op, DataParallelGroup group, double bytes, std::function<void()> done) {
        calls.emplace_back(op, group, bytes);
        sim.call_after(ms(1), std::move(done));
      },
      &compute);
  std::function<void(size_t)> next = [&](size_t i) {
    if (i < tasks.size()) stage.run_task(i, [&, i] { next(i + 1); });
  };
  next(0);
  sim.run();
  CHECK_FALSE(stage.reductions_pending());
  if (replicated) *replicated = stage.replicated_bytes();
  return calls;
}

// How many collectives of `op` over `group` `calls` holds, and their bytes.
std::pair<int, double> count(const Calls& calls, CollectiveOp op, DataParallelGroup group) {
  std::pair<int, double> n{0, 0.0};
  for (const auto& [o, g, bytes] : calls) {
    if (o == op && g == group) ++n.first, n.second += bytes;
  }
  return n;
}

TEST_CASE("FSDP2 of expert layers: the experts over their own group, beside the dense share") {
  // 4 layers, each 1 GB of dense weights (2 GB of gradients) and 3 GB of routed experts (6 GB),
  // 3 micro-batches of 1F1B: every pass gathers both shares, the dense over the shard's ranks
  // and the experts over the expert data-parallel group, and every backward reduce-scatters both.
  Zero3Work w = work_of(4);
  make_fsdp2(&w);
  w.unit_expert_gather_bytes = 3e9;
  w.unit_expert_gradient_bytes = 6e9;
  const auto tasks = stage_schedule(schema::ONE_F_ONE_B, 1, 1, 3, 0);
  const Calls plain = stage_calls(w, tasks);
  using Op = CollectiveOp;
  using G = DataParallelGroup;
  CHECK(count(plain, Op::kAllGather, G::kShard) == std::pair{2 * 4 * 3, 1e9 * 2 * 4 * 3});
  CHECK(count(plain, Op::kAllGather, G::kExperts) == std::pair{2 * 4 * 3, 3e9 * 2 * 4 * 3});
  CHECK(count(plain, Op::kReduceScatter, G::kShard) == std::pair{4 * 3, 2e9 * 4 * 3});
  CHECK(count(plain, Op::kReduceScatter, G::kExperts) == std::pair{4 * 3, 6e9 * 4 * 3});
  // The forward's gather kept for the backward: the forwards' gathers only.
  w.keep_forward_gather = true;
  const Calls kept = stage_calls(w, tasks);
  CHECK(count(kept, Op::kAllGather, G::kExperts) == std::pair{4 * 3, 3e9 * 4 * 3});
  CHECK(count(kept, Op::kReduceScatter, G::kExperts).first == 4 * 3);
  // Deferred synchronization: each layer gathered once, its gradients reduced once (the last
  // backward), whatever the micro-batches.
  w.defer_gradient_sync = true;
  const Calls deferred = stage_calls(w, tasks);
  CHECK(count(deferred, Op::kAllGather, G::kShard) == std::pair{4, 4e9});
  CHECK(count(deferred, Op::kAllGather, G::kExperts) == std::pair{4, 12e9});
  CHECK(count(deferred, Op::kReduceScatter, G::kShard) == std::pair{4, 8e9});
  CHECK(count(deferred, Op::kReduceScatter, G::kExperts) == std::pair{4, 24e9});
  // After the last backward (pipeline parallelism): all 4 layers' gradients in one collective.
  w.reduce_after_backward = true;
  const Calls after = stage_calls(w, tasks);
  CHECK(count(after, Op::kReduceScatter, G::kShard) == std::pair{1, 8e9});
  CHECK(count(after, Op::kReduceScatter, G::kExperts) == std::pair{1, 24e9});
  CHECK(std::get<0>(after.back()) == Op::kReduceScatter);
  // Without sharded experts (expert data parallel 1) nothing goes to their group.
  Zero3Work dense = work_of(4);
  make_fsdp2(&dense);
  const Calls none = stage_calls(dense, tasks);
  CHECK(count(none, Op::kAllGather, G::kExperts).first == 0);
  CHECK(count(none, Op::kReduceScatter, G::kExperts).first == 0);
}

TEST_CASE("deferred FSDP2 sync with interleaving: once per model chunk, not per micro-batch") {
  // 2 stages x 2 chunks, 4 micro-batches: stage 0 runs 8 forwards and 8 backwards of 2 chunks; 3
  // layers a chunk gather once at each chunk's first forward (6) and reduce once at its last
  // backward (6).
  const Zero3Work w = deferred_fsdp2(3, false);
  const auto tasks = stage_schedule(schema::INTERLEAVED_ONE_F_ONE_B, 2, 2, 4, 0);
  const Calls calls = stage_calls(w, tasks);
  CHECK(count(calls, CollectiveOp::kAllGather, DataParallelGroup::kShard).first == 6);
  CHECK(count(calls, CollectiveOp::kReduceScatter, DataParallelGroup::kShard).first == 6);
}

TEST_CASE("deferred FSDP2 sync over pipeline runs: gathered and reduced once per run") {
  // The deferred case above as 2 runs of 4 micro-batches (8 in all): each run gathers every
  // chunk's 3 layers at its first forward and reduces them after its last backward, all of a
  // chunk's at once: twice the single run's 6 gathers, 2 x 2 reduce-scatters of 3 layers each.
  const Zero3Work w = deferred_fsdp2(3, true);
  const auto tasks = stage_schedule(schema::INTERLEAVED_ONE_F_ONE_B, 2, 2, 8, 0, false, 2);
  const Calls calls = stage_calls(w, tasks);
  CHECK(count(calls, CollectiveOp::kAllGather, DataParallelGroup::kShard) ==
        std::pair{12, 12 * 1e9});
  CHECK(count(calls, CollectiveOp::kReduceScatter, DataParallelGroup::kShard) ==
        std::pair{4, 4 * 3 * 2e9});
}

// Runs `tasks` one after another on a stage of `w` (forward 4 ms, backward 8 ms, each gather
// 0.5 ms, each reduce-scatter 3 ms); each task's end in ms.
std::vector<double> task_end_ms(const Zero3Work& w, const std::vector<PipelineTask>& tasks) {
  Simulation sim;
  CollectiveSmContention compute;
  Zero3Stage stage(
      w, tasks, ms(4), ms(8), &sim,
      [&](CollectiveOp op, DataParallelGroup, double, std::function<void()> done) {
        sim.call_after(op == CollectiveOp::kAllGather ? ms(0.5) : ms(3), std::move(done));
      },
      &compute);
  std::vector<double> ends;
  std::function<void(size_t)> next = [&](size_t i) {
    if (i == tasks.size()) return;
    stage.run_task(i, [&, i] {
      ends.push_back(sim.now().seconds() * 1e3);
      next(i + 1);
    });
  };
  next(0);
  sim.run();
  return ends;
}

TEST_CASE("FSDP2's reduce-scatter after a chunk's last backward holds the stream until done") {
  // One stage, 1 chunk of 4 layers, 2 runs of 1 micro-batch (forward 4 ms, backward 8 ms),
  // gathers 0.5 ms, the chunk's reduce-scatter 3 ms: run 0's first gather, forward, backward,
  // then its reduce-scatter before run 1's forward (whose gathers, issued at the backward's end,
  // are hidden under it), run 1's forward, backward and reduce-scatter.
  const Zero3Work w = deferred_fsdp2(4, true);
  const std::vector<double> ends =
      task_end_ms(w, stage_schedule(schema::ONE_F_ONE_B, 1, 1, 2, 0, false, 2));
  REQUIRE(ends.size() == 4);
  CHECK(ends[1] == Approx(0.5 + 4 + 8 + 3));
  CHECK(ends[2] == Approx(0.5 + 4 + 8 + 3 + 4));
  CHECK(ends[3] == Approx(0.5 + 2 * (4 + 8 + 3)));
}

TEST_CASE("an FSDP2 backward that reduces ends when its reduce-scatters do") {
  // torch's root post-backward callback waits on the reductions. One stage, 1 chunk of 4 layers,
  // 2 micro-batches (forward 4 ms, backward 8 ms: 2 ms a layer), the forward's gather kept,
  // gathers 0.5 ms, each layer's reduce-scatter 3 ms, one after another from the first layer's
  // backward end (0.5 + 4 + 2 ms): the backward ends with the fourth, 12 ms later; the next
  // forward's gathers, issued at the backward's compute end, are hidden by then.
  Zero3Work w = work_of(4);
  make_fsdp2(&w);
  w.keep_forward_gather = true;
  REQUIRE(w.backward_waits_reductions);
  const std::vector<double> ends = task_end_ms(w, stage_schedule(schema::ONE_F_ONE_B, 1, 1, 2, 0));
  REQUIRE(ends.size() == 4);
  CHECK(ends[0] == Approx(0.5 + 4));
  CHECK(ends[1] == Approx(0.5 + 4 + 2 + 4 * 3));
  CHECK(ends[2] == Approx(0.5 + 4 + 2 + 4 * 3 + 4));
  CHECK(ends[3] == Approx(0.5 + 4 + 2 + 4 * 3 + 4 + 2 + 4 * 3));
  // DeepSpeed's ZeRO-3 (no such callback) goes on while its reductions run.
  const Zero3Run deepspeed = run_stage(work_of(4), 2, ms(4), ms(8), ms(0.5), ms(3));
  CHECK(deepspeed.task_end_ms < ends[3] - 5);
}

TEST_CASE("LoRA under ZeRO-3: the frozen base gathered, only the adapters' gradients reduced") {
  // 4 layers gathering 1e9 base + 1e7 adapter parameters (BF16), training the 1e7 adapters
  // (fp32 reduce), 2 micro-batches without recomputation: gathers 2 x 2 x 1.01e9 x 2, reduces
  // 4 x 1e7 x 2.
  Zero3Work w = zero3_work(4, 1.01e9, 2, 1e7, 4);
  make_fsdp2(&w);
  CHECK(w.unit_gather_bytes == Approx(2 * 1.01e9 / 4));
  CHECK(w.unit_gradient_bytes == Approx(4 * 1e7 / 4));
  const Zero3Run r = run_stage(w, 2, ms(4), ms(8), ms(0.1), ms(0.1));
  CHECK(r.gathered_bytes == Approx(2 * 2 * 1.01e9 * 2));
  CHECK(r.reduced_bytes == Approx(4 * 1e7 * 2));
  CHECK(r.reductions == 4 * 2);
}

TEST_CASE("communication-bound ZeRO-3: the gathers run back to back, compute waits for each") {
  // 4 layers, forward 1 ms and backward 2 ms per layer, gathers 5 ms: 2 x 4 x 2 gathers in a
  // row, then the last layer's backward, then its reduce-scatter (3 ms).
  const Zero3Run r = run_stage(work_of(4), 2, ms(4), ms(8), ms(5), ms(3));
  CHECK(r.task_end_ms == Approx(16 * 5 + 2));
  CHECK(r.drained_ms == Approx(16 * 5 + 2 + 3));
  CHECK(r.waited_ms == Approx(r.task_end_ms - 2 * (4 + 8)));
  CHECK(r.fetch_paced_ms == 0);  // no fetch floor: every wait is the network's
  // One chain of gathers from the start; every layer's work but the last backward's ran beside
  // it before a wait.
  CHECK(r.beside_ms == Approx(2 * (4 + 8) - 2));
}

TEST_CASE("gathers that outlast the forward's layers: the forward's work beside them recorded") {
  // 4 layers, one micro-batch, forward 1 ms and backward 2 ms per layer, gathers 1.5 ms
  // prefetched one layer ahead. The forward waits 0.5 ms for each layer's gather after the first
  // (1.5 ms), and for the first backward layer's (issued at 6 ms as the fourth ended): one chain
  // from 0 ms, the forward's 4 ms of work beside it, each layer's recorded at the wait after it.
  // The backward's layers outlast their gathers: the second ends at 9 ms, the third is issued
  // only as its layer starts (9.5 ms), a chain beside work no wait follows.
  const Zero3Run r = run_stage(work_of(4), 1, ms(4), ms(8), ms(1.5), ms(0.25));
  CHECK(r.waited_ms == Approx(1.5 + 4 * 0.5));
  CHECK(r.task_end_ms == Approx(1.5 + 4 * 0.5 + 4 + 8));
  CHECK(r.beside_ms == Approx(4));
}

TEST_CASE("compute-bound ZeRO-3: only the first gather and the last reduce-scatter show") {
  // Gathers of 0.5 ms prefetched one layer ahead hide under 1 ms layers, also across tasks.
  const Zero3Run r = run_stage(work_of(4), 2, ms(4), ms(8), ms(0.5), ms(0.25));
  CHECK(r.task_end_ms == Approx(0.5 + 2 * (4 + 8)));
  CHECK(r.waited_ms == Approx(0.5));
  CHECK(r.drained_ms == Approx(0.5 + 2 * (4 + 8) + 0.25));
}

// DeepSpeed's 2021 coordinator on layers of one module each.
Zero3Work synchronous_work(int units, double unit_gather_bytes, double unit_gradient_bytes) {
  Zero3Work w = work_of(units);
  w.unit_gather_bytes = unit_gather_bytes;
  w.unit_gradient_bytes = unit_gradient_bytes;
  w.unit_parameters = unit_gather_bytes / 2;
  make_fetch_synchronous(&w, {1.0});
  return w;
}

TEST_CASE("DeepSpeed 2021's held-back reduce-scatter carries a routed experts' share too") {
  // 4 layers, 2 micro-batches: each layer's gradients wait in the bucket until the next gather or
  // the step's end, the experts' share (6 GB a layer) with the dense one (2 GB) to their groups.
  Zero3Work w = synchronous_work(4, 1e9, 2e9);
  w.unit_expert_gradient_bytes = 6e9;
  const Calls calls = stage_calls(w, stage_schedule(schema::ONE_F_ONE_B, 1, 1, 2, 0));
  CHECK(count(calls, CollectiveOp::kReduceScatter, DataParallelGroup::kShard) ==
        std::pair{8, 2e9 * 8});
  CHECK(count(calls, CollectiveOp::kReduceScatter, DataParallelGroup::kExperts) ==
        std::pair{8, 6e9 * 8});
}

double fetch_ms(double bytes) { return bytes / kDeepSpeed2021FetchBytesPerSecond * 1e3; }

TEST_CASE("DeepSpeed 2021, communication-bound: every collective's bytes at the fetch rate") {
  // 4 layers, 2 micro-batches: 16 gathers of 1 GB and 8 reduce-scatters of 2 GB, each at least
  // its bytes / 24.3 GB/s (the fake network takes 5 ms), taking turns on one process group that
  // is never idle: the last reduce-scatter ends after all of them. The last layer's backward
  // (2 ms) runs beside the reduce-scatter of the layer before it; its own follows.
  const Zero3Work w = synchronous_work(4, 1e9, 2e9);
  CHECK(w.prefetch_units == 1);
  CHECK(fetch_ms(1e9) == Approx(41.1).epsilon(0.01));
  const Zero3Run r = run_stage(w, 2, ms(4), ms(8), ms(5), ms(3));
  CHECK(r.gathers == 16);
  CHECK(r.reductions == 8);
  CHECK(r.drained_ms == Approx(fetch_ms(16 * 1e9 + 8 * 2e9)));
  CHECK(r.task_end_ms == Approx(r.drained_ms - 2 * fetch_ms(2e9) + 2));
  // Every wait ended as a collective reached its fetch floor (the network's 5 or 3 ms long past).
  CHECK(r.waited_ms == Approx(r.task_end_ms - 2 * (4 + 8)));
  CHECK(r.fetch_paced_ms == Approx(r.waited_ms));
}

TEST_CASE("DeepSpeed 2021, compute-bound: the first gather and the reduce-scatters synced on") {
  // Gathers of 10 MB (0.41 ms) and reduce-scatters of 20 MB (0.82 ms) hide under 10 ms forward
  // and 20 ms backward layers, except the first gather, the first backward's last
  // reduce-scatter (the next forward's fetch synchronizes on it) and the second's (the step's
  // end).
  const Zero3Work w = synchronous_work(4, 1e7, 2e7);
  const Zero3Run r = run_stage(w, 2, ms(40), ms(80), ms(5e-3), ms(5e-3));
  CHECK(r.task_end_ms == Approx(fetch_ms(1e7) + 2 * (40 + 80) + fetch_ms(2e7)));
  CHECK(r.drained_ms == Approx(r.task_end_ms + fetch_ms(2e7)));
  CHECK(r.waited_ms == Approx(fetch_ms(1e7) + fetch_ms(2e7)));
  CHECK(r.fetch_paced_ms == Approx(r.waited_ms));
}

TEST_CASE("DeepSpeed 2021: a module at the live-parameter limit is not prefetched past") {
  // Layers of two modules of 1e9 parameters each (DeepSpeed's stage3_max_live_parameters):
  // nothing is prefetched, so every 1 GB gather (41 ms) is waited for and the compute follows it.
  // Forward only (no gradients), 2 micro-batches of 4 layers: 16 gathers, 2 x 4 ms of compute
  // each pass... and the backward's 16 gathers likewise.
  Zero3Work w = work_of(4);
  w.unit_gather_bytes = 2e9;
  w.unit_gradient_bytes = 0;
  w.unit_parameters = 2e9;
  make_fetch_synchronous(&w, {0.5, 0.5});
  const Zero3Run r = run_stage(w, 2, ms(4), ms(8), ms(5), ms(3));
  CHECK(r.gathers == 2 * 2 * 4 * 2);
  CHECK(r.reductions == 0);
  CHECK(r.task_end_ms == Approx(32 * fetch_ms(1e9) + 2 * (4 + 8)));
  // Just under the limit the next module's gather runs beside the compute: only the first waits.
  w.unit_parameters = 1.99e9;
  const Zero3Run prefetched = run_stage(w, 2, ms(4), ms(8), ms(5), ms(3));
  CHECK(prefetched.task_end_ms == Approx(32 * fetch_ms(1e9) + 0.5 * 2));
}

TEST_CASE("DeepSpeed 2021: each module regathers for its backward past the reuse distance") {
  // Modules of 1/4 and 3/4 of a 1.2e9-parameter layer, full recomputation: between the first
  // module's recomputed forward and its backward run the second's twice (1.8e9 parameters, past
  // 1e9): it is gathered a third time; the second is used right away again and stays gathered.
  Zero3Work w = work_of(2);
  w.unit_gather_bytes = 2.4e9;
  w.unit_gradient_bytes = 2.4e9;
  w.unit_parameters = 1.2e9;
  make_fetch_synchronous(&w, {0.25, 0.75});
  w.recompute = ms(2);
  const Zero3Run r = run_stage(w, 1, ms(2), ms(6), ms(1), ms(1));
  CHECK(r.gathered_bytes == Approx(2 * (2.4e9 + 2.4e9 + 0.25 * 2.4e9)));
  CHECK(r.gathers == 2 * (2 + 2 + 1));
  CHECK(r.reduced_bytes == Approx(2 * 2.4e9));
  CHECK(r.reductions == 2 * 2);
}

TEST_CASE("ZeRO-3: a faster network never makes the step slower") {
  // Prefetching (FSDP2-like) and synchronizing (DeepSpeed 2021, 0.4 ms fetch floor) stages over
  // network times from far below to far above their compute.
  for (bool synchronize : {false, true}) {
    Zero3Work w = synchronize ? synchronous_work(4, 1e7, 2e7) : work_of(4);
    double previous = 0;
    for (double network : {50.0, 10.0, 3.0, 1.0, 0.3, 0.01}) {
      const Zero3Run r = run_stage(w, 2, ms(4), ms(8), ms(network), ms(network));
      if (previous > 0) CHECK(r.drained_ms <= previous + 1e-9);
      previous = r.drained_ms;
    }
  }
}

TEST_CASE("hybrid sharding: each reduce-scatter's shard all-reduced across the replicas") {
  // 4 layers gathered and reduced within groups of 8 ranks, 2 groups: every 2 GB reduce-scatter
  // leaves each rank 2 GB / 8, all-reduced across the 2 groups; gathers stay within a group.
  Zero3Work w = work_of(4);
  w.replicas = 2;
  w.shard_ranks = 8;
  double replicated = 0;
  const auto tasks = stage_schedule(schema::ONE_F_ONE_B, 1, 1, 1, 0);
  const Calls calls = stage_calls(w, tasks, &replicated);
  CHECK(replicated == Approx(4 * 2e9 / 8));
  int gathers = 0, reduce_scatters = 0, all_reduces = 0;
  for (const auto& [op, group, bytes] : calls) {
    if (op == CollectiveOp::kAllReduce) {
      ++all_reduces;
      CHECK(group == DataParallelGroup::kReplicas);
      CHECK(bytes == Approx(2e9 / 8));
    } else {
      ++(op == CollectiveOp::kAllGather ? gathers : reduce_scatters);
      CHECK(group == DataParallelGroup::kShard);
    }
  }
  CHECK(gathers == 8);
  CHECK(reduce_scatters == 4);
  CHECK(all_reduces == 4);
}

TEST_CASE("Hybrid-FSDP: the shards and the experts reduce-scattered across in the last backward") {
  // FSDP2's units, 4 layers of 1 GB dense weights (2 GB of gradients) within groups of 8 ranks, 2
  // groups, and 6 GB of expert gradients a layer held whole in each group (nothing gathered), 3
  // micro-batches of 1F1B: every backward reduce-scatters each layer's dense share within its
  // group; only the step's last backward goes on across the groups, each rank's 2 GB / 8 shard
  // reduce-scattered (not all-reduced) among the ranks holding it, beside the experts' 6 GB over
  // their expert data-parallel group.
  Zero3Work w = work_of(4);
  make_fsdp2(&w);
  w.replicas = 2;
  w.shard_ranks = 8;
  w.optimizer_across_replicas = true;
  w.unit_expert_gradient_bytes = 6e9;
  double replicated = 0;
  const auto tasks = stage_schedule(schema::ONE_F_ONE_B, 1, 1, 3, 0);
  const Calls calls = stage_calls(w, tasks, &replicated);
  using Op = CollectiveOp;
  using G = DataParallelGroup;
  CHECK(count(calls, Op::kAllGather, G::kShard) == std::pair{2 * 4 * 3, 1e9 * 2 * 4 * 3});
  CHECK(count(calls, Op::kReduceScatter, G::kShard) == std::pair{4 * 3, 2e9 * 4 * 3});
  CHECK(count(calls, Op::kReduceScatter, G::kReplicas) == std::pair{4, 4 * 2e9 / 8});
  CHECK(count(calls, Op::kReduceScatter, G::kExperts) == std::pair{4, 4 * 6e9});
  CHECK(count(calls, Op::kAllReduce, G::kReplicas).first == 0);
  CHECK(count(calls, Op::kAllGather, G::kExperts).first == 0);
  CHECK(replicated == Approx(4 * 2e9 / 8));
  // The collectives across groups come after the two earlier micro-batches' backwards: none
  // before the last backward's first reduce-scatter within a group.
  const auto first_across = std::find_if(calls.begin(), calls.end(), [](const auto& c) {
    return std::get<1>(c) == G::kReplicas || std::get<1>(c) == G::kExperts;
  });
  CHECK(std::count_if(calls.begin(), first_across, [](const auto& c) {
          return std::get<0>(c) == Op::kReduceScatter;
        }) == 4 * 2 + 1);
}

// A single stage over 8 x `nodes` GPUs (DGX A100 nodes by default) whose layers are gathered over
// the network. `shard` ranks per hybrid-sharding group (all of them: plain ZeRO-3).
double zero3_step_ms(double unit_gather_bytes, int shard = 16,
                     const std::string& instance = "onprem.dgx-a100-80gb", int nodes = 2) {
  auto t = testing::shipped_cluster(instance, nodes);
  PipelinePlan plan;
  plan.data_parallel = 8 * nodes;
  plan.data_parallel_shard = shard;
  plan.micro_batches = 2;
  StageWork w{ms(1), ms(2), Picoseconds(0)};
  w.zero3 = work_of(8);
  w.zero3.unit_gather_bytes = unit_gather_bytes;
  w.zero3.unit_gradient_bytes = unit_gather_bytes;
  w.zero3.replicas = plan.data_parallel / shard;
  w.zero3.shard_ranks = shard;
  plan.work = {w};
  return simulate_pipeline(plan, *t).step.seconds() * 1e3;
}

TEST_CASE("ZeRO-3 on the network: twice the bytes per bandwidth, about twice the step") {
  // 8 layers x 2 passes x 2 micro-batches of 4 GB gathers over 16 GPUs dwarf 6 ms of compute:
  // the step is communication-bound, so doubling the bytes (halving the bandwidth) nearly
  // doubles it, and the step is at least the gathers' ring time.
  const double base = zero3_step_ms(4e9);
  const double doubled = zero3_step_ms(8e9);
  CHECK(doubled / base == Approx(2).epsilon(0.05));
  auto t = testing::shipped_cluster("onprem.dgx-a100-80gb", 2);
  const Picoseconds one_gather =
      collective_time(*t, {CollectiveOp::kAllGather, testing::all_gpus(*t), 4e9});
  CHECK(base >= 32 * one_gather.seconds() * 1e3);
}

TEST_CASE("hybrid sharding inside each node: gathers on NVLink, only shards cross the network") {
  // 2 DGX A100 nodes, groups of 8 (one node): the 4 GB gathers and reduce-scatters stay on
  // NVLink and only 4 GB / 8 per rank is all-reduced between the nodes, so the
  // communication-bound step is faster than sharding over all 16 (each node then moves half of
  // every buffer over its NICs); one group of 16 is plain ZeRO-3, to the picosecond.
  const double full = zero3_step_ms(4e9);
  const double hybrid = zero3_step_ms(4e9, 8);
  CHECK(hybrid < 0.95 * full);
  CHECK(hybrid > 0.5 * full);
  CHECK(zero3_step_ms(4e9, 16) == full);
}

TEST_CASE("hybrid sharding: more bandwidth for the shard groups never makes the step slower") {
  // 4 nodes of 8 A100 80GB, groups of 1, 2 and 4 nodes (8, 16, 32 ranks), on the same GPUs and
  // work with 64 Gbit/s Ethernet, 400 Gbit/s EFA and 1600 Gbit/s InfiniBand between the nodes.
  for (int shard : {8, 16, 32}) {
    INFO("shard " << shard);
    double previous = 0;
    for (const char* instance :
         {"aliyun.ecs.ebmgn7e.32xlarge", "aws.p4de.24xlarge", "onprem.dgx-a100-80gb"}) {
      INFO(instance);
      const double step = zero3_step_ms(1e9, shard, instance, 4);
      if (previous > 0) CHECK(step <= previous);
      previous = step;
    }
  }
}

TEST_CASE("ZeRO-3 places a stage's expert all-to-alls over its layers as whole layers allow") {
  // One chunk of two layers (units) holding three expert layers: unit 0 holds expert layer 0 and
  // unit 1 layers 1 and 2, each in half of its 1 ms forward. An expert layer's 1 ms forward runs a
  // 0.2 ms dispatch at 0.1 ms and a 0.2 ms combine at 0.6 ms: in unit 0 at 0.1 and 0.6 ms, in unit
  // 1 scaled to the halves at 0.05, 0.3, 0.55 and 0.8 ms. Each takes 0.1 ms more than alone (the
  // network beside it): the compute between them stays as it was, the forward ends 0.6 ms later.
  Zero3Work work = work_of(2);
  work.expert_all_to_alls.layers = 3;
  work.expert_all_to_alls.forward = ms(1);
  work.expert_all_to_alls.forward_spans = {{ms(0.1), ms(0.2), "dispatch", 1e6},
                                           {ms(0.6), ms(0.2), "combine", 1e6}};
  Simulation sim;
  const auto tasks = stage_schedule(schema::ONE_F_ONE_B, 1, 1, 1, 0);
  CollectiveSmContention compute;
  std::vector<double> starts;
  std::unique_ptr<Zero3Stage> stage;
  stage = std::make_unique<Zero3Stage>(
      work, tasks, ms(2), ms(4), &sim,
      [&](CollectiveOp, DataParallelGroup, double, std::function<void()> done) {
        sim.call_after(Picoseconds(0), std::move(done));
      },
      &compute, [&](const TaskSpan& span) {
        starts.push_back(sim.now().seconds() * 1e3);
        sim.call_after(span.length + ms(0.1), [&] { stage->all_to_all_done(); });
      });
  double forward_end = 0, backward_end = 0;
  stage->run_task(0, [&] {
    forward_end = sim.now().seconds() * 1e3;
    stage->run_task(1, [&] { backward_end = sim.now().seconds() * 1e3; });
  });
  sim.run();
  const std::vector<double> expected{0.1, 0.7, 1.25, 1.6, 1.95, 2.3};
  REQUIRE(starts.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) CHECK(starts[i] == Approx(expected[i]));
  CHECK(forward_end == Approx(2.6));
  CHECK(backward_end == Approx(6.6));  // the backward has none (no backward spans)
}

}  // namespace
}  // namespace clustersim
