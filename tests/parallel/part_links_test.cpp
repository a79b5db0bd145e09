// Tests of the kind of link each communicating part of a step binds on (part_links.h), on shipped
// instances: PCIe for both parts on a node without NVLink, NVLink and the NICs apart on p4d.
#include "sim/parallel/part_links.h"

#include <catch2/catch.hpp>

#include "sim/net/collective.h"
#include "tests/testing/cluster.h"

namespace clustersim {
namespace {

using testing::shipped_cluster;

// A plan of one stage: TP x CP x DP GPUs in Megatron's order (tensor innermost).
PipelinePlan plan_of(int tp, int cp, int dp) {
  PipelinePlan plan;
  plan.tensor_parallel = tp;
  plan.context_parallel = cp;
  plan.data_parallel = dp;
  plan.experts.stage_gpus = tp * cp * dp;
  plan.experts.expert_tensor_parallel = tp;
  return plan;
}

// Data-parallel collectives of `groups` run as `algorithm`.
DataParallelAlgorithms ran(std::initializer_list<DataParallelGroup> groups,
                           CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing) {
  DataParallelAlgorithms out;
  for (DataParallelGroup group : groups) out.add(group, algorithm);
  return out;
}
const DataParallelAlgorithms kRings = ran({DataParallelGroup::kAll});

TEST_CASE("tensor- and data-parallel traffic both bind on PCIe on a node without NVLink") {
  // huaweicloud_ascend_vs_a100's TP 2 x DP 4 on one node of 8 PCIe A100s.
  const auto node = shipped_cluster("huaweicloud.p3.16xlarge.8", 1);
  const PartLinks links = part_links(*node, plan_of(2, 1, 4), std::nullopt, kRings);
  CHECK(links.tensor == LinkKind::kPcie);
  CHECK(links.data == LinkKind::kPcie);
  CHECK_FALSE(links.context);  // no context-parallel group
}

TEST_CASE("on p4d the tensor-parallel group binds on NVLink, data-parallel replicas across "
          "nodes on the NICs") {
  const auto two = shipped_cluster("aws.p4d.24xlarge", 2);
  const PartLinks across = part_links(*two, plan_of(8, 1, 2), std::nullopt, kRings);
  CHECK(across.tensor == LinkKind::kNvlink);
  CHECK(across.data == LinkKind::kNetwork);
  // TP 2 x CP 2 x DP 4: the context ring {0, 2} and the data-parallel groups inside each node's
  // NVLink, the replicas of a rank across the two nodes.
  const PartLinks context = part_links(*two, plan_of(2, 2, 4), std::nullopt, kRings);
  CHECK(context.context == LinkKind::kNvlink);
  CHECK(context.data == LinkKind::kNetwork);
  // A tensor-parallel crossing's link is taken as given.
  CHECK(part_links(*two, plan_of(8, 1, 2), LinkKind::kPcie, kRings).tensor == LinkKind::kPcie);
  // Inside one node every group is on NVLink.
  const auto one = shipped_cluster("aws.p4d.24xlarge", 1);
  const PartLinks inside = part_links(*one, plan_of(2, 1, 4), std::nullopt, kRings);
  CHECK(inside.tensor == LinkKind::kNvlink);
  CHECK(inside.data == LinkKind::kNvlink);
}

TEST_CASE("hybrid sharding inside each node and replicas across: no one link for the "
          "data-parallel part") {
  // DP 16 over two p4d, sharded in groups of 8: the gathers and reduce-scatters on NVLink, the
  // replicas' all-reduce across the nodes.
  const auto two = shipped_cluster("aws.p4d.24xlarge", 2);
  PipelinePlan plan = plan_of(1, 1, 16);
  const DataParallelAlgorithms hsdp =
      ran({DataParallelGroup::kShard, DataParallelGroup::kReplicas});
  CHECK(part_links(*two, plan, std::nullopt, kRings).data == LinkKind::kNetwork);
  plan.data_parallel_shard = 8;
  CHECK_FALSE(part_links(*two, plan, std::nullopt, hsdp).data);
  // Only the groups' own collectives ran (the replicas' moved nothing): NVLink.
  CHECK(part_links(*two, plan, std::nullopt, ran({DataParallelGroup::kShard})).data ==
        LinkKind::kNvlink);
  // Sharded across the nodes (groups of 16 = all): the NICs.
  plan.data_parallel_shard = 16;
  CHECK(part_links(*two, plan, std::nullopt, hsdp).data == LinkKind::kNetwork);
}

TEST_CASE("the data-parallel part binds where the algorithm that ran binds: the tree across two "
          "p5 on NVLink, the ring on the NICs") {
  // DP 16 over two p5 (collective_test.cpp: the tree's chains send 1.75 S over each GPU's
  // NVLink at 360 GB/s, its trees S/8 over each NIC at 47.75 GB/s; the ring's channels cross
  // each NIC with 1/7 of what they put on each NVLink, at 47.75 against 360 GB/s).
  const auto two = shipped_cluster("aws.p5.48xlarge", 2);
  const PipelinePlan plan = plan_of(1, 1, 16);
  CHECK(part_links(*two, plan, std::nullopt, kRings).data == LinkKind::kNetwork);
  const DataParallelAlgorithms tree = ran({DataParallelGroup::kAll}, CollectiveAlgorithm::kTree);
  CHECK(part_links(*two, plan, std::nullopt, tree).data == LinkKind::kNvlink);
  // All-reduces as trees, the parameters' all-gathers as rings: two links, none named.
  DataParallelAlgorithms both = tree;
  both |= kRings;
  CHECK_FALSE(part_links(*two, plan, std::nullopt, both).data);
  // Nothing ran: nothing binds.
  CHECK_FALSE(part_links(*two, plan, std::nullopt, DataParallelAlgorithms{}).data);
}

TEST_CASE("a step's run records the algorithm its data-parallel collectives ran as, and its "
          "data-parallel part binds where that algorithm binds") {
  // One stage, DP 16 over two p5, its gradients all-reduced in 4 buckets: NCCL's tree for a
  // bucket of 16 MB, the ring for one of 1 GB (`clustersim collective --instance
  // aws.p5.48xlarge --nodes 2`: the tree up to 64 MB); reduce-scattered, the ring at any size.
  const auto two = shipped_cluster("aws.p5.48xlarge", 2);
  const Collective small{CollectiveOp::kAllReduce, testing::all_gpus(*two), 16e6,
                         CollectiveAlgorithm::kAuto};
  const Collective large{CollectiveOp::kAllReduce, testing::all_gpus(*two), 1e9,
                         CollectiveAlgorithm::kAuto};
  REQUIRE(choose_algorithm(small, *two) == CollectiveAlgorithm::kTree);
  REQUIRE(choose_algorithm(large, *two) == CollectiveAlgorithm::kRing);
  auto links = [&](double bucket_bytes, bool shard) {
    PipelinePlan plan = plan_of(1, 1, 16);
    StageWork work{Picoseconds(1'000'000'000), Picoseconds(2'000'000'000), Picoseconds(0)};
    work.gpu_sms = 132;  // the p5's H100 SXM
    work.gradient_bytes = 4 * bucket_bytes;
    work.gradient_buckets = 4;
    plan.work = {work};
    plan.shard_gradients = shard;
    const PipelineTimeline run = simulate_pipeline(plan, *two);
    return part_links(*two, plan, std::nullopt, run.data_parallel_algorithms());
  };
  CHECK(links(16e6, false).data == LinkKind::kNvlink);  // the tree
  CHECK(links(1e9, false).data == LinkKind::kNetwork);  // the ring, as before
  CHECK(links(16e6, true).data == LinkKind::kNetwork);  // reduce-scatters: rings
}

TEST_CASE("links agree or are none") {
  const PartLinks a{LinkKind::kPcie, std::nullopt, LinkKind::kNetwork};
  const PartLinks b{LinkKind::kPcie, LinkKind::kNvlink, LinkKind::kNvlink};
  const PartLinks both = agreeing(a, b);
  CHECK(both.tensor == LinkKind::kPcie);
  CHECK_FALSE(both.context);
  CHECK_FALSE(both.data);
}

}  // namespace
}  // namespace clustersim
