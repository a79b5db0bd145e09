// A pipeline across a mix's pools: stage times per pool, the layer split, the step on the engine.
#include "sim/parallel/pipeline_across_pools.h"

#include <algorithm>

#include "sim/parallel/pipeline_layout.h"
#include "sim/parallel/transformer_stages.h"
#include "sim/util/check.h"
#include "sim/util/even_share.h"

namespace clustersim {
namespace {

namespace s = schema;

s::Parallelism across_pools(const s::Parallelism& parallelism) {
  s::Parallelism p = parallelism;
  p.set_rank_order(s::TP_DP_PP);
  return p;
}

int pool_model_chunks(const s::Parallelism& p) {
  return p.schedule() == s::INTERLEAVED_ONE_F_ONE_B ? std::max(1, p.virtual_stages()) : 1;
}

// One micro-batch's forward and backward through every model chunk of stage `stage` of `plan`.
double stage_seconds(const PipelinePlan& plan, int stage) {
  Picoseconds total(0);
  for (int c = 0; c < plan.chunks; ++c) {
    total += plan.chunk_forward(stage, c) + plan.chunk_backward(stage, c);
  }
  return total.seconds();
}

// Stage `stage` with `n` of the `layers`, the others' spread evenly (at least one each).
s::Parallelism stage_holding(const s::Parallelism& p, int layers, int stage, int n) {
  std::vector<int> totals;
  const int others = p.pipeline_parallel() - 1;
  for (int r = 0, given = 0; r < p.pipeline_parallel(); ++r) {
    if (r == stage) {
      totals.push_back(n);
      continue;
    }
    totals.push_back(even_share(layers - n, others, given));
    ++given;
  }
  return with_stage_totals(p, totals);
}

// The most layers stage `stage` can hold on a GPU of `capacity_bytes` (0: not even one).
int max_stage_layers(const s::Model& model, const s::TrainingJob& job, const s::Parallelism& p,
                     int stage, double capacity_bytes, const RuntimeMemory& runtime) {
  const int layers = model.transformer().num_layers();
  const auto fits = [&](int n) {
    return estimate_stage_memory(model, job, stage_holding(p, layers, stage, n), stage,
                                 capacity_bytes, runtime)
        .fits();
  };
  int low = 0, high = layers - (p.pipeline_parallel() - 1);  // none fits; can all?
  if (fits(high)) return high;
  while (high - low > 1) {
    const int middle = (low + high) / 2;
    (fits(middle) ? low : high) = middle;
  }
  return low;
}

// The pool index of each stage.
std::vector<int> stage_pools(const std::vector<StagePool>& pools) {
  std::vector<int> of;
  for (size_t i = 0; i < pools.size(); ++i)
    of.insert(of.end(), pools[i].stages, static_cast<int>(i));
  return of;
}

}  // namespace

s::Parallelism with_stage_totals(const s::Parallelism& parallelism, const std::vector<int>& totals) {
  s::Parallelism p = parallelism;
  p.clear_stage_layers();
  const int v = pool_model_chunks(p);
  const int pp = static_cast<int>(totals.size());
  CLUSTERSIM_CHECK(pp == p.pipeline_parallel(), "one layer count per stage");
  if (v == 1) {
    for (int n : totals) p.add_stage_layers(n);
    return p;
  }
  // Virtual-stage order: chunk c of stage r is the (c x pp + r)-th count.
  for (int c = 0; c < v; ++c) {
    for (int r = 0; r < pp; ++r) p.add_stage_layers(even_share(totals[r], v, c));
  }
  return p;
}

s::Parallelism with_even_stage_layers(int layers, const s::Parallelism& parallelism) {
  s::Parallelism p = parallelism;
  p.clear_stage_layers();
  if (pool_model_chunks(p) == 1) return p;
  const int pp = p.pipeline_parallel();
  std::vector<int> totals;
  for (int r = 0; r < pp; ++r) totals.push_back(even_share(layers, pp, r));
  return with_stage_totals(p, totals);
}

std::vector<StageSpeed> stage_speeds(const s::Model& model, const s::TrainingJob& job,
                                     const s::Parallelism& parallelism,
                                     const std::vector<StagePool>& pools,
                                     const RuntimeMemory& runtime) {
  const s::Parallelism even =
      with_even_stage_layers(model.transformer().num_layers(), across_pools(parallelism));
  const int pp = even.pipeline_parallel();
  CLUSTERSIM_CHECK(pp >= 2, "a pipeline across pools has two or more stages");
  const PipelineLayout layout = pipeline_layout(model.transformer().num_layers(), even);
  const std::vector<int> pool_of = stage_pools(pools);
  CLUSTERSIM_CHECK(static_cast<int>(pool_of.size()) == pp, "the pools hold every stage");
  // A stage holding nothing but layers times them: the second if there are three or more.
  const int plain = pp >= 3 ? 1 : 0;
  std::vector<StageSpeed> speeds(pp);
  for (size_t i = 0; i < pools.size(); ++i) {
    const PipelinePlan plan =
        transformer_plan(model, job, even, *pools[i].topology, *pools[i].compute).plan;
    // The pool's GPU decides whether per-tensor FP8 weights keep a transpose (RuntimeMemory).
    RuntimeMemory pool_runtime = runtime;
    pool_runtime.fp8_gemm_any_layout = pools[i].compute->fp8_gemm_any_layout();
    const double layer_s = stage_seconds(plan, plain) / layout.stage_layers(plain);
    for (int r = 0; r < pp; ++r) {
      if (pool_of[r] != static_cast<int>(i)) continue;
      speeds[r].layer_s = layer_s;
      if (r == pp - 1) {
        speeds[r].extra_s =
            std::max(0.0, stage_seconds(plan, r) - layer_s * layout.stage_layers(r));
      }
      speeds[r].max_layers =
          max_stage_layers(model, job, even, r, pools[i].capacity_bytes, pool_runtime);
    }
  }
  return speeds;
}

std::optional<s::Parallelism> with_stage_layers(const s::Model& model, const s::TrainingJob& job,
                                                const s::Parallelism& parallelism,
                                                const std::vector<StagePool>& pools,
                                                const RuntimeMemory& runtime) {
  s::Parallelism p = across_pools(parallelism);
  if (p.stage_layers_size() > 0) return p;
  const int v = pool_model_chunks(p);
  const std::optional<std::vector<int>> split = split_layers_by_speed(
      model.transformer().num_layers(), stage_speeds(model, job, p, pools, runtime), v);
  if (!split) return std::nullopt;
  for (int n : *split) p.add_stage_layers(n);  // per stage, or per chunk when interleaved
  return p;
}

PipelineAcrossPoolsResult simulate_pipeline_across_pools(
    const s::Model& model, const s::TrainingJob& job, const s::Parallelism& parallelism,
    const std::vector<StagePool>& pools, const Topology& joined, Timeline* timeline) {
  const s::Parallelism p = across_pools(parallelism);
  CLUSTERSIM_CHECK(p.stage_layers_size() == p.pipeline_parallel() ||
                       p.stage_layers_size() == p.pipeline_parallel() * pool_model_chunks(p),
                   "stage layers are resolved");
  const std::vector<int> pool_of = stage_pools(pools);
  // Every stage's work timed on its own pool.
  TransformerPlan all;
  std::vector<std::optional<LinkKind>> crossings;  // each pool's tensor_crossing_link
  double peak_flops = 0;
  const double stage_gpus =
      static_cast<double>(p.tensor_parallel()) * p.context_parallel() * p.data_parallel();
  for (size_t i = 0; i < pools.size(); ++i) {
    const TransformerPlan plan =
        transformer_plan(model, job, p, *pools[i].topology, *pools[i].compute);
    if (i == 0) all = plan;
    crossings.push_back(plan.tensor_crossing_link);
    for (int r = 0; r < p.pipeline_parallel(); ++r) {
      if (pool_of[r] != static_cast<int>(i)) continue;
      all.plan.work[r] = plan.plan.work[r];
      all.compute_s[r] = plan.compute_s[r];
      all.tensor_comm_s[r] = plan.tensor_comm_s[r];
      all.context_comm_s[r] = plan.context_comm_s[r];
      all.expert_comm_s[r] = plan.expert_comm_s[r];
      all.expert_compute_s[r] = plan.expert_compute_s[r];
      all.amax_comm_s[r] = plan.amax_comm_s[r];
    }
    peak_flops += pools[i].compute->peak_flops() * stage_gpus * pools[i].stages;
  }
  const PipelineTimeline run = simulate_pipeline(all.plan, joined, timeline);
  // Each pool's groups (its stages alike) on its own instances, their data-parallel collectives
  // as its stages ran them; one link for a part only where every pool's agree.
  for (size_t i = 0; i < pools.size(); ++i) {
    DataParallelAlgorithms ran;
    for (int s = 0; s < p.pipeline_parallel(); ++s) {
      if (pool_of[s] == static_cast<int>(i)) ran |= run.stages[s].data_parallel_algorithms;
    }
    const PartLinks links = part_links(*pools[i].topology, all.plan, crossings[i], ran);
    all.part_links = i == 0 ? links : agreeing(all.part_links, links);
  }
  PipelineAcrossPoolsResult r;
  r.step = pipeline_breakdown(run, all);
  set_transformer_rates(model, job, p, all.recomputed_layers, peak_flops, &r.step);
  const PipelineLayout layout = pipeline_layout(model.transformer().num_layers(), p);
  for (int s = 0; s < p.pipeline_parallel(); ++s) r.stage_layers.push_back(layout.stage_layers(s));
  std::vector<double> pool_busy(pools.size(), 0);
  for (int s = 0; s < p.pipeline_parallel(); ++s) {
    r.stage_busy_s.push_back(run.stages[s].busy.seconds());
    if (r.stage_busy_s[s] > r.stage_busy_s[r.limiting_stage]) r.limiting_stage = s;
    pool_busy[pool_of[s]] = std::max(pool_busy[pool_of[s]], r.stage_busy_s[s]);
  }
  r.limiting_pool = pool_of[r.limiting_stage];
  for (size_t i = 0; i < pools.size(); ++i) {
    r.wait_s = std::max(r.wait_s, r.stage_busy_s[r.limiting_stage] - pool_busy[i]);
  }
  return r;
}

}  // namespace clustersim
