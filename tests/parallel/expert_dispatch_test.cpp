// Tests of sim/parallel/expert_dispatch: the ranks and domains a deduplicating dispatcher sends a
// token to, and that dispatcher in the step against the plain all-to-all; HybridEP's combine floor
// and routing-map all-gather; NCCL's all-to-all and the flex dispatcher's kernels inside a domain.
#include "sim/parallel/expert_dispatch.h"

#include <bit>
#include <catch2/catch.hpp>
#include <cstdint>

#include "sim/net/collective_algorithms.h"
#include "sim/parallel/layer_times.h"
#include "sim/parallel/transformer_stages.h"
#include "tests/testing/cluster.h"
#include "tests/testing/parse_message.h"

namespace clustersim {
namespace {

namespace s = schema;

// Mixtral's top-2 of 8 experts over 2 domains: a token misses the other domain with probability
// C(4, 2) / C(8, 2) = 6 / 28, so it reaches 2 (1 - 6/28) = 44/28 of them. DeepSeek-V3's top-8 of
// 256 over 8 nodes: 8 (1 - prod (224 - i) / (256 - i)), under its 8 copies.
TEST_CASE("a deduplicating dispatcher sends a token once per group it picks") {
  CHECK(random_groups_per_token(8, 2, 2) == Approx(44.0 / 28));
  CHECK(random_groups_per_token(256, 1, 8) == Approx(1.0));
  double q = 1;
  for (int i = 0; i < 8; ++i) q *= (224.0 - i) / (256 - i);
  CHECK(random_groups_per_token(256, 8, 8) == Approx(8 * (1 - q)));
  CHECK(random_groups_per_token(256, 8, 8) < 8);
}

// The closed form against every k-subset of E experts, each equally likely: the mean number of
// groups of E / G consecutive experts the subset touches, for every small E, k and G dividing E.
TEST_CASE("the closed form of the groups a token reaches is the mean over every top-k choice") {
  for (int experts = 1; experts <= 12; ++experts) {
    for (int groups = 1; groups <= experts; ++groups) {
      if (experts % groups != 0) continue;
      for (int k = 1; k <= experts; ++k) {
        int64_t subsets = 0, reached = 0;
        for (uint32_t mask = 0; mask < (1u << experts); ++mask) {
          if (std::popcount(mask) != k) continue;
          ++subsets;
          for (int g = 0; g < groups; ++g) {
            const int per = experts / groups;
            reached += (mask >> (g * per) & ((1u << per) - 1)) != 0 ? 1 : 0;
          }
        }
        INFO("E " << experts << " k " << k << " G " << groups);
        CHECK(random_groups_per_token(experts, k, groups) ==
              Approx(static_cast<double>(reached) / subsets).epsilon(1e-12));
      }
    }
  }
}

// Qwen3-30B-A3B (128 experts, top-8, h 2048), 4096 tokens a micro-batch on one GPU, BF16, with EP
// over `nodes` p5.48xlarge.
TransformerPlan plan(int nodes, s::ExpertDispatcher dispatcher, bool consecutive = false) {
  const Catalog& catalog = testing::shipped_catalog();
  auto topology = testing::shipped_cluster("aws.p5.48xlarge", nodes);
  auto p = testing::parse_message<s::Parallelism>(
      "tensor_parallel: 1 pipeline_parallel: 1 context_parallel: 1 micro_batch_size: 1 "
      "virtual_stages: 1 zero_stage: 0 schedule: ONE_F_ONE_B recompute: RECOMPUTE_NONE");
  p.set_data_parallel(8 * nodes);
  p.set_expert_parallel(8 * nodes);
  p.set_expert_dispatcher(dispatcher);
  const auto job = testing::parse_message<s::TrainingJob>(
      "global_batch_size: " + std::to_string(8 * nodes) +
      " sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 1 expert_routing { "
      "consecutive_experts: " + (consecutive ? "true" : "false") + " }");
  const ComputeModel compute(catalog.gpu_of(*catalog.instances().find("aws.p5.48xlarge")->value),
                             s::BF16, *catalog.runtimes().find("default")->value,
                             KernelSetting::kTrainingStep);
  return transformer_plan(*catalog.models().find("qwen3-30b-a3b")->value, job, p, *topology,
                          compute);
}

// 1 - C(E - E/G, 8) / C(E, 8): a token of Qwen3-30B-A3B reaches a given one of G groups of its
// 128 experts.
double reach(int groups) {
  double q = 1;
  for (int i = 0; i < 8; ++i) q *= (128.0 - 128 / groups - i) / (128 - i);
  return 1 - q;
}

// Inside one node the deduplicating dispatcher's kernels run one all-to-all at the ring's rate, of
// a copy a token per rank reached: 8 (1 - C(112, 8) / C(128, 8)) = 5.34 of its 8 copies (16-bit,
// h 2048: S bytes for all 8 of 4096 tokens). Across two nodes a token reaches 16 (1 - C(120, 8) /
// C(128, 8)) ranks and 2 (1 - C(64, 8) / C(128, 8)) nodes: the node copies on the rails {g, g + 8},
// all eight at once, beside the rank copies inside each node: the longer of the two, shorter than
// the plain all-to-all's.
TEST_CASE("the deduplicating dispatcher's all-to-all is the longer of its rail and its domain") {
  constexpr int kAllToAllsPerStep = 48 * 4;  // dispatch and combine, forward and backward
  const double bytes = 2.0 * 4096 * 8 * 2048;
  auto one_node = testing::shipped_cluster("aws.p5.48xlarge", 1);
  GroupCollectives kernels(*one_node, {0, 1, 2, 3, 4, 5, 6, 7}, {}, true);
  CHECK(8 * reach(8) == Approx(5.3394).epsilon(1e-4));
  CHECK(plan(1, s::EXPERT_NODE_DEDUPLICATED).expert_comm_s[0] / kAllToAllsPerStep ==
        Approx(kernels.time(CollectiveOp::kAllToAll, bytes * reach(8)).seconds()).epsilon(1e-9));
  auto topology = testing::shipped_cluster("aws.p5.48xlarge", 2);
  std::vector<std::vector<int>> other_rails, other_nodes = {{8, 9, 10, 11, 12, 13, 14, 15}};
  for (int g = 1; g < 8; ++g) other_rails.push_back({g, g + 8});
  GroupCollectives rail(*topology, {0, 8}, other_rails, true);
  GroupCollectives node(*topology, {0, 1, 2, 3, 4, 5, 6, 7}, other_nodes, true);
  const double expected_s = std::max(rail.time(CollectiveOp::kAllToAll, bytes * 2 * reach(2) / 8),
                                     node.time(CollectiveOp::kAllToAll, bytes * 16 * reach(16) / 8))
                                .seconds();
  const double deduplicated = plan(2, s::EXPERT_NODE_DEDUPLICATED).expert_comm_s[0];
  CHECK(deduplicated / kAllToAllsPerStep == Approx(expected_s).epsilon(1e-9));
  CHECK(deduplicated < plan(2, s::EXPERT_ALL_TO_ALL).expert_comm_s[0]);
}

// What the pipeline's network traffic gets (expert_network_traffic.h): by the domains a group
// spans, the rail copies per rank copy, G reach(G) / (16 reach(16)) of EP 16, none where G does
// not divide the 128 experts; nothing for the plain dispatcher or a group inside one domain.
TEST_CASE("the deduplicating dispatcher's rail shares by the domains its groups span") {
  const std::vector<double> shares = plan(2, s::EXPERT_NODE_DEDUPLICATED).plan.expert_rail_shares;
  REQUIRE(shares.size() == 17);
  CHECK(shares[2] == Approx(2 * reach(2) / (16 * reach(16))).epsilon(1e-12));
  CHECK(shares[4] == Approx(4 * reach(4) / (16 * reach(16))).epsilon(1e-12));
  CHECK(shares[3] == 0);
  CHECK(shares[16] == Approx(1).epsilon(1e-12));
  CHECK(plan(2, s::EXPERT_ALL_TO_ALL).plan.expert_rail_shares.empty());
  CHECK(plan(1, s::EXPERT_NODE_DEDUPLICATED).plan.expert_rail_shares.empty());
}

// AutoModel's fake balanced gate, token t on experts t k .. t k + k - 1 mod E, groups of E / G:
// 12 experts top-2 over 4 groups of 3 starts at 0, 2, 4, 6, 8, 10 and reaches 1, 2, 1, 1, 2, 1
// groups (4/3, Kimi-K2's 384 top-8 over 32 ranks alike); aligned runs one group; k = E all; one
// expert a rank k ranks. The AutoModel rows: Qwen3-30B-A3B's top-8 of 128 one of 8 ranks,
// DeepSeek-V3's top-8 of 256 two of 64 ranks in one of 8 nodes.
TEST_CASE("the fake balanced gate's consecutive experts reach one or a few neighbouring ranks") {
  CHECK(consecutive_groups_per_token(12, 2, 4) == Approx(4.0 / 3));
  CHECK(consecutive_groups_per_token(384, 8, 32) == Approx(4.0 / 3));
  CHECK(consecutive_groups_per_token(12, 3, 4) == Approx(1.0));
  CHECK(consecutive_groups_per_token(8, 3, 4) == Approx(2.0));
  CHECK(consecutive_groups_per_token(8, 8, 4) == Approx(4.0));
  CHECK(consecutive_groups_per_token(8, 2, 8) == Approx(2.0));
  CHECK(consecutive_groups_per_token(128, 8, 8) == Approx(1.0));
  CHECK(consecutive_groups_per_token(256, 8, 64) == Approx(2.0));
  CHECK(consecutive_groups_per_token(256, 8, 8) == Approx(1.0));
}

// Qwen3-30B-A3B's consecutive experts lie on one rank of 8 or of 16: the deduplicating dispatcher
// moves one of a token's 8 copies, inside one node at the kernels' all-to-all rate, across two
// nodes one copy a token on the rails (one node reached of the one rank reached) beside the same
// inside each node. The plain all-to-all still moves all 8.
TEST_CASE("a deduplicating dispatcher sends a token once to the rank of its consecutive experts") {
  constexpr int kAllToAllsPerStep = 48 * 4;
  const double bytes = 2.0 * 4096 * 8 * 2048;
  auto one_node = testing::shipped_cluster("aws.p5.48xlarge", 1);
  GroupCollectives kernels(*one_node, {0, 1, 2, 3, 4, 5, 6, 7}, {}, true);
  CHECK(plan(1, s::EXPERT_NODE_DEDUPLICATED, true).expert_comm_s[0] / kAllToAllsPerStep ==
        Approx(kernels.time(CollectiveOp::kAllToAll, bytes / 8).seconds()).epsilon(1e-9));
  CHECK(plan(1, s::EXPERT_ALL_TO_ALL, true).expert_comm_s[0] ==
        Approx(plan(1, s::EXPERT_ALL_TO_ALL).expert_comm_s[0]).epsilon(1e-12));
  auto topology = testing::shipped_cluster("aws.p5.48xlarge", 2);
  std::vector<std::vector<int>> other_rails, other_nodes = {{8, 9, 10, 11, 12, 13, 14, 15}};
  for (int g = 1; g < 8; ++g) other_rails.push_back({g, g + 8});
  GroupCollectives rail(*topology, {0, 8}, other_rails, true);
  GroupCollectives node(*topology, {0, 1, 2, 3, 4, 5, 6, 7}, other_nodes, true);
  const double expected_s = std::max(rail.time(CollectiveOp::kAllToAll, bytes / 8),
                                     node.time(CollectiveOp::kAllToAll, bytes / 8))
                                .seconds();
  CHECK(plan(2, s::EXPERT_NODE_DEDUPLICATED, true).expert_comm_s[0] / kAllToAllsPerStep ==
        Approx(expected_s).epsilon(1e-9));
}

// A token's k distinct experts reach R (1 - C(E - E/R, k) / C(E, k)) of R ranks: one expert one
// rank, all of a rank's experts that rank alone, every expert every rank.
TEST_CASE("a token reaches the ranks holding its experts once each") {
  double q = 1;
  for (int i = 0; i < 8; ++i) q *= (112.0 - i) / (128 - i);
  CHECK(random_groups_per_token(128, 8, 8) == Approx(8 * (1 - q)));
  CHECK(random_groups_per_token(128, 1, 8) == Approx(1.0));
  CHECK(random_groups_per_token(8, 8, 8) == Approx(8.0));
  CHECK(random_groups_per_token(8, 8, 1) == Approx(1.0));
}

// tokens x copies x time per copy / SMs: the B300 measurement the shipped constant comes from,
// 8192 tokens of 7.956 copies on 24 SMs at 0.357 us a copy, is its 969.1 us to 0.05%.
TEST_CASE("HybridEP's combine floor is its serial reads spread over its SMs") {
  CHECK(combine_reduction_floor(8192, 7.955776, 0.357, 24).microseconds() ==
        Approx(969.1).epsilon(5e-4));
  CHECK(combine_reduction_floor(4096, 2, 1, 32).microseconds() == Approx(256.0));
  CHECK(combine_reduction_floor(0, 2, 1, 32) == Picoseconds(0));
}

// Qwen3-30B-A3B (128 experts, top-8, h 2048) at 4096 tokens a micro-batch, BF16, EP over the 8
// B200 of each of `nodes` DGX B200, the flex dispatcher, HybridEP's kernels on `sms` SMs (0: none),
// or `dispatcher`.
double hybridep_comm_s(int nodes, int sms,
                       s::ExpertDispatcher dispatcher = s::EXPERT_NODE_DEDUPLICATED) {
  const Catalog& catalog = testing::shipped_catalog();
  auto topology = testing::shipped_cluster("onprem.dgx-b200", nodes);
  auto p = testing::parse_message<s::Parallelism>(
      "tensor_parallel: 1 pipeline_parallel: 1 context_parallel: 1 micro_batch_size: 1 "
      "virtual_stages: 1 zero_stage: 0 schedule: ONE_F_ONE_B recompute: RECOMPUTE_NONE");
  p.set_expert_dispatcher(dispatcher);
  p.set_data_parallel(8 * nodes);
  p.set_expert_parallel(8 * nodes);
  if (sms > 0) p.set_expert_combine_sms(sms);
  const auto job = testing::parse_message<s::TrainingJob>(
      "global_batch_size: " + std::to_string(8 * nodes) +
      " sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 1");
  const ComputeModel compute(catalog.gpu_of(*catalog.instances().find("onprem.dgx-b200")->value),
                             s::BF16, *catalog.runtimes().find("default")->value,
                             KernelSetting::kTrainingStep);
  return transformer_plan(*catalog.models().find("qwen3-30b-a3b")->value, job, p, *topology,
                          compute)
      .expert_comm_s[0];
}

// The step's HybridEP routing-map all-gathers on the expert-parallel group of 8 x `nodes` DGX
// B200 GPUs: one per layer (the forward's dispatch), 4096 tokens x 128 experts a rank.
double routing_map_gathers_s(int nodes) {
  auto topology = testing::shipped_cluster("onprem.dgx-b200", nodes);
  std::vector<int> group(8 * nodes);
  for (int g = 0; g < 8 * nodes; ++g) group[g] = g;
  GroupCollectives expert(*topology, group, {}, true);
  const double bytes = routing_map_gather_bytes(4096, 128, 8 * nodes);
  return 48 * expert.time(CollectiveOp::kAllGather, bytes).seconds();
}

// In one node the combine kernel (the forward's combine and the dispatch's backward, 2 of a
// layer's 4 all-to-alls) takes 4096 x 8 (1 - q) x c / 32, c the B200's expert_combine_us_per_source,
// where the network would take its bytes faster: the step's 48 layers add 2 x (floor - all-to-all)
// each, besides the routing maps' all-gathers. Across two nodes (EP 16 spans two NVLink domains)
// only the all-gathers are added.
TEST_CASE("HybridEP's combine inside a domain takes its reduction floor, across domains not") {
  const double alone_s = hybridep_comm_s(1, 0);
  const double all_to_all_s = alone_s / (48 * 4);
  const double c_us = testing::shipped_catalog()
                          .gpu_of(*testing::shipped_catalog().instances().find("onprem.dgx-b200")
                                       ->value)
                          .expert_combine_us_per_source();
  REQUIRE(c_us > 0);
  const double floor_s = 4096 * random_groups_per_token(128, 8, 8) * c_us / 32 * 1e-6;
  REQUIRE(floor_s > all_to_all_s);
  const double gathers_s = routing_map_gathers_s(1);
  CHECK(hybridep_comm_s(1, 32) ==
        Approx(alone_s + 48 * 2 * (floor_s - all_to_all_s) + gathers_s));
  // A floor under the network's time.
  CHECK(hybridep_comm_s(1, 1024) == Approx(alone_s + gathers_s));
  CHECK(hybridep_comm_s(2, 32) == Approx(hybridep_comm_s(2, 0) + routing_map_gathers_s(2)));
}

// Every rank gathers each rank's tokens x experts one-byte map: the gathered buffer is
// tokens x experts x ranks (gpt-oss-120b on a DGX B200: 16,384 tokens of 128 experts over EP 8,
// 16 MiB). In the step the all-gather precedes the forward's dispatch alone: HybridEP's kernels
// (expert_combine_sms, on more SMs than any floor needs) add one per layer, 48 x its time on the
// node's 8 GPUs, about 10 us each (7/8 of 4 MiB at NVLink 5's ring rate, plus the latencies).
TEST_CASE("HybridEP gathers the routing maps once per layer, before the forward's dispatch") {
  CHECK(routing_map_gather_bytes(16384, 128, 8) == 16.0 * 1024 * 1024);
  CHECK(routing_map_gather_bytes(0, 128, 8) == 0);
  const double gathers_s = routing_map_gathers_s(1);
  CHECK(gathers_s / 48 > 7.0 / 8 * 4 * 1024 * 1024 / (900e9 * 0.758));
  CHECK(gathers_s / 48 < 20e-6);
  CHECK(hybridep_comm_s(1, 1024) - hybridep_comm_s(1, 0) == Approx(gathers_s).epsilon(1e-6));
}

// On one DGX B200 the step's 48 x 4 all-to-alls of S = 4096 x 8 16-bit copies of h 2048 each take
// a group's all-to-all time: NCCL's (the plain dispatcher) at NVLink 5's all-to-all share, the flex
// dispatcher's kernels (no combine floor) at the ring's rate, of a copy a rank reached: S x
// 8 (1 - C(112, 8) / C(128, 8)) / 8.
TEST_CASE("the plain dispatcher's all-to-alls are NCCL's, the flex dispatcher's its own kernels") {
  auto topology = testing::shipped_cluster("onprem.dgx-b200", 1);
  const std::vector<int> node = {0, 1, 2, 3, 4, 5, 6, 7};
  GroupCollectives nccl(*topology, node);
  GroupCollectives flex(*topology, node, {}, true);
  const double bytes = 2.0 * 4096 * 8 * 2048;
  const double nccl_s = nccl.time(CollectiveOp::kAllToAll, bytes).seconds();
  const double flex_s = flex.time(CollectiveOp::kAllToAll, bytes).seconds();
  const double latency = step_latency(0, 1, *topology).seconds();
  CHECK(nccl_s - latency == Approx((flex_s - latency) / 0.35).epsilon(1e-6));
  CHECK(hybridep_comm_s(1, 0, s::EXPERT_ALL_TO_ALL) == Approx(48 * 4 * nccl_s).epsilon(1e-9));
  const double reached = random_groups_per_token(128, 8, 8) / 8;
  CHECK(
      hybridep_comm_s(1, 0) ==
      Approx(48 * 4 * flex.time(CollectiveOp::kAllToAll, bytes * reached).seconds()).epsilon(1e-9));
}

}  // namespace
}  // namespace clustersim
