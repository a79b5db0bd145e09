// Tests of a mix's step (sim/parallel/pool_step.h): the balanced split of micro-batches against
// its closed form, the engine's step against the sum of its parts, unbalanced splits, and a
// mixture-of-experts model's experts' gradients between pools.
#include "sim/parallel/pool_step.h"

#include <catch2/catch.hpp>

#include "sim/net/collective.h"
#include "sim/net/inter_pool_topology.h"
#include "sim/sweep/configuration_space.h"
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

}  // namespace
}  // namespace clustersim
