// Tests of the collective times kept per topology: a time looked up is the one a fresh simulation
// gives, bit for bit; collectives started together are kept as a set, in order; a change to the
// topology forgets them; a full table forgets everything and still answers the same.
#include "sim/net/idle_collective_times.h"

#include <catch2/catch.hpp>
#include <vector>

#include "sim/engine/simulation.h"
#include "sim/net/network.h"
#include "tests/testing/cluster.h"

namespace clustersim {
namespace {

using testing::shipped_cluster;

// `collectives` started together on a fresh idle network of `t`, simulated here: when the last
// ends.
Picoseconds simulated(const Topology& t, const std::vector<Collective>& collectives) {
  Simulation sim;
  Network network(&sim, &t);
  Picoseconds last(0);
  for (const Collective& c : collectives) {
    start_collective(&network, c, [&] { last = std::max(last, sim.now()); });
  }
  sim.run();
  return last;
}

TEST_CASE("a collective timed again gets its simulation's time, bit for bit") {
  // Two DGX H100 nodes: GPU 0 and 8 on rail 0, GPU 1 and 9 on rail 1 (each NIC its own leaf link).
  auto t = shipped_cluster("onprem.dgx-h100", 2, 0, "ib-rail-optimized");
  const Collective ring{CollectiveOp::kAllGather, {0, 8}, 64e6, CollectiveAlgorithm::kRing};
  const Picoseconds first = collective_time(*t, ring);
  CHECK(first == simulated(*t, {ring}));
  CHECK(collective_time(*t, ring) == first);
  // Each field is part of the key: another size, order of GPUs or algorithm is its own time.
  Collective bigger = ring;
  bigger.bytes = 128e6;
  CHECK(collective_time(*t, bigger) == simulated(*t, {bigger}));
  CHECK(collective_time(*t, bigger) > first);
  const Collective tree{CollectiveOp::kAllReduce, {0, 8}, 64e6, CollectiveAlgorithm::kTree};
  const Collective ring_reduce{CollectiveOp::kAllReduce, {0, 8}, 64e6, CollectiveAlgorithm::kRing};
  CHECK(collective_time(*t, tree) == simulated(*t, {tree}));
  CHECK(collective_time(*t, ring_reduce) == simulated(*t, {ring_reduce}));
  CHECK(collective_time(*t, ring) == first);
}

TEST_CASE("collectives started together are timed as a set, in order, apart from each alone") {
  // Two DGX H100 nodes: the all-to-alls of GPUs 0-8 and 1-9 use rails 0 and 1, apart; two groups
  // on GPUs 0 and 8 of their own use the same NIC and slow each other.
  auto t = shipped_cluster("onprem.dgx-h100", 2, 0, "ib-rail-optimized");
  const Collective a{CollectiveOp::kAllToAll, {0, 8}, 256e6, CollectiveAlgorithm::kDirect};
  const Collective b{CollectiveOp::kAllToAll, {1, 9}, 256e6, CollectiveAlgorithm::kDirect};
  const Collective same_rail{CollectiveOp::kSendRecv, {0, 8}, 256e6, CollectiveAlgorithm::kDirect};
  const Picoseconds alone = collective_time(*t, a);
  const std::vector<Collective> apart{a, b}, shared{a, same_rail};
  CHECK(concurrent_collectives_time(*t, apart) == simulated(*t, apart));
  CHECK(concurrent_collectives_time(*t, shared) == simulated(*t, shared));
  CHECK(concurrent_collectives_time(*t, shared) > alone);
  // Kept: asked again, in the same order, the same; one alone is still its own.
  CHECK(concurrent_collectives_time(*t, shared) == simulated(*t, shared));
  CHECK(collective_time(*t, a) == alone);
  const std::vector<Collective> reversed{same_rail, a};
  CHECK(concurrent_collectives_time(*t, reversed) == simulated(*t, reversed));
}

TEST_CASE("a change to the topology forgets the times kept") {
  // A tree all-reduce across two nodes runs at the fabric's tree share of the ring's bandwidth.
  auto t = shipped_cluster("onprem.dgx-h100", 2, 0, "ib-rail-optimized");
  const Collective tree{CollectiveOp::kAllReduce, {0, 8}, 256e6, CollectiveAlgorithm::kTree};
  const Picoseconds before = collective_time(*t, tree);
  t->set_tree_bandwidth_fraction(t->tree_bandwidth_fraction() / 2);
  const Picoseconds after = collective_time(*t, tree);
  CHECK(after == simulated(*t, {tree}));
  CHECK(after > before);
}

TEST_CASE("a full table forgets everything and answers as before") {
  auto t = shipped_cluster("aws.p5.48xlarge", 1);
  const Collective first{CollectiveOp::kAllReduce, {0, 1}, 1e6, CollectiveAlgorithm::kRing};
  const Picoseconds time = collective_time(*t, first);
  // More sizes than the table keeps: the first is forgotten, then simulated again.
  for (size_t i = 1; i <= IdleCollectiveTimes::kMaxCollectives; ++i) {
    collective_time(*t, {CollectiveOp::kAllReduce, {0, 1}, 1e6 + static_cast<double>(i),
                         CollectiveAlgorithm::kRing});
  }
  CHECK(collective_time(*t, first) == time);
  CHECK(time == simulated(*t, {first}));
}

}  // namespace
}  // namespace clustersim
