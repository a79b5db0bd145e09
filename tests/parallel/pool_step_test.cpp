// Tests of a mix's step (sim/parallel/pool_step.h): the balanced split of micro-batches against
// its closed form, the engine's step against the sum of its parts, unbalanced splits, a
// mixture-of-experts model's experts' gradients between pools, and interleaved and ZeRO-3 pools:
// against the plain cluster's, a slower pool, and ZeRO-3's bytes between the pools.
#include "sim/parallel/pool_step.h"

#include <catch2/catch.hpp>
#include <set>

#include "sim/net/collective.h"
#include "sim/net/inter_pool_topology.h"
#include "sim/net/network.h"
#include "sim/parallel/pipeline_run.h"
#include "sim/parallel/transformer_stages.h"
#include "sim/sweep/configuration_space.h"
#include "sim/util/units.h"
#include "sim/workload/parameter_count.h"
#include "tests/testing/cluster.h"
#include "tests/testing/parse_message.h"

namespace clustersim {
namespace {

namespace s = schema;

TEST_CASE("balanced micro-batches split the batch in proportion to the replicas' speeds") {
  // Speeds 1/t: a replica of 1 s and one of 3 s per micro-batch share 8 micro-batches 6 : 2;
  // the step is the balanced M / (sum of replicas / t) = 8 / (1 + 1/3) = 6 s.
  CHECK(balance_micro_batches(8, {1, 1}, {1.0, 3.0}, 0) == std::vector<int>{6, 2});
  // Two replicas of 1 s and one of 2 s: 10 / (2 / 1 + 1 / 2) = 4 s, so 4 each and 2.
  CHECK(balance_micro_batches(10, {2, 1}, {1.0, 2.0}, 0) == std::vector<int>{4, 2});
  // Equal speeds: an even split; every replica gets at least one.
  CHECK(balance_micro_batches(12, {1, 2}, {1.0, 1.0}, 0) == std::vector<int>{4, 4});
  CHECK(balance_micro_batches(3, {1, 2}, {1.0, 100.0}, 0) == std::vector<int>{1, 1});
  // A pipeline's fill (stages - 1 micro-batch times) counts: with 3 stages the replicas end at
  // (m + 2) t, so 7 : 1 ends at 9 and 9, where the 6 : 2 of no fill would end at 8 and 12.
  CHECK(balance_micro_batches(8, {1, 1}, {1.0, 3.0}, 2) == std::vector<int>{7, 1});
}

TEST_CASE("each pool's dealt micro-batches add up to the batch, its busiest replica's rounded up") {
  // Two replicas of 1 s and one of 2 s share 10 as 8 and 2 (4 a replica and 2, as above).
  CHECK(deal_micro_batches(10, {2, 1}, {1.0, 2.0}, 0) == std::vector<int64_t>{8, 2});
  // 8: the faster pool's 7 do not split over its 2 replicas, the busiest takes 4.
  CHECK(deal_micro_batches(8, {2, 1}, {1.0, 2.0}, 0) == std::vector<int64_t>{7, 1});
  CHECK(balance_micro_batches(8, {2, 1}, {1.0, 2.0}, 0) == std::vector<int>{4, 1});
}

// A 7B model, TP 8, on one p5 node (H100) and one p4d node (A100): one replica each.
struct TwoPools {
  std::unique_ptr<Topology> p5 = testing::shipped_cluster("aws.p5.48xlarge", 1);
  std::unique_ptr<Topology> p4d = testing::shipped_cluster("aws.p4d.24xlarge", 1);
  const Catalog& catalog = testing::shipped_catalog();
  const s::Model& model = *catalog.models().find("llama2-7b")->value;
  const s::Runtime& runtime = *catalog.runtimes().find("default")->value;
  ComputeModel h100{catalog.gpu_of(*catalog.instances().find("aws.p5.48xlarge")->value), s::BF16,
                    runtime, KernelSetting::kTrainingStep};
  ComputeModel a100{catalog.gpu_of(*catalog.instances().find("aws.p4d.24xlarge")->value), s::BF16,
                    runtime, KernelSetting::kTrainingStep};
  s::TrainingJob job;
  s::Parallelism p;
  InterPoolLinks links;
  std::unique_ptr<Topology> between;

  TwoPools() {
    job.set_global_batch_size(64);
    job.set_sequence_length(4096);
    job.set_precision(s::BF16);
    job.set_optimizer(s::ADAM);
    job.set_steps(1);
    for (auto [set, value] : {std::pair{&s::Parallelism::set_tensor_parallel, 8},
                              {&s::Parallelism::set_pipeline_parallel, 1},
                              {&s::Parallelism::set_data_parallel, 2},
                              {&s::Parallelism::set_micro_batch_size, 1},
                              {&s::Parallelism::set_virtual_stages, 1},
                              {&s::Parallelism::set_zero_stage, 0}}) {
      (p.*set)(value);
    }
    p.set_context_parallel(1);
    p.set_schedule(s::ONE_F_ONE_B);
    p.set_recompute(s::RECOMPUTE_SELECTIVE);
    p.set_rank_order(s::TP_PP_DP);
    p.set_context_parallel_comm(s::P2P);
    p.set_sequence_parallel(true);
    p.set_distributed_optimizer(true);
    p.set_overlap_gradient_reduce(true);
    p.set_overlap_parameter_gather(true);
    p.set_overlap_pipeline_communication(true);
    links = inter_pool_links({{catalog.instances().find("aws.p5.48xlarge")->value, 1},
                              {catalog.instances().find("aws.p4d.24xlarge")->value, 1}},
                             s::InterPoolNetwork(), nullptr, catalog);
    REQUIRE(links.error.empty());
    between = inter_pool_topology(links);
  }
  PoolStepResult run(std::optional<std::vector<int>> split = std::nullopt) const {
    return simulate_pool_step(model, job, p, {{p5.get(), &h100, 1}, {p4d.get(), &a100, 1}},
                              *between, split);
  }
};

TEST_CASE(
    "two data-parallel pools: the engine's step is the balanced compute, then the "
    "all-reduce between pools, then the optimizer") {
  const TwoPools pools;
  const PoolStepResult r = pools.run();
  const double a = r.micro_batch_s[0], b = r.micro_batch_s[1];
  REQUIRE(a < b);  // the H100 replica is faster
  // Balanced closed form: T = M / (1 / a + 1 / b); whole micro-batches end within one of it.
  const double balanced = 64 / (1 / a + 1 / b);
  const double span = std::max(r.micro_batches[0] * a, r.micro_batches[1] * b);
  CHECK(r.micro_batches[0] + r.micro_batches[1] == 64);
  CHECK(r.pool_micro_batches == std::vector<int64_t>{r.micro_batches[0], r.micro_batches[1]});
  CHECK(span >= balanced * (1 - 1e-12));
  CHECK(span < balanced + b);
  // One replica per pool reduces nothing inside it: a pool is ready after its micro-batches.
  for (int i : {0, 1}) {
    CHECK(r.ready_s[i] == Approx(r.micro_batches[i] * r.micro_batch_s[i]).epsilon(1e-9));
  }
  CHECK(r.wait_s == Approx(std::abs(r.ready_s[0] - r.ready_s[1])).margin(1e-9));
  CHECK(r.limiting_pool == (r.ready_s[1] > r.ready_s[0] ? 1 : 0));
  // The all-reduce of all 7B fp32 gradients between two pools: a ring of two moves them once
  // through the slower pool link, S / B (plus the steps' latency).
  const double bytes = 4.0 * 6738415616;  // Llama-2-7B's parameters
  const double slow = std::min(pools.links.bytes_per_s[0], pools.links.bytes_per_s[1]);
  CHECK(r.inter_pool_s >= bytes / slow * 0.98);
  CHECK(r.inter_pool_s <= bytes / slow * 1.05);
  CHECK(r.step.step_s >= std::max(r.ready_s[0], r.ready_s[1]) + r.inter_pool_s);
  const StepResult& t = r.step;
  CHECK(t.compute_s + t.tensor_comm_s + t.context_comm_s + t.bubble_s + t.data_comm_s +
            t.optimizer_s ==
        Approx(t.step_s).epsilon(1e-9));
}

TEST_CASE("giving the slower pool more than its share only makes the step longer") {
  const TwoPools pools;
  const PoolStepResult balanced = pools.run();
  double previous = balanced.step.step_s;
  for (int k = 1; k <= 3; ++k) {
    const std::vector<int> split = {balanced.micro_batches[0] - k, balanced.micro_batches[1] + k};
    const PoolStepResult r = pools.run(split);
    CHECK(r.micro_batches == split);
    CHECK(r.limiting_pool == 1);
    CHECK(r.step.step_s > previous);
    previous = r.step.step_s;
  }
}

TEST_CASE("a MoE model's pools all-reduce every expert's gradients between them, not only dense") {
  // Mixtral-8x7B, TP 1 x EP 8 on the p5 node and on the p4d node: each pool's 8 GPUs hold one
  // expert each of every layer, its replicas every expert; between the pools all 46.7B fp32
  // gradients meet: a ring of two moves them once through the slower pool link, S / B (plus the
  // steps' latency).
  TwoPools pools;
  const s::Model& mixtral = *pools.catalog.models().find("mixtral-8x7b")->value;
  pools.p = testing::parse_message<s::Parallelism>(
      "tensor_parallel: 1 pipeline_parallel: 1 data_parallel: 16 micro_batch_size: 1 "
      "virtual_stages: 1 zero_stage: 0 context_parallel: 1 schedule: ONE_F_ONE_B "
      "recompute: RECOMPUTE_FULL rank_order: TP_PP_DP context_parallel_comm: P2P "
      "distributed_optimizer: true overlap_gradient_reduce: true overlap_parameter_gather: true "
      "overlap_pipeline_communication: true expert_parallel: 8 expert_tensor_parallel: 1");
  const PoolStepResult r = simulate_pool_step(
      mixtral, pools.job, pools.p,
      {{pools.p5.get(), &pools.h100, 8}, {pools.p4d.get(), &pools.a100, 8}}, *pools.between);
  const double bytes =
      4.0 * static_cast<double>(transformer_parameters(mixtral.transformer()).total());
  const double slow = std::min(pools.links.bytes_per_s[0], pools.links.bytes_per_s[1]);
  CHECK(r.inter_pool_s >= bytes / slow * 0.98);
  CHECK(r.inter_pool_s <= bytes / slow * 1.05);
  CHECK(r.micro_batches[0] > r.micro_batches[1]);  // the H100 replicas are faster
}

// Pools of 1 node each of `a` and `b` (instance names), TP 2 x PP 2 layouts of Llama-2-7B: 2
// replicas a pool, 64 micro-batches of 1. Each pool's joined topology (ZeRO-3) puts it first.
struct DataParallelPools {
  const Catalog& catalog = testing::shipped_catalog();
  const s::Model& model = *catalog.models().find("llama2-7b")->value;
  const s::Runtime& runtime = *catalog.runtimes().find("default")->value;
  std::vector<std::string> names;
  std::vector<std::unique_ptr<Topology>> own, joined;
  std::vector<ComputeModel> computes;
  s::TrainingJob job = testing::parse_message<s::TrainingJob>(
      "global_batch_size: 64 sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 1");
  s::Parallelism p = testing::parse_message<s::Parallelism>(
      "tensor_parallel: 2 pipeline_parallel: 2 data_parallel: 4 micro_batch_size: 1 "
      "virtual_stages: 1 zero_stage: 0 context_parallel: 1 schedule: ONE_F_ONE_B "
      "recompute: RECOMPUTE_SELECTIVE rank_order: TP_PP_DP context_parallel_comm: P2P "
      "sequence_parallel: true distributed_optimizer: true overlap_gradient_reduce: true "
      "overlap_parameter_gather: true overlap_pipeline_communication: true");
  InterPoolLinks links;
  std::unique_ptr<Topology> between;

  DataParallelPools(const std::string& a, const std::string& b,
                    const s::InterPoolNetwork& network = s::InterPoolNetwork())
      : names{a, b} {
    std::vector<const s::InstanceType*> types;
    for (const std::string& name : names) {
      types.push_back(catalog.instances().find(name)->value);
      own.push_back(testing::shipped_cluster(name, 1));
      computes.emplace_back(catalog.gpu_of(*types.back()), s::BF16, runtime,
                            KernelSetting::kTrainingStep);
    }
    links = inter_pool_links({{types[0], 1}, {types[1], 1}}, network, nullptr, catalog);
    REQUIRE(links.error.empty());
    between = inter_pool_topology(links);
    for (size_t first : {0, 1}) {
      const size_t second = 1 - first;
      TopologyOrError built =
          build_joined_topology({{types[first], 1, 0, 0, nullptr, std::nullopt},
                                 {types[second], 1, 0, 0, nullptr, std::nullopt}},
                                {links.bytes_per_s[first], links.bytes_per_s[second]}, catalog);
      REQUIRE(built.topology);
      joined.push_back(std::move(built.topology));
    }
  }
  void interleave(int v) {
    p.set_schedule(s::INTERLEAVED_ONE_F_ONE_B);
    p.set_virtual_stages(v);
  }
  void shard() {
    p.set_zero_stage(3);
    p.set_distributed_optimizer(false);
  }
  PoolStepResult run(Timeline* timeline = nullptr) const {
    const int replicas = p.data_parallel() / 2;
    return simulate_pool_step(model, job, p,
                              {{own[0].get(), &computes[0], replicas, joined[0].get(), names[0]},
                               {own[1].get(), &computes[1], replicas, joined[1].get(), names[1]}},
                              *between, std::nullopt, timeline);
  }
};

TEST_CASE("interleaved data-parallel pools of one type run the plain cluster's pipeline each") {
  // Two p5 pools of equal speed split the 64 micro-batches evenly, 16 a replica; each pool's two
  // replicas run the plain p5 node's interleaved step on its 32 to their reduction, then the
  // pools all-reduce every stage's gradients and each stage steps its optimizer: the step is the
  // plain pipeline's last reduction, that all-reduce and its stages' longest optimizer step.
  for (int v : {2, 4}) {
    INFO("virtual stages " << v);
    DataParallelPools pools("aws.p5.48xlarge", "aws.p5.48xlarge");
    pools.interleave(v);
    const PoolStepResult r = pools.run();
    CHECK(r.micro_batches == std::vector<int>{16, 16});
    s::TrainingJob half = pools.job;
    half.set_global_batch_size(32);
    s::Parallelism one = pools.p;
    one.set_data_parallel(2);
    const StepResult plain =
        simulate_step(pools.model, half, one, *pools.own[0], pools.computes[0]);
    CHECK(r.wait_s == 0);
    CHECK(r.inter_pool_s > 0);
    const PipelineTimeline run = simulate_pipeline(
        transformer_plan(pools.model, half, one, *pools.own[0], pools.computes[0]).plan,
        *pools.own[0]);
    Picoseconds reduced(0), optimizer(0);
    for (const StageTimeline& stage : run.stages) {
      reduced = std::max(reduced, stage.gradients_reduced);
      optimizer = std::max(optimizer, stage.end - stage.gradients_reduced);
    }
    CHECK(run.step.seconds() == Approx(plain.step_s).epsilon(1e-12));
    CHECK(r.step.step_s ==
          Approx(reduced.seconds() + r.inter_pool_s + optimizer.seconds()).epsilon(1e-9));
    CHECK(r.step.bubble_s == Approx(plain.bubble_s).epsilon(1e-9));
  }
}

TEST_CASE("interleaved, an A100 pool takes fewer groups of micro-batches and is never faster") {
  for (int v : {1, 2, 4}) {
    INFO("virtual stages " << v);
    DataParallelPools same("aws.p5.48xlarge", "aws.p5.48xlarge");
    DataParallelPools slower("aws.p5.48xlarge", "aws.p4d.24xlarge");
    if (v > 1) {
      same.interleave(v);
      slower.interleave(v);
    }
    const PoolStepResult fast = same.run();
    const PoolStepResult r = slower.run();
    CHECK(r.step.step_s > fast.step.step_s);
    CHECK(r.micro_batches[0] > r.micro_batches[1]);
    // Whole groups of one micro-batch a stage per replica; the replicas take the 64 or more.
    for (int m : r.micro_batches) CHECK(m % (v > 1 ? 2 : 1) == 0);
    CHECK(2 * (r.micro_batches[0] + r.micro_batches[1]) >= 64);
    // The pools' shares: whole groups, the 64 exactly.
    for (int64_t m : r.pool_micro_batches) CHECK(m % (v > 1 ? 2 : 1) == 0);
    CHECK(r.pool_micro_batches[0] + r.pool_micro_batches[1] == 64);
  }
}

TEST_CASE("ZeRO-3 over data-parallel pools of one type is the plain cluster's ZeRO-3 step") {
  // Two p5 pools joined at their NICs' rate against two p5 nodes on one switch: one ZeRO-3 group
  // of the 4 replicas spanning the pools, every replica 16 micro-batches; no all-reduce after.
  for (int v : {1, 2}) {
    INFO("virtual stages " << v);
    DataParallelPools pools("aws.p5.48xlarge", "aws.p5.48xlarge");
    pools.shard();
    if (v > 1) pools.interleave(v);
    const PoolStepResult r = pools.run();
    CHECK(r.micro_batches == std::vector<int>{16, 16});
    auto plain = testing::shipped_cluster("aws.p5.48xlarge", 2);
    const StepResult one =
        simulate_step(pools.model, pools.job, pools.p, *plain, pools.computes[0]);
    CHECK(r.inter_pool_s == 0);
    CHECK(r.step.step_s == Approx(one.step_s).epsilon(1e-9));
    CHECK(r.step.data_comm_s == Approx(one.data_comm_s).epsilon(1e-9));
    CHECK(r.step.mfu == Approx(one.mfu).epsilon(1e-9));
  }
}

TEST_CASE("ZeRO-3 over data-parallel pools: an A100 pool is never faster than a second H100 one") {
  DataParallelPools same("aws.p5.48xlarge", "aws.p5.48xlarge");
  DataParallelPools slower("aws.p5.48xlarge", "aws.p4d.24xlarge");
  same.shard();
  slower.shard();
  const PoolStepResult fast = same.run();
  const PoolStepResult r = slower.run();
  // Lockstep: the same micro-batches for every replica, the A100 pool setting the pace.
  CHECK(r.micro_batches == std::vector<int>{16, 16});
  CHECK(r.limiting_pool == 1);
  CHECK(r.wait_s > 0);
  CHECK(r.step.step_s > fast.step.step_s);
}

TEST_CASE(
    "ZeRO-3 over data-parallel pools moves every layer's gathers and reduce-scatters "
    "between the pools") {
  // Llama-2-7B, TP 8 on one p5 node per pool, DP 2: each TP rank's ZeRO-3 group is its GPU and
  // the other pool's. Per micro-batch a rank gathers its L local parameters (BF16) before the
  // forward and again before the backward (DeepSpeed releases them between) and reduce-scatters
  // their BF16 gradients once; in a group of two each collective sends half its buffer to the
  // other rank. So from the first pool to the second: 8 ranks x M x (2 x 2L + 2L) / 2 bytes.
  s::InterPoolNetwork stated;
  stated.set_kind(s::InterPoolNetwork::STATED);
  stated.set_bandwidth_gbit_per_s(100);
  DataParallelPools pools("aws.p5.48xlarge", "aws.p5.48xlarge", stated);
  pools.shard();
  pools.p.set_tensor_parallel(8);
  pools.p.set_pipeline_parallel(1);
  pools.p.set_data_parallel(2);
  pools.job.set_global_batch_size(8);  // M = 4 micro-batches a replica
  const PoolStepResult r = pools.run();
  REQUIRE(r.micro_batches == std::vector<int>{4, 4});
  // Pool 0's run as pool_step makes it, on a network whose links count their bytes.
  const TransformerPlan plan =
      transformer_plan(pools.model, pools.job, pools.p, *pools.joined[0], pools.computes[0]);
  Simulation sim;
  Network network(&sim, pools.joined[0].get());
  const PipelineTimeline run = PipelineRun(plan.plan, &network, nullptr, false).run();
  CHECK(run.stages[0].gradients_reduced.seconds() == Approx(r.ready_s[0]).epsilon(1e-12));
  // The link from the first pool's leaf up to the spine joining the pools.
  const Topology& t = *pools.joined[0];
  double up = 0;
  for (int32_t link : t.route(0, 8)) {
    if (t.links()[link].capacity_bytes_per_s == Approx(100e9 / 8)) {
      up += network.bytes_through(link);
      break;
    }
  }
  // L: the 6.74B parameters over TP 8, norms included (stage_parameters.h splits every dense
  // parameter over tensor parallelism).
  const double local =
      static_cast<double>(transformer_parameters(pools.model.transformer()).total()) / 8;
  CHECK(up == Approx(8 * 4 * (2 * 2 * local + 2 * local) / 2).epsilon(1e-9));
  // Nothing else crosses: the way back carries as much.
  double down = 0;
  for (int32_t link : t.route(8, 0)) {
    if (t.links()[link].capacity_bytes_per_s == Approx(100e9 / 8)) {
      down += network.bytes_through(link);
      break;
    }
  }
  CHECK(down == Approx(up).epsilon(1e-12));
}

// The spans of `group` on `timeline`.
std::vector<TimelineSpan> spans_of(const Timeline& timeline, const std::string& group) {
  std::vector<TimelineSpan> spans;
  for (const TimelineSpan& span : timeline.spans()) {
    if (span.group == group) spans.push_back(span);
  }
  return spans;
}

TEST_CASE(
    "the trace of data-parallel pools: a group per pool, its wait, the all-reduce, the step") {
  // TP 2 x PP 2, 2 replicas a pool: each pool's stages send to each other over NVLink and reduce
  // their gradients among the pool's replicas before the all-reduce between pools.
  DataParallelPools pools("aws.p5.48xlarge", "aws.p4d.24xlarge");
  pools.p.set_overlap_parameter_gather(false);  // its gathers end in this step, not the next
  Timeline timeline;
  const PoolStepResult r = pools.run(&timeline);
  // Recording the spans changes nothing, and draws them the same way every time.
  const PoolStepResult plain = pools.run();
  CHECK(r.step.step_s == plain.step.step_s);
  CHECK(r.wait_s == plain.wait_s);
  Timeline again;
  pools.run(&again);
  REQUIRE(again.spans().size() == timeline.spans().size());
  for (size_t i = 0; i < again.spans().size(); ++i) {
    const TimelineSpan &a = again.spans()[i], &b = timeline.spans()[i];
    CHECK((a.group == b.group && a.track == b.track && a.name == b.name && a.start == b.start &&
           a.end == b.end));
  }
  // One group per pool, named by its instance type, its share in the name.
  std::set<std::string> groups;
  for (const TimelineSpan& span : timeline.spans()) groups.insert(span.group);
  const int64_t total = r.pool_micro_batches[0] + r.pool_micro_batches[1];
  REQUIRE(total == 64);
  const std::string p5 = "aws.p5.48xlarge (pool 1): replica 1 of 2, " +
                         std::to_string(r.micro_batches[0]) + " micro-batches (the pool's " +
                         std::to_string(r.pool_micro_batches[0]) + " of 64)";
  const std::string p4d = "aws.p4d.24xlarge (pool 2): replica 1 of 2, " +
                          std::to_string(r.micro_batches[1]) + " micro-batches (the pool's " +
                          std::to_string(r.pool_micro_batches[1]) + " of 64)";
  CHECK(groups == std::set<std::string>{p5, p4d});
  // Whole micro-batches leave one pool ready before the other, which waits.
  const int limiting = r.limiting_pool;
  REQUIRE(r.wait_s > 0.005);
  // The all-reduce between pools, on both pools' track "between pools", starts once the limiting
  // pool's gradients are reduced; the other pool's pipeline is idle from its last reduction or
  // send to then: pool_wait_s. Every stage's optimizer starts as the all-reduce ends.
  const Picoseconds all_ready = Picoseconds::from_seconds(r.ready_s[limiting]);
  const Picoseconds reduced = all_ready + Picoseconds::from_seconds(r.inter_pool_s);
  const std::vector<std::string> group_of = {p5, p4d};
  Picoseconds last_end(0);
  for (int pool : {0, 1}) {
    const std::string& group = group_of[pool];
    std::vector<std::string> between;
    Picoseconds before_all_reduce(0);
    int optimizers = 0;
    for (const TimelineSpan& span : spans_of(timeline, group)) {
      last_end = std::max(last_end, span.end);
      if (span.track == "between pools") {
        between.push_back(span.name);
        if (span.name == "all-reduce between pools") {
          CHECK(std::abs((span.start - all_ready).seconds()) < 1e-9);
          CHECK(std::abs((span.end - reduced).seconds()) < 1e-9);
        }
        continue;
      }
      if (span.name == "optimizer") {
        ++optimizers;
        CHECK(std::abs((span.start - reduced).seconds()) < 1e-9);
        continue;
      }
      if (span.name == "all_gather") {  // the updated parameters, after the optimizer
        CHECK(span.start > reduced);
        continue;
      }
      CHECK(span.end <= all_ready);
      before_all_reduce = std::max(before_all_reduce, span.end);
    }
    CHECK(optimizers == 2);
    const double idle = (all_ready - before_all_reduce).seconds();
    if (pool != limiting) {
      CHECK(between == std::vector<std::string>{"waiting for " + pools.names[limiting],
                                                "all-reduce between pools"});
      CHECK(idle == Approx(r.wait_s).margin(1e-9));
    } else {
      CHECK(between == std::vector<std::string>{"all-reduce between pools"});
      CHECK(idle == Approx(0).margin(1e-9));
    }
  }
  // Its last event ends at the step.
  CHECK(last_end.seconds() == Approx(r.step.step_s).epsilon(1e-12));
  // Each stage's tracks by the stage: compute, its sends over NVLink, its reductions.
  std::set<std::string> tracks;
  for (const TimelineSpan& span : spans_of(timeline, p4d)) tracks.insert(span.track);
  CHECK(tracks == std::set<std::string>{"between pools", "stage 0 compute", "stage 0 data parallel",
                                        "stage 0 send (NVLink)", "stage 1 compute",
                                        "stage 1 data parallel", "stage 1 send (NVLink)"});
}

TEST_CASE("the trace of ZeRO-3 pools: no all-reduce between them, the faster one's stages held") {
  // ZeRO-3's reduce-scatters span the pools: nothing to all-reduce after; the faster pool's
  // optimizer steps are drawn after its wait, the last event ending at the step.
  DataParallelPools pools("aws.p5.48xlarge", "aws.p4d.24xlarge");
  pools.shard();
  Timeline timeline;
  const PoolStepResult r = pools.run(&timeline);
  REQUIRE(r.wait_s > 0.01);
  const int waiting = 1 - r.limiting_pool;
  Picoseconds last_end(0);
  std::vector<TimelineSpan> between;
  for (const TimelineSpan& span : timeline.spans()) {
    last_end = std::max(last_end, span.end);
    if (span.track == "between pools") between.push_back(span);
  }
  CHECK(last_end.seconds() == Approx(r.step.step_s).epsilon(1e-12));
  REQUIRE(between.size() == 1);
  CHECK(between[0].name == "waiting for " + pools.names[r.limiting_pool]);
  CHECK(between[0].group.starts_with(pools.names[waiting] + " (pool " +
                                     std::to_string(waiting + 1) + ")"));
  CHECK((between[0].end - between[0].start).seconds() == Approx(r.wait_s).margin(1e-9));
  CHECK(between[0].start.seconds() == Approx(r.ready_s[waiting]).margin(1e-9));
}

}  // namespace
}  // namespace clustersim
