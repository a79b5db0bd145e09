// Tests of NCCL's tuning model: its per-protocol closed forms, its ring bandwidth search on the
// shipped PCIe servers, the switch point its formulas give, and that the engine runs its choice.
#include "sim/net/nccl_tuner.h"

#include <catch2/catch.hpp>

#include "tests/testing/cluster.h"

namespace clustersim {
namespace {

using testing::shipped_cluster;

std::vector<int> first(int n) {
  std::vector<int> gpus(n);
  for (int g = 0; g < n; ++g) gpus[g] = g;
  return gpus;
}

TEST_CASE("NCCL's ring times follow its tuner's closed forms per protocol") {
  const int n = 8;
  const double bus = 10, bytes = 4096;  // GB/s, B
  // LL: 6.6 us + 2(n-1) x 1.0 us, then the bytes at a quarter of the bus bandwidth, as algorithm
  // bandwidth bus x n / 2(n-1) (GB/s = 1000 B/us).
  const double ll_algbw = bus / 4 * n / (2.0 * (n - 1));
  CHECK(nccl_ring_time_us(CollectiveOp::kAllReduce, n, bus, 89, Protocol::kLowLatency, bytes) ==
        Approx(6.6 + 2 * (n - 1) * 1.0 + bytes / (1000 * ll_algbw)));
  // Simple: 8.4 us + 2(n-1) x 5.7 us, the bytes at the whole bus bandwidth.
  const double simple_algbw = bus * n / (2.0 * (n - 1));
  CHECK(nccl_ring_time_us(CollectiveOp::kAllReduce, n, bus, 89, Protocol::kSimple, bytes) ==
        Approx(8.4 + 2 * (n - 1) * 5.7 + bytes / (1000 * simple_algbw)));
  // All-gather: n-1 steps, LL at a third; broadcast: one hop, n steps' worth of bandwidth ratio 1.
  CHECK(nccl_ring_time_us(CollectiveOp::kAllGather, n, bus, 89, Protocol::kLowLatency, bytes) ==
        Approx(6.6 + (n - 1) * 1.0 + bytes / (1000 * bus / 3 * n / (n - 1.0))));
  CHECK(nccl_ring_time_us(CollectiveOp::kBroadcast, n, bus, 89, Protocol::kSimple, bytes) ==
        Approx(8.4 + 5.7 + bytes / (1000 * bus)));
  // LL's bus bandwidth stops at 87.7 GB/s from Ampere on, 39 before.
  CHECK(nccl_ring_time_us(CollectiveOp::kAllReduce, 2, 800, 90, Protocol::kLowLatency, 1e6) ==
        Approx(6.6 + 2 + 1e6 / (1000 * 87.7)));
  CHECK(nccl_ring_time_us(CollectiveOp::kAllReduce, 2, 800, 75, Protocol::kLowLatency, 1e6) ==
        Approx(6.6 + 2 + 1e6 / (1000 * 39.0)));
}

TEST_CASE("NCCL rates PCIe by generation and lanes and CPU sockets by vendor") {
  CHECK(nccl_pcie_gb_per_s(3, 16) == Approx(12));  // PCI_BW, "PCI Gen3 x16"
  CHECK(nccl_pcie_gb_per_s(4, 16) == Approx(24));
  CHECK(nccl_pcie_gb_per_s(5, 16) == Approx(48));
  CHECK(nccl_pcie_gb_per_s(0, 16) == 0);
  CHECK(nccl_socket_gb_per_s("Intel Xeon Platinum 8480C") == 10);
  CHECK(nccl_socket_gb_per_s("AMD") == 16);
  CHECK(nccl_socket_gb_per_s("") == 0);
  CHECK(nccl_compute_capability("Ada Lovelace") == 89);
  CHECK(nccl_compute_capability("Da Vinci") == 0);
}

TEST_CASE("NCCL's ring search on the shipped PCIe servers") {
  // onprem.l40-8: PCIe 4 x16 (24 GB/s), Intel sockets (10 GB/s). Four GPUs under one root: a
  // channel of 20 GB/s takes 20 x 6/5 = 24 of each GPU link (Intel P2P overhead): 1 x 20. Eight
  // across the sockets: 10 GB/s a channel, once each way over the socket link: 1 x 10.
  auto l40 = shipped_cluster("onprem.l40-8", 1);
  CHECK(nccl_ring_bus_gb_per_s(first(4), *l40) == Approx(20));
  CHECK(nccl_ring_bus_gb_per_s(first(8), *l40) == Approx(10));
  // aws.g6e.48xlarge: AMD sockets (16 GB/s), no P2P overhead: 2 x 12 = 24 on one socket, 1 x 15
  // across (the next speeds, 12 and 10, fit one channel; 7 fits two, 14 < 15).
  auto l40s = shipped_cluster("aws.g6e.48xlarge", 1);
  CHECK(nccl_ring_bus_gb_per_s(first(4), *l40s) == Approx(24));
  CHECK(nccl_ring_bus_gb_per_s(first(8), *l40s) == Approx(15));
  // onprem.h100-nvl-8: PCIe 5 x16 (48 GB/s), NVLink pairs, Hopper's speed list (60, 50, 40, ...,
  // 12, 6, 3). One socket: 40 x 6/5 = 48 on the PCIe hops, 1 x 40. Across Intel sockets: 12 does
  // not fit 10, 6 fits one channel, then 3 (above 0.49 x 6) fits three: 9.
  auto nvl = shipped_cluster("onprem.h100-nvl-8", 1);
  CHECK(nccl_ring_bus_gb_per_s(first(4), *nvl) == Approx(40));
  CHECK(nccl_ring_bus_gb_per_s(first(8), *nvl) == Approx(9));
  // The NVLink pair alone is not NCCL-tuned here (NVLink-only: LL128's domain).
  CHECK_FALSE(nccl_tunes_ring({0, 1}, *nvl));
  CHECK(nccl_tunes_ring({0, 1, 2, 3}, *nvl));
}

TEST_CASE("a PCIe ring NCCL rates no link of gets no bandwidth estimate (the engine chooses)") {
  // Two GPUs under one root whose links carry no NCCL rating (a GPU without its PCIe generation).
  Topology t(1, 2);
  t.add_vertex({VertexKind::kGpu, 0, 0});
  t.add_vertex({VertexKind::kGpu, 0, 1});
  const int32_t root = t.add_vertex({VertexKind::kPcieSwitch, 0, 0});
  for (int gpu : {0, 1}) t.add_link(gpu, root, 20e9, {}, {}, LinkKind::kPcie);
  t.set_nccl_host(89, true);
  REQUIRE(nccl_tunes_ring({0, 1}, t));
  CHECK(nccl_ring_bus_gb_per_s({0, 1}, t) == 0);
  // Rated at PCIe 4 x16 (24 GB/s) through an Intel root: 20 x 6/5 = 24 fits one channel of 20.
  Topology rated(1, 2);
  rated.add_vertex({VertexKind::kGpu, 0, 0});
  rated.add_vertex({VertexKind::kGpu, 0, 1});
  const int32_t rated_root = rated.add_vertex({VertexKind::kPcieSwitch, 0, 0});
  for (int gpu : {0, 1}) rated.add_link(gpu, rated_root, 20e9, {}, {}, LinkKind::kPcie, 24);
  rated.set_nccl_host(89, true);
  CHECK(nccl_ring_bus_gb_per_s({0, 1}, rated) == Approx(20));
}

TEST_CASE("NCCL switches an 8-GPU all-reduce on the L40 server where its formulas cross") {
  // LL and Simple meet where their latencies' gap, 1.8 + 2(n-1) x 4.7 us = 67.6 us at n = 8, equals
  // the bytes' extra time on LL: S x 2(n-1)/n / (1000 bus) x (4 - 1), so S = 67.6 x 1000 x bus x
  // n / (3 x 2(n-1)) = 128,762 B at bus = 10 GB/s: 64 KiB runs LL, 128 KiB Simple.
  const int n = 8;
  const double bus = 10;
  const double gap_us = 8.4 - 6.6 + 2 * (n - 1) * (5.7 - 1.0);
  const double switch_bytes = gap_us * 1000 * bus * n / (3.0 * 2 * (n - 1));
  CHECK(switch_bytes == Approx(128762).epsilon(1e-4));
  CHECK(nccl_ring_protocol(CollectiveOp::kAllReduce, n, bus, 89, switch_bytes * 0.999) ==
        Protocol::kLowLatency);
  CHECK(nccl_ring_protocol(CollectiveOp::kAllReduce, n, bus, 89, switch_bytes * 1.001) ==
        Protocol::kSimple);
  // The engine runs that choice: from 64 to 128 KiB the wire bytes are the same (LL's twice the
  // data), so the time grows by the latency gap of the engine's PCIe steps, 2(n-1) x (5.7 - 1.0) us
  // (the socket hops' hardware latency is in both).
  auto l40 = shipped_cluster("onprem.l40-8", 1);
  const auto time_us = [&](double bytes) {
    return collective_time(*l40, {CollectiveOp::kAllReduce, first(n), bytes}).seconds() * 1e6;
  };
  CHECK(time_us(131072) - time_us(65536) == Approx(2 * (n - 1) * (5.7 - 1.0)).epsilon(1e-3));
}

TEST_CASE("the protocol NCCL's tuner picks is never predicted slower than the other") {
  for (int n : {2, 4, 8}) {
    for (double bus : {9.0, 20.0, 48.0}) {
      for (CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kAllGather,
                              CollectiveOp::kReduceScatter, CollectiveOp::kBroadcast}) {
        for (double bytes = 8; bytes <= 1e9; bytes *= 1.7) {
          const Protocol chosen = nccl_ring_protocol(op, n, bus, 89, bytes);
          const double time = nccl_ring_time_us(op, n, bus, 89, chosen, bytes);
          for (Protocol other : {Protocol::kLowLatency, Protocol::kSimple}) {
            CHECK(time <= nccl_ring_time_us(op, n, bus, 89, other, bytes));
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace clustersim
