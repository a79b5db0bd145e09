// Tests of the rings' channels kept per topology: a ring looked up is the one built afresh, and
// times its collective bit for bit as a fresh topology does; a change to the topology forgets the
// rings; past the bound, all are forgotten and a ring is built again the same.
#include "sim/net/ring_channels.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>
#include <vector>

#include "sim/engine/simulation.h"
#include "sim/net/network.h"
#include "tests/testing/cluster.h"

namespace clustersim {
namespace {

using testing::shipped_cluster;

// `c` alone on a fresh idle network of `t` (not the collective times kept): when it ends.
Picoseconds simulated(const Topology& t, const Collective& c) {
  Simulation sim;
  Network network(&sim, &t);
  Picoseconds end(0);
  start_collective(&network, c, [&] { end = sim.now(); });
  sim.run();
  return end;
}

// Whether two rings' channels are the same, edge for edge and picosecond for picosecond.
bool same_channels(const RingChannels& a, const RingChannels& b) {
  return a.domains == b.domains &&
         std::equal(a.channels.begin(), a.channels.end(), b.channels.begin(), b.channels.end(),
                    [](const RingChannel& x, const RingChannel& y) {
                      return x.edges == y.edges &&
                             x.step_latency_sum.low == y.step_latency_sum.low &&
                             x.step_latency_sum.simple == y.step_latency_sum.simple;
                    });
}

TEST_CASE("a ring's channels kept are those built afresh and time the ring bit for bit") {
  // Four DGX H100 nodes: two GPUs of each, so two channels, each entering the nodes at its GPU.
  auto t = shipped_cluster("onprem.dgx-h100", 4, 0, "ib-rail-optimized");
  const std::vector<int> gpus{9, 8, 0, 1, 16, 17, 24, 25};
  RingChannelCache& kept = t->ring_channels();
  const RingChannels& ring = kept.channels(gpus, false, *t);
  CHECK(same_channels(ring, build_ring_channels(gpus, false, *t)));
  REQUIRE(ring.channels.size() == 2);
  CHECK(ring.domains == 4);
  CHECK(ring.channels[0].edges.front() == std::pair{9, 8});
  CHECK(ring.channels[1].edges.front() == std::pair{8, 9});
  CHECK(kept.edges_kept() == 16);
  // Asked again: the same ring, nothing more kept. The chain over the same GPUs is its own.
  CHECK(&kept.channels(gpus, false, *t) == &ring);
  CHECK(kept.edges_kept() == 16);
  const RingChannels& chain = kept.channels(gpus, true, *t);
  CHECK(same_channels(chain, build_ring_channels(gpus, true, *t)));
  CHECK(chain.channels[0].edges.size() == 7);
  CHECK(kept.edges_kept() == 30);
  // The collectives started from the rings kept end when on a topology that keeps none.
  auto fresh = shipped_cluster("onprem.dgx-h100", 4, 0, "ib-rail-optimized");
  for (CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kAllGather,
                          CollectiveOp::kReduceScatter, CollectiveOp::kBroadcast}) {
    for (double bytes : {4e3, 256e6}) {
      const Collective c{op, gpus, bytes, CollectiveAlgorithm::kRing};
      const Picoseconds first = simulated(*fresh, c);
      CHECK(simulated(*t, c) == first);
      CHECK(simulated(*fresh, c) == first);
    }
  }
}

TEST_CASE("a change to the topology forgets the rings' channels kept") {
  auto t = shipped_cluster("onprem.dgx-h100", 2, 0, "ib-rail-optimized");
  const std::vector<int> gpus{0, 8};
  const Picoseconds before =
      t->ring_channels().channels(gpus, false, *t).channels[0].step_latency_sum.simple;
  StepLatencies slower = t->step_latencies(Protocol::kSimple);
  slower.network = slower.network + Picoseconds(1000000);
  t->set_step_latencies(Protocol::kSimple, slower);
  CHECK(t->ring_channels().edges_kept() == 0);
  const RingChannels& after = t->ring_channels().channels(gpus, false, *t);
  // Both edges cross the network: each step a microsecond slower.
  CHECK(after.channels[0].step_latency_sum.simple == before + Picoseconds(2000000));
  CHECK(same_channels(after, build_ring_channels(gpus, false, *t)));
}

TEST_CASE("rings past the bound forget all kept and are built again the same") {
  // Rings over two DGX H100 nodes' 16 GPUs in different orders: 8 channels of 16 edges each.
  auto t = shipped_cluster("onprem.dgx-h100", 2, 0, "ib-rail-optimized");
  RingChannelCache& kept = t->ring_channels();
  std::vector<int> gpus(16);
  std::iota(gpus.begin(), gpus.end(), 0);
  const std::vector<int> first = gpus;
  kept.channels(first, false, *t);
  CHECK(kept.edges_kept() == 128);
  size_t rings = 1;
  while (kept.edges_kept() == rings * 128) {
    std::next_permutation(gpus.begin(), gpus.end());
    kept.channels(gpus, false, *t);
    ++rings;
  }
  // The ring that passed the bound is the only one kept.
  CHECK(rings * 128 == RingChannelCache::kMaxEdges + 128);
  CHECK(kept.edges_kept() == 128);
  CHECK(same_channels(kept.channels(first, false, *t), build_ring_channels(first, false, *t)));
  CHECK(kept.edges_kept() == 256);
}

}  // namespace
}  // namespace clustersim
