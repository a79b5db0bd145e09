// Closed forms as tests of ring attention on the engine: on an idle fabric every step but the
// last costs max(attention, transfer), so the K/V exchange hides exactly when a step's attention
// outlasts its block's transfer.
#include "sim/parallel/ring_attention.h"

#include <catch2/catch.hpp>

#include "tests/testing/cluster.h"

namespace clustersim {
namespace {

RingAttentionPass uniform_pass(int ranks, Picoseconds step, double bytes) {
  return {std::vector<std::vector<Picoseconds>>(ranks, std::vector<Picoseconds>(ranks, step)),
          bytes};
}

TEST_CASE("ring attention hides its K/V exchange exactly when a step outlasts its transfer") {
  // 4 ranks on 4 nodes of 8 H100 (one GPU each, every block crosses the network), 64 MiB blocks.
  auto topology = testing::shipped_cluster("aws.p5.48xlarge", 4);
  const std::vector<int> ring = {0, 8, 16, 24};
  const double bytes = 64.0 * 1024 * 1024;
  // With no compute the ring is its transfers alone: (CP - 1) T, T one block's transfer (every
  // rank sends one and receives one at a time, on links of their own).
  const Picoseconds transfers =
      simulate_ring_attention(*topology, ring, uniform_pass(4, Picoseconds(0), bytes)).total;
  const Picoseconds t(transfers.count() / 3);
  REQUIRE(t.count() * 3 == transfers.count());
  REQUIRE(t > Picoseconds::from_microseconds(100));
  // total = (CP - 1) max(C, T) + C.
  for (double factor : {0.5, 0.99, 1.01, 2.0}) {
    INFO(factor);
    const Picoseconds c(static_cast<int64_t>(t.count() * factor));
    const RingAttentionTime r = simulate_ring_attention(*topology, ring, uniform_pass(4, c, bytes));
    CHECK(r.compute.count() == 4 * c.count());
    CHECK(r.total.count() == 3 * std::max(c, t).count() + c.count());
    CHECK((r.exposed() == Picoseconds(0)) == (c >= t));
  }
}

TEST_CASE("a slower rank holds back the ring: its successor waits for its block") {
  auto topology = testing::shipped_cluster("aws.p5.48xlarge", 1);
  const std::vector<int> ring = {0, 1, 2, 3};
  RingAttentionPass pass = uniform_pass(4, Picoseconds::from_microseconds(100), 1024);
  pass.steps[1].assign(4, Picoseconds::from_microseconds(300));
  const RingAttentionTime r = simulate_ring_attention(*topology, ring, pass);
  // Rank 1 alone takes 4 x 300 us; the others, each waiting for a block rank 1 passes on (or a
  // receive it posts), cannot finish long before it.
  CHECK(r.compute == Picoseconds::from_microseconds(1200));
  CHECK(r.total >= Picoseconds::from_microseconds(1200));
  CHECK(r.total < Picoseconds::from_microseconds(1300));
}

}  // namespace
}  // namespace clustersim
