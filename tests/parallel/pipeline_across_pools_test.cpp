// Tests of a pipeline across a mix's pools (sim/parallel/pipeline_across_pools.h): the engine
// against the bound of a pipeline of unequal stages, the split by speed, and moving layers to the
// slower pool.
#include "sim/parallel/pipeline_across_pools.h"

#include <algorithm>
#include <catch2/catch.hpp>

#include "sim/net/inter_pool_topology.h"
#include "sim/net/topology_builder.h"
#include "tests/testing/cluster.h"
#include "tests/testing/parse_message.h"
#include "tests/testing/units.h"

namespace clustersim {
namespace {

namespace s = schema;
using testing::ms;

// 1F1B over stages of forward f_s and backward b_s per micro-batch, M micro-batches: stage k runs
// all M micro-batches, after the first has passed the stages before it forwards and before the
// last passes them backwards, so T >= max_k [sum_{s<k} (f_s + b_s) + M (f_k + b_k)]. With the
// slowest stage last the stages before it feed it faster than it consumes and T meets the bound,
// sum_s (f_s + b_s) + (M - 1) max_s (f_s + b_s).
double unequal_bound_ms(const std::vector<double>& f, const std::vector<double>& b, int m) {
  double before = 0, bound = 0;
  for (size_t k = 0; k < f.size(); ++k) {
    bound = std::max(bound, before + m * (f[k] + b[k]));
    before += f[k] + b[k];
  }
  return bound;
}

double engine_ms(const std::vector<double>& f, const std::vector<double>& b, int m) {
  auto t = testing::shipped_cluster("aws.p5.48xlarge", 1);
  PipelinePlan plan;
  plan.stages = static_cast<int>(f.size());
  plan.micro_batches = m;
  plan.activation_bytes = 1;  // transfers cost only their ~1 us latency
  for (size_t s = 0; s < f.size(); ++s) plan.work.push_back({ms(f[s]), ms(b[s]), Picoseconds(0)});
  return simulate_pipeline(plan, *t).step.seconds() * 1e3;
}

TEST_CASE("a pipeline of unequal stages takes at least the slowest stage's M passes and its fill") {
  const int m = 16;
  // Faster stages (an H100 pool) before a slower one (A100), and the other way round.
  const std::vector<double> f{1, 1, 1, 2}, b{2, 2, 2, 4};
  CHECK(unequal_bound_ms(f, b, m) == 9 + 16 * 6);
  CHECK(engine_ms(f, b, m) == Approx(unequal_bound_ms(f, b, m)).epsilon(0.005));
  for (const auto& [ff, bb] :
       {std::pair{std::vector<double>{2, 1, 1, 1}, std::vector<double>{4, 2, 2, 2}},
        std::pair{std::vector<double>{1, 2, 1, 1}, std::vector<double>{2, 4, 2, 2}}}) {
    CHECK(engine_ms(ff, bb, m) >= unequal_bound_ms(ff, bb, m) * (1 - 1e-9));
  }
}

// Llama-2-7B, TP 8, two stages: one p5 node (H100) then one p4d node (A100).
struct AcrossTwoPools {
  const Catalog& catalog = testing::shipped_catalog();
  const s::InstanceType* p5_type = catalog.instances().find("aws.p5.48xlarge")->value;
  const s::InstanceType* p4d_type = catalog.instances().find("aws.p4d.24xlarge")->value;
  std::unique_ptr<Topology> p5 = testing::shipped_cluster("aws.p5.48xlarge", 1);
  std::unique_ptr<Topology> p4d = testing::shipped_cluster("aws.p4d.24xlarge", 1);
  const s::Model& model = *catalog.models().find("llama2-7b")->value;
  const s::Runtime& runtime = *catalog.runtimes().find("default")->value;
  ComputeModel h100{catalog.gpu_of(*p5_type), s::BF16, runtime, KernelSetting::kTrainingStep};
  ComputeModel a100{catalog.gpu_of(*p4d_type), s::BF16, runtime, KernelSetting::kTrainingStep};
  s::TrainingJob job;
  s::Parallelism p;
  std::unique_ptr<Topology> joined;
  std::vector<StagePool> pools;

  AcrossTwoPools() {
    job = testing::parse_message<s::TrainingJob>(
        "global_batch_size: 32 sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 1");
    // Resolved as a sweep's configuration is.
    p = testing::parse_message<s::Parallelism>(
        "tensor_parallel: 8 pipeline_parallel: 2 data_parallel: 1 micro_batch_size: 1 "
        "virtual_stages: 1 zero_stage: 0 context_parallel: 1 schedule: ONE_F_ONE_B "
        "recompute: RECOMPUTE_SELECTIVE rank_order: TP_DP_PP context_parallel_comm: P2P "
        "sequence_parallel: true distributed_optimizer: true overlap_gradient_reduce: true "
        "overlap_parameter_gather: true overlap_pipeline_communication: true");
    const InterPoolLinks links =
        inter_pool_links({{p5_type, 1}, {p4d_type, 1}}, s::InterPoolNetwork(), nullptr, catalog);
    REQUIRE(links.error.empty());
    TopologyOrError built = build_joined_topology(
        {{p5_type, 1, 0, 0, nullptr, std::nullopt}, {p4d_type, 1, 0, 0, nullptr, std::nullopt}},
        links.bytes_per_s, catalog);
    INFO(built.error);
    REQUIRE(built.topology);
    joined = std::move(built.topology);
    pools = {{p5.get(), &h100, 1, 80 * kBytesPerGibibyte},
             {p4d.get(), &a100, 1, 40 * kBytesPerGibibyte}};
  }
  s::Parallelism split() const {
    return *with_stage_layers(model, job, p, pools, runtime_memory(runtime, p));
  }
  PipelineAcrossPoolsResult run(int first_stage_layers) const {
    s::Parallelism q = p;
    q.clear_stage_layers();
    q.add_stage_layers(first_stage_layers);
    q.add_stage_layers(model.transformer().num_layers() - first_stage_layers);
    return simulate_pipeline_across_pools(model, job, q, pools, *joined);
  }
};

TEST_CASE("the joined pools put each pool's nodes in order, their GPUs meeting over the network") {
  const AcrossTwoPools mix;
  CHECK(mix.joined->gpu_count() == 16);
  CHECK(mix.joined->route_kind(0, 7) == LinkKind::kNvlink);
  CHECK(mix.joined->route_kind(0, 8) == LinkKind::kNetwork);
}

TEST_CASE("a send between the joined pools crosses the inter-pool link at its capacity") {
  const AcrossTwoPools mix;
  // Stated at 40 Gbit/s: below any one NIC of either pool (p4d: 4 x 100 Gbit/s).
  s::InterPoolNetwork stated;
  stated.set_kind(s::InterPoolNetwork::STATED);
  stated.set_bandwidth_gbit_per_s(40);
  const InterPoolLinks links =
      inter_pool_links({{mix.p5_type, 1}, {mix.p4d_type, 1}}, stated, nullptr, mix.catalog);
  TopologyOrError built = build_joined_topology({{mix.p5_type, 1, 0, 0, nullptr, std::nullopt},
                                                 {mix.p4d_type, 1, 0, 0, nullptr, std::nullopt}},
                                                links.bytes_per_s, mix.catalog);
  REQUIRE(built.topology);
  double narrowest = 1e30;
  for (int32_t link : built.topology->route(0, 8)) {
    narrowest = std::min(narrowest, built.topology->links()[link].capacity_bytes_per_s);
  }
  CHECK(narrowest == Approx(40e9 / 8));
}

TEST_CASE("a pipeline across two pools of one instance type is the plain cluster's pipeline") {
  // Two p5 pools of one node joined by a spine at their NICs' rate, against two p5 nodes on one
  // switch: the same GPUs, links and stage work, so the same step.
  AcrossTwoPools mix;
  const InterPoolLinks links = inter_pool_links({{mix.p5_type, 1}, {mix.p5_type, 1}},
                                                s::InterPoolNetwork(), nullptr, mix.catalog);
  TopologyOrError built = build_joined_topology({{mix.p5_type, 1, 0, 0, nullptr, std::nullopt},
                                                 {mix.p5_type, 1, 0, 0, nullptr, std::nullopt}},
                                                links.bytes_per_s, mix.catalog);
  REQUIRE(built.topology);
  auto second = testing::shipped_cluster("aws.p5.48xlarge", 1);
  const std::vector<StagePool> pools{{mix.p5.get(), &mix.h100, 1, 80 * kBytesPerGibibyte},
                                     {second.get(), &mix.h100, 1, 80 * kBytesPerGibibyte}};
  s::Parallelism p = mix.p;
  p.add_stage_layers(17);
  p.add_stage_layers(15);
  const PipelineAcrossPoolsResult across =
      simulate_pipeline_across_pools(mix.model, mix.job, p, pools, *built.topology);
  auto plain = testing::shipped_cluster("aws.p5.48xlarge", 2);
  const StepResult one = simulate_step(mix.model, mix.job, p, *plain, mix.h100);
  CHECK(across.step.step_s == Approx(one.step_s).epsilon(1e-9));
  CHECK(across.step.mfu == Approx(one.mfu).epsilon(1e-9));
  CHECK(across.limiting_stage == 0);  // 17 layers against 15 and the output layer
}

TEST_CASE("split by speed, the H100 stage takes more layers than the A100 stage") {
  const AcrossTwoPools mix;
  const s::Parallelism p = mix.split();
  REQUIRE(p.stage_layers_size() == 2);
  CHECK(p.stage_layers(0) + p.stage_layers(1) == 32);
  CHECK(p.stage_layers(0) > p.stage_layers(1));
  const PipelineAcrossPoolsResult r =
      simulate_pipeline_across_pools(mix.model, mix.job, p, mix.pools, *mix.joined);
  // The engine meets the unequal-stage bound from each stage's work, give or take the sends,
  // the gradient reduction and the optimizer.
  CHECK(r.step.step_s > 0);
  CHECK(r.stage_layers == std::vector<int>{p.stage_layers(0), p.stage_layers(1)});
  CHECK(r.wait_s >= 0);
  CHECK(r.wait_s < r.stage_busy_s[r.limiting_stage]);
}

TEST_CASE("moving a layer from the faster stage to the slower one never shortens the step") {
  const AcrossTwoPools mix;
  const int fast = mix.split().stage_layers(0);
  double previous = mix.run(fast).step.step_s;
  for (int moved = 1; moved <= 4; ++moved) {
    INFO("moved " << moved);
    const PipelineAcrossPoolsResult r = mix.run(fast - moved);
    CHECK(r.step.step_s >= previous);
    CHECK(r.limiting_pool == 1);  // the A100 stage sets the pace
    previous = r.step.step_s;
  }
  // The split by speed is no slower than one layer more on the faster stage either.
  CHECK(mix.run(fast + 1).step.step_s >= mix.run(fast).step.step_s);
}

}  // namespace
}  // namespace clustersim
