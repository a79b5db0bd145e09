// The step of a mix: balanced micro-batches, each pool's pipeline, the all-reduce between pools on
// the engine; under ZeRO-3 even micro-batches, each pool's pipeline on the joined pools, no
// all-reduce after.
#include "sim/parallel/pool_step.h"

#include <algorithm>

#include "sim/net/collective.h"
#include "sim/parallel/pool_step_trace.h"
#include "sim/parallel/transformer_stages.h"
#include "sim/util/check.h"

namespace clustersim {
namespace {

namespace s = schema;

// The busiest replica's micro-batches when a pool of `replicas` takes `count`.
int64_t per_replica(int64_t count, int replicas) { return (count + replicas - 1) / replicas; }

bool zero3(const s::Parallelism& p) { return p.zero_stage() == 3; }

// The topology a pool's pipeline runs on: its own, or under ZeRO-3 the joined pools.
const Topology& pool_topology(const s::Parallelism& p, const PoolRun& pool) {
  return zero3(p) ? *pool.joined : *pool.topology;
}

// The plan of one pool whose replicas take `micro_batches` each: over its own replicas, or
// under ZeRO-3 over every pool's.
TransformerPlan pool_plan(const s::Model& model, const s::TrainingJob& job,
                          const s::Parallelism& parallelism, const PoolRun& pool,
                          int micro_batches) {
  s::Parallelism p = parallelism;
  if (!zero3(p)) p.set_data_parallel(pool.data_parallel);
  s::TrainingJob share = job;
  share.set_global_batch_size(int64_t{micro_batches} * p.micro_batch_size() * p.data_parallel());
  return transformer_plan(model, share, p, pool_topology(p, pool), *pool.compute);
}

// Each pool's micro-batches from `dealt`, each pool's count of `units` micro-batches at a time
// (interleaved: groups of one per stage).
struct MicroBatchSplit {
  std::vector<int> busiest;     // its busiest replica's
  std::vector<int64_t> pools;  // all its replicas'
  MicroBatchSplit(const std::vector<int64_t>& dealt, const std::vector<int>& replicas, int units) {
    for (size_t i = 0; i < dealt.size(); ++i) {
      busiest.push_back(static_cast<int>(per_replica(dealt[i], replicas[i]) * units));
      pools.push_back(dealt[i] * units);
    }
  }
};

// Micro-batches of each pool: the same per replica for all under ZeRO-3 (pool_step.h); else
// balanced by speed, when interleaved a group of one per stage at a time (a group's passes PP
// micro-batches', the fill (PP - 1) / v micro-batches' or (PP - 1) / (v PP) groups').
MicroBatchSplit split_micro_batches(int64_t total, const s::Parallelism& p,
                                    const std::vector<int>& replicas,
                                    const std::vector<double>& micro_batch_s) {
  const int pp = p.pipeline_parallel();
  if (zero3(p)) {
    int all = 0;
    for (int n : replicas) all += n;
    std::vector<int64_t> dealt;
    for (int n : replicas) dealt.push_back(total / all * n);
    return {dealt, replicas, 1};
  }
  if (p.schedule() != s::INTERLEAVED_ONE_F_ONE_B) {
    return {deal_micro_batches(total, replicas, micro_batch_s, pp - 1), replicas, 1};
  }
  std::vector<double> group_s;
  for (double t : micro_batch_s) group_s.push_back(t * pp);
  return {deal_micro_batches(total / pp, replicas, group_s,
                             (pp - 1.0) / (p.virtual_stages() * pp)),
          replicas, pp};
}

// One micro-batch's forward and backward through every chunk of the plan's slowest stage.
double micro_batch_seconds(const PipelinePlan& plan) {
  Picoseconds slowest(0);
  for (int stage = 0; stage < plan.stages; ++stage) {
    Picoseconds total(0);
    for (int chunk = 0; chunk < plan.chunks; ++chunk) {
      total += plan.chunk_forward(stage, chunk) + plan.chunk_backward(stage, chunk);
    }
    slowest = std::max(slowest, total);
  }
  return slowest.seconds();
}

// When a pool's gradients are ready for the all-reduce between pools: every stage's reduced among
// the pool's replicas.
Picoseconds gradients_ready(const PipelineTimeline& timeline) {
  Picoseconds ready(0);
  for (const StageTimeline& stage : timeline.stages) {
    ready = std::max(ready, stage.gradients_reduced);
  }
  return ready;
}

// What a pool runs from `ready` on, each stage its optimizer step and parameter gather: after the
// all-reduce between pools, which needs every stage's gradients, all its stages together, the
// longest setting the pool's end; under ZeRO-3 (no all-reduce between pools) each stage as its own
// gradients are reduced, the pool's pipeline as a whole held back by its wait for the slowest.
Picoseconds after_ready(const PipelineTimeline& timeline, Picoseconds ready, bool zero3) {
  Picoseconds after(0);
  for (const StageTimeline& stage : timeline.stages) {
    after = std::max(after, stage.end - (zero3 ? ready : stage.gradients_reduced));
  }
  return after;
}

}  // namespace

std::vector<int64_t> deal_micro_batches(int64_t total, const std::vector<int>& replicas,
                                        const std::vector<double>& micro_batch_s, double fill) {
  const size_t pools = replicas.size();
  std::vector<int64_t> count(replicas.begin(), replicas.end());
  int64_t dealt = 0;
  for (int64_t c : count) dealt += c;
  CLUSTERSIM_CHECK(dealt <= total, "fewer micro-batches than replicas");
  for (; dealt < total; ++dealt) {
    size_t best = 0;
    double best_end = 0;
    for (size_t i = 0; i < pools; ++i) {
      const double end =
          (static_cast<double>(per_replica(count[i] + 1, replicas[i])) + fill) * micro_batch_s[i];
      if (i == 0 || end < best_end) {
        best = i;
        best_end = end;
      }
    }
    ++count[best];
  }
  return count;
}

std::vector<int> balance_micro_batches(int64_t total, const std::vector<int>& replicas,
                                       const std::vector<double>& micro_batch_s, double fill) {
  return MicroBatchSplit(deal_micro_batches(total, replicas, micro_batch_s, fill), replicas, 1)
      .busiest;
}

PoolStepResult simulate_pool_step(const s::Model& model, const s::TrainingJob& job,
                                  const s::Parallelism& p, const std::vector<PoolRun>& pools,
                                  const Topology& inter_pool,
                                  std::optional<std::vector<int>> micro_batches,
                                  Timeline* timeline) {
  CLUSTERSIM_CHECK(pools.size() >= 2 && inter_pool.gpu_count() == static_cast<int>(pools.size()),
                   "a mix needs two or more pools and one inter-pool endpoint each");
  for (const PoolRun& pool : pools) {
    CLUSTERSIM_CHECK(!zero3(p) || pool.joined != nullptr,
                     "ZeRO-3 over data-parallel pools runs each pool on the joined pools");
  }
  PoolStepResult r;
  std::vector<int> replicas;
  // An interleaved plan's schedule takes a group of one micro-batch per stage.
  const int timed = p.schedule() == s::INTERLEAVED_ONE_F_ONE_B ? p.pipeline_parallel() : 1;
  for (const PoolRun& pool : pools) {
    replicas.push_back(pool.data_parallel);
    r.micro_batch_s.push_back(micro_batch_seconds(pool_plan(model, job, p, pool, timed).plan));
  }
  const int64_t total = job.global_batch_size() / p.micro_batch_size();
  if (micro_batches) {
    r.micro_batches = *micro_batches;
    for (size_t i = 0; i < pools.size(); ++i) {
      r.pool_micro_batches.push_back(int64_t{r.micro_batches[i]} * replicas[i]);
    }
  } else {
    MicroBatchSplit split = split_micro_batches(total, p, replicas, r.micro_batch_s);
    r.micro_batches = std::move(split.busiest);
    r.pool_micro_batches = std::move(split.pools);
  }
  // Each pool's pipeline with its reduction among its replicas, on its own network (under ZeRO-3
  // on the joined pools, over every pool's replicas).
  std::vector<StepResult> parts;
  std::vector<Picoseconds> ready, after;
  // One replica's gradients, all its GPUs together: the dense ones split over tensor parallelism,
  // the routed experts' over expert tensor x expert parallelism inside each pool.
  double gradient_bytes = 0;
  double recomputed_layers = 0, peak_flops = 0;
  std::vector<PoolTrace> traces(timeline ? pools.size() : 0);
  for (size_t i = 0; i < pools.size(); ++i) {
    TransformerPlan plan = pool_plan(model, job, p, pools[i], r.micro_batches[i]);
    const Topology& topology = pool_topology(p, pools[i]);
    const PipelineTimeline run =
        simulate_pipeline(plan.plan, topology, timeline ? &traces[i].pipeline : nullptr);
    plan.part_links = part_links(topology, plan.plan, plan.tensor_crossing_link,
                                 run.data_parallel_algorithms());
    parts.push_back(pipeline_breakdown(run, plan));
    ready.push_back(gradients_ready(run));
    after.push_back(after_ready(run, ready.back(), zero3(p)));
    r.ready_s.push_back(ready.back().seconds());
    if (timeline) {
      PoolTrace& trace = traces[i];
      trace.instance = pools[i].instance;
      trace.replicas = replicas[i];
      trace.micro_batches = r.micro_batches[i];
      trace.pool_micro_batches = r.pool_micro_batches[i];
      for (const StageTimeline& stage : run.stages) {
        trace.gradients_reduced.push_back(stage.gradients_reduced);
      }
    }
    if (i == 0 && !zero3(p)) {
      const ExpertLayout& experts = plan.plan.experts;
      for (const StageWork& w : plan.plan.work) {
        gradient_bytes += w.gradient_bytes * p.tensor_parallel() +
                          w.expert_gradient_bytes * experts.expert_tensor_parallel *
                              experts.expert_parallel;
      }
    }
    if (i == 0) recomputed_layers = plan.recomputed_layers;
    peak_flops += pools[i].compute->peak_flops() * p.tensor_parallel() * p.context_parallel() *
                  p.pipeline_parallel() * pools[i].data_parallel;
  }
  // On the engine: the all-reduce between pools starts once every pool has its sum (none under
  // ZeRO-3, whose reduce-scatters spanned the pools).
  Simulation sim;
  Network network(&sim, &inter_pool);
  std::vector<int> endpoints;
  for (size_t i = 0; i < pools.size(); ++i) endpoints.push_back(static_cast<int>(i));
  Collective reduce{CollectiveOp::kAllReduce, endpoints, gradient_bytes,
                    CollectiveAlgorithm::kAuto};
  reduce.algorithm = choose_algorithm(reduce, inter_pool);
  size_t arrived = 0;
  Picoseconds all_ready(0), reduced(0), end(0);
  const auto step_optimizers = [&] {
    reduced = sim.now();
    for (Picoseconds tail : after) {
      sim.call_after(tail, [&] { end = std::max(end, sim.now()); });
    }
  };
  for (size_t i = 0; i < pools.size(); ++i) {
    sim.call_at(ready[i], [&] {
      if (++arrived < pools.size()) return;
      all_ready = sim.now();
      if (zero3(p)) return step_optimizers();
      start_collective(&network, reduce, step_optimizers);
    });
  }
  sim.run();
  r.limiting_pool = static_cast<int>(std::max_element(ready.begin(), ready.end()) - ready.begin());
  for (size_t i = 0; i < pools.size(); ++i) {
    r.wait_s = std::max(r.wait_s, (all_ready - ready[i]).seconds());
  }
  r.inter_pool_s = (reduced - all_ready).seconds();
  StepResult& step = r.step;
  step = parts[r.limiting_pool];
  step.step_s = end.seconds();
  step.data_comm_s += r.inter_pool_s;
  // The all-reduce between pools crosses the scale-out network: the data-parallel part binds on
  // one link only where the pool's own groups do too (part_links.h).
  if (r.inter_pool_s > 0 && step.part_links.data != LinkKind::kNetwork) {
    step.part_links.data.reset();
  }
  step.optimizer_s += std::max(0.0, (end - reduced - after[r.limiting_pool]).seconds());
  set_transformer_rates(model, job, p, recomputed_layers, peak_flops, &step);
  if (timeline) {
    // Each stage's optimizer step where the step model starts it (after_ready).
    for (size_t i = 0; i < traces.size(); ++i) {
      for (Picoseconds gradients : traces[i].gradients_reduced) {
        traces[i].optimizer_start.push_back(zero3(p) ? gradients + (reduced - ready[i]) : reduced);
      }
    }
    draw_pool_step(traces, ready, r.limiting_pool, reduced, timeline);
  }
  return r;
}

}  // namespace clustersim
