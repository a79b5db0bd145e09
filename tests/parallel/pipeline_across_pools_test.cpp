// Tests of a pipeline across a mix's pools (sim/parallel/pipeline_across_pools.h): the engine
// against the bound of a pipeline of unequal stages, 1F1B and interleaved, the split by speed,
// moving layers to the slower pool, and interleaved pipelines across pools: against the plain
// cluster's, a slower pool, and the sends across the pool boundary per model chunk.
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

// Interleaved over v chunks per stage, chunk c of stage s taking f_s and b_s: stage k's first
// forward waits for chunk 0 of the first micro-batch to pass the stages before it, and its last
// backward (chunk 0 of the last) must still pass them back, so
// T >= max_k [sum_{s<k} (f_s + b_s) + M v (f_k + b_k)]: the 1F1B bound with M v tasks.
double interleaved_engine_ms(const std::vector<double>& f, const std::vector<double>& b, int m,
                             int v) {
  auto t = testing::shipped_cluster("aws.p5.48xlarge", 1);
  PipelinePlan plan;
  plan.schedule = s::INTERLEAVED_ONE_F_ONE_B;
  plan.stages = static_cast<int>(f.size());
  plan.chunks = v;
  plan.micro_batches = m;
  plan.activation_bytes = 1;
  for (size_t s = 0; s < f.size(); ++s) plan.work.push_back({ms(f[s]), ms(b[s]), Picoseconds(0)});
  return simulate_pipeline(plan, *t).step.seconds() * 1e3;
}

TEST_CASE("an interleaved pipeline of unequal stages: the closed form when equal, else the bound") {
  const int m = 8, v = 2, p = 4;
  // Equal stages: the bubble (p - 1)(f + b) over M v (f + b) of work.
  CHECK(interleaved_engine_ms({0.5, 0.5, 0.5, 0.5}, {1, 1, 1, 1}, m, v) ==
        Approx((m * v + p - 1) * 1.5).epsilon(0.005));
  // A slower stage (an A100 pool's) anywhere: never under the bound, and the slower, the longer.
  for (int slow = 0; slow < p; ++slow) {
    INFO("slow stage " << slow);
    std::vector<double> f(p, 0.5), b(p, 1);
    f[slow] = 1;
    b[slow] = 2;
    const double step = interleaved_engine_ms(f, b, m, v);
    CHECK(step >= unequal_bound_ms(f, b, m * v) * (1 - 1e-9));
    CHECK(step > interleaved_engine_ms({0.5, 0.5, 0.5, 0.5}, {1, 1, 1, 1}, m, v));
  }
}

TEST_CASE("interleaved, one slow chunk paces the ring though its stage's total is short") {
  // Eight stages, 5 chunks each: four fast ones (3 ms a chunk's forward, twice that backward, 45
  // a micro-batch) and four of 1 ms a chunk's forward (15 a micro-batch), the last of them also
  // holding the output layer, 8 ms forward (39 a micro-batch, still below 45). On its last chunk
  // alone (a 9 ms chunk forward) it paces the ring beyond the fast stages' bound; spread as
  // 1.6 ms more on every chunk (2.6 ms each, below 3) it does not.
  auto t = testing::shipped_cluster("aws.p5.48xlarge", 1);
  const auto step_ms = [&](const std::vector<double>& last_stage_chunks) {
    PipelinePlan plan;
    plan.schedule = s::INTERLEAVED_ONE_F_ONE_B;
    plan.stages = 8;
    plan.chunks = 5;
    plan.micro_batches = 64;
    plan.activation_bytes = 1;
    for (int r = 0; r < 8; ++r) {
      StageWork w{Picoseconds(0), Picoseconds(0), Picoseconds(0)};
      for (int c = 0; c < 5; ++c) {
        const double f = r < 4 ? 3 : r < 7 ? 1 : last_stage_chunks[c];
        w.chunk_forward.push_back(ms(f));
        w.chunk_backward.push_back(ms(2 * f));
      }
      plan.work.push_back(w);
    }
    return simulate_pipeline(plan, *t).step.seconds() * 1e3;
  };
  // The bound with M v tasks of a chunk each.
  const double bound = unequal_bound_ms({3, 3, 3, 3, 1, 1, 1, 1}, {6, 6, 6, 6, 2, 2, 2, 2}, 64 * 5);
  const double spread = step_ms({2.6, 2.6, 2.6, 2.6, 2.6});
  const double one_chunk = step_ms({1, 1, 1, 1, 9});
  CHECK(spread >= bound * (1 - 1e-9));
  CHECK(spread < bound * 1.03);
  CHECK(one_chunk > spread * 1.1);
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
  std::unique_ptr<Topology> second_p5 = testing::shipped_cluster("aws.p5.48xlarge", 1);
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
    joined = join(p5_type, p4d_type);
    pools = {{p5.get(), &h100, 1, 80 * kBytesPerGibibyte},
             {p4d.get(), &a100, 1, 40 * kBytesPerGibibyte}};
  }
  s::Parallelism split() const {
    return *with_stage_layers(model, job, p, pools, runtime_memory(runtime, p));
  }
  // The links of `a` then `b`, `nodes` each, under `network` (absent: the default kind).
  InterPoolLinks links_between(const s::InstanceType* a, const s::InstanceType* b, int nodes = 1,
                               const s::InterPoolNetwork& network = {}) const {
    InterPoolLinks links = inter_pool_links({{a, nodes}, {b, nodes}}, network, nullptr, catalog);
    REQUIRE(links.error.empty());
    return links;
  }
  // `a` then `b`, `nodes` each, joined by `links`.
  std::unique_ptr<Topology> joined_by(const s::InstanceType* a, const s::InstanceType* b,
                                      const InterPoolLinks& links, int nodes = 1) const {
    TopologyOrError built = build_joined_topology(
        {{a, nodes, 0, 0, nullptr, std::nullopt}, {b, nodes, 0, 0, nullptr, std::nullopt}},
        links.bytes_per_s, catalog);
    INFO(built.error);
    REQUIRE(built.topology);
    return std::move(built.topology);
  }
  // `a` then `b`, `nodes` each, over the default inter-pool network.
  std::unique_ptr<Topology> join(const s::InstanceType* a, const s::InstanceType* b,
                                 int nodes = 1) const {
    return joined_by(a, b, links_between(a, b, nodes), nodes);
  }
  // The links of p5 then p4d, one node each, over a stated inter-pool link of `gbit_per_s`.
  InterPoolLinks stated(double gbit_per_s) const {
    s::InterPoolNetwork network;
    network.set_kind(s::InterPoolNetwork::STATED);
    network.set_bandwidth_gbit_per_s(gbit_per_s);
    return links_between(p5_type, p4d_type, 1, network);
  }
  // Two H100 pools of one p5 node each (the first is `p5`).
  std::vector<StagePool> two_h100_pools() const {
    return {{p5.get(), &h100, 1, 80 * kBytesPerGibibyte},
            {second_p5.get(), &h100, 1, 80 * kBytesPerGibibyte}};
  }
  // The layout interleaved over `v` chunks per stage.
  s::Parallelism interleaved(int v) const {
    s::Parallelism q = p;
    q.set_schedule(s::INTERLEAVED_ONE_F_ONE_B);
    q.set_virtual_stages(v);
    return q;
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
  const std::unique_ptr<Topology> joined = mix.joined_by(mix.p5_type, mix.p4d_type, mix.stated(40));
  double narrowest = 1e30;
  for (int32_t link : joined->route(0, 8)) {
    narrowest = std::min(narrowest, joined->links()[link].capacity_bytes_per_s);
  }
  CHECK(narrowest == Approx(40e9 / 8));
}

// Two replicas' stage-to-stage sends cross one stated link at the same times: replica 0's, the
// ones simulated, get half of it, and where the link binds the step grows.
TEST_CASE("the replicas of a pipeline across pools share a stated inter-pool link") {
  const AcrossTwoPools mix;
  const InterPoolLinks alone = mix.stated(1);
  const InterPoolLinks shared = shared_by_replicas(alone, 2);
  CHECK(shared.bytes_per_s == std::vector<double>{1e9 / 8 / 2, 1e9 / 8 / 2});
  const auto step = [&](const InterPoolLinks& links) {
    return simulate_pipeline_across_pools(mix.model, mix.job, mix.split(), mix.pools,
                                          *mix.joined_by(mix.p5_type, mix.p4d_type, links))
        .step.step_s;
  };
  CHECK(step(shared) > step(alone));
}

TEST_CASE("a pipeline across two pools of one instance type is the plain cluster's pipeline") {
  // Two p5 pools of one node joined by a spine at their NICs' rate, against two p5 nodes on one
  // switch: the same GPUs, links and stage work, so the same step.
  AcrossTwoPools mix;
  const std::unique_ptr<Topology> joined = mix.join(mix.p5_type, mix.p5_type);
  const std::vector<StagePool> pools = mix.two_h100_pools();
  s::Parallelism p = mix.p;
  p.add_stage_layers(17);
  p.add_stage_layers(15);
  const PipelineAcrossPoolsResult across =
      simulate_pipeline_across_pools(mix.model, mix.job, p, pools, *joined);
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

TEST_CASE("stage totals are spread over an interleaved stage's chunks, the first ones fuller") {
  s::Parallelism p;
  p.set_pipeline_parallel(2);
  p.set_schedule(s::INTERLEAVED_ONE_F_ONE_B);
  p.set_virtual_stages(3);
  // Virtual-stage order: chunk c of stage r is the (c x 2 + r)-th count.
  const s::Parallelism q = with_stage_totals(p, {20, 12});
  CHECK(std::vector<int>(q.stage_layers().begin(), q.stage_layers().end()) ==
        std::vector<int>{7, 4, 7, 4, 6, 4});
  // Fewer layers than chunks: a chunk holds none, as Megatron-Core's layouts allow.
  const s::Parallelism r = with_stage_totals(p, {31, 1});
  CHECK(std::vector<int>(r.stage_layers().begin(), r.stage_layers().end()) ==
        std::vector<int>{11, 1, 10, 0, 10, 0});
  // The even split: 32 layers over 2 stages, 16 each, over 3 chunks 6 + 5 + 5.
  const s::Parallelism even = with_even_stage_layers(32, p);
  CHECK(std::vector<int>(even.stage_layers().begin(), even.stage_layers().end()) ==
        std::vector<int>{6, 6, 5, 5, 5, 5});
  // Without interleaving the totals are the list, and the even split lists none.
  p.set_schedule(s::ONE_F_ONE_B);
  p.set_virtual_stages(1);
  CHECK(with_stage_totals(p, {20, 12}).stage_layers_size() == 2);
  CHECK(with_even_stage_layers(32, p).stage_layers_size() == 0);
}

TEST_CASE("an interleaved pipeline across two pools of one instance type is the plain cluster's") {
  AcrossTwoPools mix;
  const std::unique_ptr<Topology> joined = mix.join(mix.p5_type, mix.p5_type);
  const std::vector<StagePool> pools = mix.two_h100_pools();
  auto plain = testing::shipped_cluster("aws.p5.48xlarge", 2);
  for (int v : {2, 4}) {
    INFO("virtual stages " << v);
    // Split by speed: both stages equally fast, the output layer on the second.
    const s::Parallelism split = *with_stage_layers(
        mix.model, mix.job, mix.interleaved(v), pools, runtime_memory(mix.runtime, mix.p));
    REQUIRE(split.stage_layers_size() == 2 * v);  // listed per chunk
    const PipelineAcrossPoolsResult across =
        simulate_pipeline_across_pools(mix.model, mix.job, split, pools, *joined);
    CHECK(across.stage_layers[0] + across.stage_layers[1] == 32);
    CHECK(across.stage_layers[0] >= across.stage_layers[1]);
    const StepResult one = simulate_step(mix.model, mix.job, split, *plain, mix.h100);
    CHECK(across.step.step_s == Approx(one.step_s).epsilon(1e-9));
    CHECK(across.step.bubble_s == Approx(one.bubble_s).epsilon(1e-9));
    CHECK(across.step.mfu == Approx(one.mfu).epsilon(1e-9));
  }
  // Given per stage, 16 layers a stage are 8 per chunk: the even interleaved layout.
  s::Parallelism given = mix.interleaved(2);
  given.add_stage_layers(16);
  given.add_stage_layers(16);
  s::Parallelism even = mix.interleaved(2);
  even.set_rank_order(s::TP_DP_PP);
  CHECK(simulate_pipeline_across_pools(mix.model, mix.job, given, pools, *joined).step.step_s ==
        Approx(simulate_step(mix.model, mix.job, even, *plain, mix.h100).step_s).epsilon(1e-9));
}

TEST_CASE("an interleaved pipeline with an A100 pool is never faster than with a second H100 one") {
  AcrossTwoPools mix;
  const std::unique_ptr<Topology> fast_joined = mix.join(mix.p5_type, mix.p5_type);
  const std::vector<StagePool> fast = mix.two_h100_pools();
  for (int first : {20, 16, 12}) {
    INFO("first stage " << first << " layers");
    s::Parallelism p = mix.interleaved(2);
    p.add_stage_layers(first);
    p.add_stage_layers(32 - first);
    const double slow = simulate_pipeline_across_pools(mix.model, mix.job, p, mix.pools,
                                                       *mix.joined)
                            .step.step_s;
    CHECK(slow >= simulate_pipeline_across_pools(mix.model, mix.job, p, fast, *fast_joined)
                      .step.step_s);
  }
  // Split by speed, the H100 stage takes more layers and the step is the best of those above.
  const s::Parallelism split = *with_stage_layers(mix.model, mix.job, mix.interleaved(2),
                                                  mix.pools, runtime_memory(mix.runtime, mix.p));
  const PipelineAcrossPoolsResult r =
      simulate_pipeline_across_pools(mix.model, mix.job, split, mix.pools, *mix.joined);
  CHECK(r.stage_layers[0] > r.stage_layers[1]);
  for (int first : {r.stage_layers[0] - 2, r.stage_layers[0] + 2}) {
    const s::Parallelism p = with_stage_totals(mix.interleaved(2), {first, 32 - first});
    CHECK(simulate_pipeline_across_pools(mix.model, mix.job, p, mix.pools, *mix.joined)
              .step.step_s >= r.step.step_s);
  }
}

TEST_CASE("interleaved across pools, a micro-batch crosses the pool boundary 2v - 1 times each way") {
  // TP 4, four stages: stages 0 and 1 on the p5 node, 2 and 3 on the p4d node. A micro-batch's
  // activations go 1 -> 2 once per chunk (v) and wrap 3 -> 0 between chunks (v - 1), its
  // gradients back the same ways; the sends within a node (0 -> 1, 2 -> 3) ride NVLink.
  AcrossTwoPools mix;
  mix.p.set_tensor_parallel(4);
  mix.p.set_pipeline_parallel(4);
  const std::vector<StagePool> pools{{mix.p5.get(), &mix.h100, 2, 80 * kBytesPerGibibyte},
                                     {mix.p4d.get(), &mix.a100, 2, 40 * kBytesPerGibibyte}};
  const int m = 32;
  for (int v : {1, 2, 4}) {
    INFO("virtual stages " << v);
    s::Parallelism p = v > 1 ? mix.interleaved(v) : mix.p;
    for (int n : {8, 8, 8, 8}) p.add_stage_layers(n);
    Timeline timeline;
    simulate_pipeline_across_pools(mix.model, mix.job, p, pools, *mix.joined, &timeline);
    int network = 0, nvlink = 0;
    for (const TimelineSpan& span : timeline.spans()) {
      network += span.track == "send (network)";
      nvlink += span.track == "send (NVLink)";
    }
    CHECK(network == m * 2 * (2 * v - 1));
    CHECK(nvlink == m * 2 * (2 * v));
  }
}

// Expert parallelism inside each stage: a MoE model's stages on two pools of `nodes` p5 nodes
// each against the plain cluster of all of them, the same layers given per stage.
void check_expert_parallel_across_p5_pools(const char* model_name, const char* layout, int nodes,
                                           int layers) {
  AcrossTwoPools mix;
  const s::Model& model = *mix.catalog.models().find(model_name)->value;
  s::Parallelism p = testing::parse_message<s::Parallelism>(layout);
  p.add_stage_layers(layers / 2 + 1);
  p.add_stage_layers(layers / 2 - 1);
  const std::unique_ptr<Topology> joined = mix.join(mix.p5_type, mix.p5_type, nodes);
  auto first = testing::shipped_cluster("aws.p5.48xlarge", nodes);
  auto second = testing::shipped_cluster("aws.p5.48xlarge", nodes);
  const std::vector<StagePool> pools{{first.get(), &mix.h100, 1, 80 * kBytesPerGibibyte},
                                     {second.get(), &mix.h100, 1, 80 * kBytesPerGibibyte}};
  const PipelineAcrossPoolsResult across =
      simulate_pipeline_across_pools(model, mix.job, p, pools, *joined);
  auto plain = testing::shipped_cluster("aws.p5.48xlarge", 2 * nodes);
  const StepResult one = simulate_step(model, mix.job, p, *plain, mix.h100);
  CHECK(across.step.expert_comm_s > 0);
  CHECK(across.step.expert_comm_s == Approx(one.expert_comm_s).epsilon(1e-9));
  CHECK(across.step.step_s == Approx(one.step_s).epsilon(1e-9));
  CHECK(across.step.mfu == Approx(one.mfu).epsilon(1e-9));
}

TEST_CASE("expert parallelism inside the stages across pools of one type is the plain cluster's") {
  const char* common =
      "pipeline_parallel: 2 micro_batch_size: 1 virtual_stages: 1 zero_stage: 0 "
      "context_parallel: 1 schedule: ONE_F_ONE_B recompute: RECOMPUTE_SELECTIVE "
      "rank_order: TP_DP_PP context_parallel_comm: P2P distributed_optimizer: true "
      "overlap_gradient_reduce: true overlap_parameter_gather: true "
      "overlap_pipeline_communication: true expert_tensor_parallel: 1 ";
  // Mixtral-8x7B: TP 2 x DP 4 a stage on one node, its 8 experts over EP 4 within NVLink.
  check_expert_parallel_across_p5_pools(
      "mixtral-8x7b",
      (std::string(common) + "tensor_parallel: 2 sequence_parallel: true data_parallel: 4 "
                             "expert_parallel: 4")
          .c_str(),
      1, 32);
  // Qwen3-30B-A3B: DP 16 a stage on two nodes, its 128 experts over EP 16: the all-to-alls cross
  // the pool's own network between its nodes.
  check_expert_parallel_across_p5_pools(
      "qwen3-30b-a3b",
      (std::string(common) + "tensor_parallel: 1 data_parallel: 16 expert_parallel: 16").c_str(),
      2, 48);
}

TEST_CASE("ZeRO-3 inside the stages across pools of one type is the plain cluster's") {
  // Llama-2-7B, TP 2 x DP 4 a stage, its parameters sharded over the stage's 4 replicas: the
  // layer gathers and reduce-scatters stay inside the stage's pool.
  AcrossTwoPools mix;
  s::Parallelism p = mix.p;
  p.set_tensor_parallel(2);
  p.set_data_parallel(4);
  p.set_zero_stage(3);
  p.set_distributed_optimizer(false);
  p.add_stage_layers(17);
  p.add_stage_layers(15);
  const std::unique_ptr<Topology> joined = mix.join(mix.p5_type, mix.p5_type);
  const std::vector<StagePool> pools = mix.two_h100_pools();
  const PipelineAcrossPoolsResult across =
      simulate_pipeline_across_pools(mix.model, mix.job, p, pools, *joined);
  auto plain = testing::shipped_cluster("aws.p5.48xlarge", 2);
  const StepResult one = simulate_step(mix.model, mix.job, p, *plain, mix.h100);
  CHECK(across.step.step_s == Approx(one.step_s).epsilon(1e-9));
  CHECK(across.step.data_comm_s == Approx(one.data_comm_s).epsilon(1e-9));
  CHECK(across.step.mfu == Approx(one.mfu).epsilon(1e-9));
  s::Parallelism sharded_optimizer = p;
  sharded_optimizer.set_zero_stage(1);
  CHECK(simulate_pipeline_across_pools(mix.model, mix.job, sharded_optimizer, pools, *joined)
            .step.step_s != across.step.step_s);
  // With the second stage on the A100 pool it is never faster.
  CHECK(simulate_pipeline_across_pools(mix.model, mix.job, p, mix.pools, *mix.joined).step.step_s >=
        across.step.step_s);
}

TEST_CASE("an expert-parallel pipeline across an H100 and an A100 pool gives the H100 more layers") {
  AcrossTwoPools mix;
  const s::Model& model = *mix.catalog.models().find("mixtral-8x7b")->value;
  s::Parallelism p = mix.p;
  p.set_tensor_parallel(2);
  p.set_data_parallel(4);
  p.set_expert_parallel(4);
  p.set_expert_tensor_parallel(1);
  // Memories without bound: the split by speed alone.
  std::vector<StagePool> pools = mix.pools;
  for (StagePool& pool : pools) pool.capacity_bytes = 1e18;
  const std::optional<s::Parallelism> split =
      with_stage_layers(model, mix.job, p, pools, runtime_memory(mix.runtime, p));
  REQUIRE(split);
  REQUIRE(split->stage_layers_size() == 2);
  CHECK(split->stage_layers(0) > split->stage_layers(1));
  const PipelineAcrossPoolsResult r =
      simulate_pipeline_across_pools(model, mix.job, *split, pools, *mix.joined);
  CHECK(r.step.expert_comm_s > 0);
  // Moving two layers either way is no faster.
  for (int first : {split->stage_layers(0) - 2, split->stage_layers(0) + 2}) {
    s::Parallelism q = p;
    q.add_stage_layers(first);
    q.add_stage_layers(32 - first);
    CHECK(simulate_pipeline_across_pools(model, mix.job, q, pools, *mix.joined).step.step_s >=
          r.step.step_s);
  }
}

TEST_CASE("the split's memory check counts each pool's GPU's FP8 transposes, as its stages do") {
  // Two DGX B200 pools, per-tensor FP8 over 16-bit weights: Transformer Engine keeps no transpose
  // of the FP8 weight copies where FP8 GEMMs take either layout (RuntimeMemory::
  // fp8_gemm_any_layout). With a capacity between stage 0's memory at 20 layers with and without
  // the transposes, the split lets it hold 20 from the pools' GPUs, the runtime given not saying.
  const AcrossTwoPools mix;
  const s::InstanceType& dgx_b200 = *mix.catalog.instances().find("onprem.dgx-b200")->value;
  const ComputeModel b200{mix.catalog.gpu_of(dgx_b200), s::FP8, mix.runtime,
                          KernelSetting::kTrainingStep};
  const auto first = testing::shipped_cluster("onprem.dgx-b200", 1);
  const auto second = testing::shipped_cluster("onprem.dgx-b200", 1);
  const auto job = testing::parse_message<s::TrainingJob>(
      "global_batch_size: 32 sequence_length: 4096 precision: FP8 fp8_recipe: CURRENT_SCALING "
      "optimizer: ADAM steps: 1");
  const RuntimeMemory plain = runtime_memory(mix.runtime, mix.p);
  RuntimeMemory any_layout = plain;
  any_layout.fp8_gemm_any_layout = true;
  const s::Parallelism holding = with_stage_totals(mix.p, {20, 12});
  const double with_transposes =
      estimate_stage_memory(mix.model, job, holding, 0, 1e18, plain).total_bytes();
  const double without =
      estimate_stage_memory(mix.model, job, holding, 0, 1e18, any_layout).total_bytes();
  REQUIRE(with_transposes > without);
  const double capacity = (with_transposes + without) / 2;
  const std::vector<StagePool> pools = {{first.get(), &b200, 1, capacity},
                                        {second.get(), &b200, 1, capacity}};
  CHECK(stage_speeds(mix.model, job, mix.p, pools, plain)[0].max_layers >= 20);
}

}  // namespace
}  // namespace clustersim
