// Tests of the tensor-parallel rank symmetry: which clusters have it, its orbits, and a replicated
// network against every rank's transfers simulated one by one.
#include "sim/net/rank_symmetry.h"

#include <catch2/catch.hpp>
#include <numeric>

#include "sim/net/collective.h"
#include "sim/net/network.h"
#include "tests/testing/cluster.h"

namespace clustersim {
namespace {

using testing::shipped_cluster;

TEST_CASE("8-GPU nodes on rails, Clos or one switch have all 8 ranks interchangeable") {
  CHECK(shipped_cluster("onprem.dgx-a100-80gb", 4, 0, "ib-rail-optimized")
            ->rank_symmetry()
            .max_ranks() == 8);
  CHECK(shipped_cluster("aws.p5.48xlarge", 3, 0, "clos-2to1")->rank_symmetry().max_ranks() == 8);
  // Four NICs for eight GPUs (a NIC per GPU pair) and two NICs: still symmetric graphs.
  CHECK(shipped_cluster("aws.p4d.24xlarge", 2)->rank_symmetry().max_ranks() == 8);
  CHECK(shipped_cluster("aliyun.ecs.ebmgn8v.48xlarge", 2)->rank_symmetry().max_ranks() == 8);
  // Six GPUs per node: only pairs.
  CHECK(shipped_cluster("onprem.dgx-a100-80gb", 2, 6)->rank_symmetry().max_ranks() == 2);
}

TEST_CASE("NVL72 trays: ranks are interchangeable across the trays of a rack, not across racks") {
  // A whole rack: 72 = 8 x 9 GPUs, XOR of indices below 8 crosses pairs of trays.
  CHECK(shipped_cluster("onprem.gb200-nvl72", 18)->rank_symmetry().max_ranks() == 8);
  // 16 trays of a rack: 64 GPUs, all interchangeable, on rails too.
  CHECK(shipped_cluster("onprem.gb200-nvl72", 16, 0, "ib-rail-optimized")
            ->rank_symmetry()
            .max_ranks() == 64);
  // A rack and 2 trays of the next: the second domain's 8 GPUs bound it.
  CHECK(shipped_cluster("onprem.gb200-nvl72", 20)->rank_symmetry().max_ranks() == 8);
}

TEST_CASE("a node whose GPUs have different links has no rank symmetry") {
  Topology t(1, 2);
  const int32_t a = t.add_vertex({VertexKind::kGpu, 0, 0});
  const int32_t b = t.add_vertex({VertexKind::kGpu, 0, 1});
  const int32_t nvswitch = t.add_vertex({VertexKind::kNvSwitch, 0, 0});
  t.add_link(a, nvswitch, 300e9, {}, {}, LinkKind::kNvlink);
  t.add_link(b, nvswitch, 150e9, {}, {}, LinkKind::kNvlink);
  CHECK(t.rank_symmetry().max_ranks() == 1);
}

TEST_CASE("orbits: a GPU's own link has 8 images, a NIC shared by 4 GPUs 2") {
  auto t = shipped_cluster("aliyun.ecs.ebmgn8v.48xlarge", 2);
  const RankSymmetry& s = t->rank_symmetry();
  const std::vector<int32_t>& route = t->route(0, 8);  // GPU 0 to the same rank on node 1
  for (int32_t link : route) {
    const LinkInfo& info = t->links()[link];
    const bool own = info.from == t->gpu_vertex(0) || info.to == t->gpu_vertex(8);
    INFO("link " << link);
    if (own) {
      CHECK(s.stabiliser_size(link, 8) == 1);
    } else if (info.kind == LinkKind::kNetwork || info.kind == LinkKind::kPcie) {
      CHECK(s.stabiliser_size(link, 8) == 4);  // two NICs: XOR 4 swaps them, 1..3 fix them
    }
    CHECK(s.representative(link, 8) <= link);
    CHECK(s.representative(s.image(5, link), 8) == s.representative(link, 8));
  }
}

// Finish time of a ring all-reduce per tensor-parallel rank over the data-parallel GPUs plus a
// send per rank, all at once: on a network replicated over the ranks, or one by one.
double mixed_traffic_s(const Topology& t, int ranks, bool replicated, bool* symmetric = nullptr) {
  Simulation sim;
  Network net(&sim, &t, replicated ? ranks : 1);
  Picoseconds last;
  auto finished = [&] { last = std::max(last, sim.now()); };
  const int per_domain = t.domain_gpu_count(0);  // a node, or the trays of a rack
  for (int rank = 0; rank < (replicated ? 1 : ranks); ++rank) {
    std::vector<int> group;  // the same rank of the first block of every NVLink domain
    for (int d = 0; d < t.domains(); ++d) group.push_back(d * per_domain + rank);
    start_collective(&net, {CollectiveOp::kAllReduce, group, 4e8, CollectiveAlgorithm::kRing},
                     finished);
    // From the last block of domain 0 to the first of domain 1.
    net.start_transfer(per_domain - ranks + rank, per_domain + rank, 3e8, Picoseconds(0), finished);
  }
  sim.run();
  if (symmetric) *symmetric = net.symmetric();
  if (replicated) {
    const double sent = std::accumulate(net.bytes_sent().begin(), net.bytes_sent().end(), 0.0);
    const double received =
        std::accumulate(net.bytes_received().begin(), net.bytes_received().end(), 0.0);
    CHECK(sent == Approx(received));
    CHECK(net.bytes_sent()[ranks - 1] == net.bytes_sent()[0]);  // booked for every rank
  }
  return last.seconds();
}

TEST_CASE("rank 0's traffic on a replicated network takes as long as every rank's") {
  struct Case {
    const char* instance;
    const char* fabric;
    int ranks;
  };
  for (const Case& c :
       {Case{"onprem.dgx-a100-80gb", "ib-rail-optimized", 8},
        Case{"onprem.dgx-a100-80gb", "ib-rail-optimized", 2},
        Case{"aws.p5.48xlarge", "clos-2to1", 4}, Case{"aliyun.ecs.ebmgn8v.48xlarge", "", 8}}) {
    INFO(c.instance << " ranks " << c.ranks);
    auto t = shipped_cluster(c.instance, 4, 0, c.fabric);
    bool symmetric = false;
    const double one = mixed_traffic_s(*t, c.ranks, true, &symmetric);
    CHECK(symmetric);
    CHECK(one == Approx(mixed_traffic_s(*t, c.ranks, false)).epsilon(1e-12));
  }
}

TEST_CASE("NVL72: 8 ranks over two trays on a replicated network take as long as each rank") {
  // NVLink domains of 2 trays (8 GPUs), 4 of them; rank groups span both trays of a domain.
  for (const char* fabric : {"", "ib-rail-optimized"}) {
    INFO(fabric);
    auto t = shipped_cluster("onprem.gb200-nvl72", 8, 0, fabric, 2);
    bool symmetric = false;
    const double one = mixed_traffic_s(*t, 8, true, &symmetric);
    CHECK(symmetric);
    CHECK(one == Approx(mixed_traffic_s(*t, 8, false)).epsilon(1e-12));
  }
}

TEST_CASE("a replicated network reports routes that are not images of rank 0's") {
  // Two NICs for eight GPUs on two rails: from GPU 6 (NIC 1) to GPU 8 (NIC 0 of node 1) the
  // route crosses over NVLink to the lowest GPU on NIC 0's switch, GPU 0, for ranks 0 and 1 alike.
  auto t = shipped_cluster("aliyun.ecs.ebmgn8v.48xlarge", 4, 0, "ib-rail-optimized");
  bool symmetric = true;
  mixed_traffic_s(*t, 2, true, &symmetric);
  CHECK_FALSE(symmetric);
  // A second network on the topology takes the folded routes it keeps (replicated_routes.h),
  // and reports them the same.
  symmetric = true;
  mixed_traffic_s(*t, 2, true, &symmetric);
  CHECK_FALSE(symmetric);
}

}  // namespace
}  // namespace clustersim
