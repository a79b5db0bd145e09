// Tests of the kind of link each communicating part of a step binds on (part_links.h), on shipped
// instances: PCIe for both parts on a node without NVLink, NVLink and the NICs apart on p4d.
#include "sim/parallel/part_links.h"

#include <catch2/catch.hpp>

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

TEST_CASE("tensor- and data-parallel traffic both bind on PCIe on a node without NVLink") {
  // huaweicloud_ascend_vs_a100's TP 2 x DP 4 on one node of 8 PCIe A100s.
  const auto node = shipped_cluster("huaweicloud.p3.16xlarge.8", 1);
  const PartLinks links = part_links(*node, plan_of(2, 1, 4), std::nullopt);
  CHECK(links.tensor == LinkKind::kPcie);
  CHECK(links.data == LinkKind::kPcie);
  CHECK_FALSE(links.context);  // no context-parallel group
}

TEST_CASE("on p4d the tensor-parallel group binds on NVLink, data-parallel replicas across "
          "nodes on the NICs") {
  const auto two = shipped_cluster("aws.p4d.24xlarge", 2);
  const PartLinks across = part_links(*two, plan_of(8, 1, 2), std::nullopt);
  CHECK(across.tensor == LinkKind::kNvlink);
  CHECK(across.data == LinkKind::kNetwork);
  // TP 2 x CP 2 x DP 4: the context ring {0, 2} and the data-parallel groups inside each node's
  // NVLink, the replicas of a rank across the two nodes.
  const PartLinks context = part_links(*two, plan_of(2, 2, 4), std::nullopt);
  CHECK(context.context == LinkKind::kNvlink);
  CHECK(context.data == LinkKind::kNetwork);
  // A tensor-parallel crossing's link is taken as given.
  CHECK(part_links(*two, plan_of(8, 1, 2), LinkKind::kPcie).tensor == LinkKind::kPcie);
  // Inside one node every group is on NVLink.
  const auto one = shipped_cluster("aws.p4d.24xlarge", 1);
  const PartLinks inside = part_links(*one, plan_of(2, 1, 4), std::nullopt);
  CHECK(inside.tensor == LinkKind::kNvlink);
  CHECK(inside.data == LinkKind::kNvlink);
}

TEST_CASE("hybrid sharding inside each node and replicas across: no one link for the "
          "data-parallel part") {
  // DP 16 over two p4d, sharded in groups of 8: the gathers and reduce-scatters on NVLink, the
  // replicas' all-reduce across the nodes.
  const auto two = shipped_cluster("aws.p4d.24xlarge", 2);
  PipelinePlan plan = plan_of(1, 1, 16);
  CHECK(part_links(*two, plan, std::nullopt).data == LinkKind::kNetwork);
  plan.data_parallel_shard = 8;
  CHECK_FALSE(part_links(*two, plan, std::nullopt).data);
  // Sharded across the nodes (groups of 16 = all): the NICs.
  plan.data_parallel_shard = 16;
  CHECK(part_links(*two, plan, std::nullopt).data == LinkKind::kNetwork);
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
