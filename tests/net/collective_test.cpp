// Tests of collectives: closed forms on idle rings, conservation of bytes, monotonicity in
// bandwidth and hops, the errors for requests that cannot run, and the link that binds a ring.
#include "sim/net/collective.h"

#include <catch2/catch.hpp>
#include <limits>
#include <numeric>

#include "sim/net/collective_algorithms.h"
#include "tests/testing/cluster.h"
#include "tests/testing/units.h"

namespace clustersim {
namespace {

using testing::all_gpus;
using testing::shipped_cluster;

using testing::kGiB;

double seconds(const Topology& t, CollectiveOp op, CollectiveAlgorithm algorithm, double bytes,
               std::vector<int> gpus = {}) {
  if (gpus.empty()) gpus = all_gpus(t);
  return collective_time(t, {op, gpus, bytes, algorithm}).seconds();
}

// p5.48xlarge: 8 H100 on NVSwitch. NVLink 450 GB/s per direction x 0.80 (links.textproto), step
// latencies 0.98 us (low-latency protocol) and 3.75 us (Simple); NVLink hops add no hardware
// latency.
constexpr double kB = 450e9 * 0.80;
constexpr double kStep = 0.98e-6;
constexpr double kSimpleStep = 3.75e-6;

TEST_CASE("ring collectives on an idle NVSwitch node follow their closed forms") {
  auto t = shipped_cluster("aws.p5.48xlarge", 1);
  const double n = 8, s = 1 * kGiB;
  // A large buffer runs Simple. all-reduce: 2(n-1)/n S / B + 2(n-1) steps
  CHECK(seconds(*t, CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, s) ==
        Approx(2 * (n - 1) / n * s / kB + 2 * (n - 1) * kSimpleStep).epsilon(1e-6));
  // reduce-scatter and all-gather: (n-1)/n S / B + (n-1) steps
  for (CollectiveOp op : {CollectiveOp::kReduceScatter, CollectiveOp::kAllGather}) {
    CHECK(seconds(*t, op, CollectiveAlgorithm::kRing, s) ==
          Approx((n - 1) / n * s / kB + (n - 1) * kSimpleStep).epsilon(1e-6));
  }
  // broadcast: a pipelined chain, S / B + (n-1) steps
  CHECK(seconds(*t, CollectiveOp::kBroadcast, CollectiveAlgorithm::kRing, s) ==
        Approx(s / kB + (n - 1) * kSimpleStep).epsilon(1e-6));
  // send/recv: S / B + one step
  CHECK(seconds(*t, CollectiveOp::kSendRecv, CollectiveAlgorithm::kDirect, s, {0, 5}) ==
        Approx(s / kB + kStep).epsilon(0.01));
}

// Issue 17: HCCL's ring on an 8 x Ascend 910B node, modelled with the NCCL-like ring on the NPUs'
// HCCS (196 GB/s per direction) at the hccs class's priors: efficiency 0.80, Simple steps 3.75 us.
TEST_CASE("an HCCS ring all-reduce on eight Ascend 910B follows the ring's closed form") {
  auto t = shipped_cluster("huaweicloud.modelarts.bm.npu.arm.8snt9b2.d", 1);
  const double n = 8, s = 1 * kGiB, b = 196e9 * 0.80;
  CHECK(seconds(*t, CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, s) ==
        Approx(2 * (n - 1) / n * s / b + 2 * (n - 1) * kSimpleStep).epsilon(1e-6));
}

TEST_CASE("a small all-reduce runs the low-latency protocol: short steps, twice the wire bytes") {
  // NCCL's tuner: LL while latency + 2 x bytes / B beats Simple's latency + bytes / B.
  auto t = shipped_cluster("aws.p5.48xlarge", 1);
  const double n = 8;
  for (double s : {8.0, 256.0 * 1024}) {
    INFO(s << " bytes");
    const double low = 2 * (n - 1) * kStep + 2 * (2 * (n - 1) / n * s) / kB;
    const double simple = 2 * (n - 1) * kSimpleStep + 2 * (n - 1) / n * s / kB;
    REQUIRE(low < simple);
    CHECK(seconds(*t, CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, s) ==
          Approx(low).epsilon(1e-6));
  }
  // The crossover, where LL's extra wire time equals the latencies' difference:
  // 2(n-1)/n S / B = 2(n-1) (3.75 - 0.98) us, S = n B 2.77 us = 7.98 MB; above it, Simple.
  const double crossover = n * kB * (kSimpleStep - kStep);
  CHECK(seconds(*t, CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, 1.1 * crossover) ==
        Approx(2 * (n - 1) * kSimpleStep + 2 * (n - 1) / n * 1.1 * crossover / kB).epsilon(1e-6));
}

TEST_CASE("a ring across nodes pays NVLink steps inside nodes and network steps between them") {
  // 4 x p6-b200 (8 EFA each, one switch, no hardware latency): each channel's ring of 32 GPUs has
  // 28 NVLink hops and 4 EFA hops (40.9 us); a small all-reduce runs LL:
  //   latency = 2(n-1)/n x (28 x 0.98 + 4 x 40.9) us = 1.9375 x 191.04 = 370.1 us,
  // not 62 steps at the slowest hop (2536 us).
  auto t = shipped_cluster("aws.p6-b200.48xlarge", 4);
  CHECK(seconds(*t, CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, 8) ==
        Approx(1.9375 * (28 * 0.98 + 4 * 40.9) * 1e-6).epsilon(1e-3));
}

TEST_CASE("a tree runs at the network's tree bandwidth fraction, auto picks among NCCL's") {
  // 4 x p6-b200, 16 GiB: the tree's links would allow 493 GB/s busbw; NCCL's correction (0.782)
  // brings it to 385.6, next to the ring's 380 (the measured default: 381.8).
  auto t = shipped_cluster("aws.p6-b200.48xlarge", 4);
  const double s = 16 * kGiB, factor = bus_bandwidth_factor(CollectiveOp::kAllReduce, 32);
  const double tree = s / seconds(*t, CollectiveOp::kAllReduce, CollectiveAlgorithm::kTree, s);
  CHECK(tree * factor / 1e9 == Approx(385.6).epsilon(0.005));
  // Hierarchical is not an NCCL algorithm: auto never picks it, whatever the size.
  for (double bytes : {1e3, 1e6, 1e9, s}) {
    CHECK(choose_algorithm({CollectiveOp::kAllReduce, all_gpus(*t), bytes}, *t) !=
          CollectiveAlgorithm::kHierarchical);
  }
}

TEST_CASE("at scale NCCL's choice moves from ring to tree and the all-reduce slows down") {
  // A data-parallel group of one GPU per DGX H100 (tensor parallel 8), 128 MiB of gradients, on
  // rails: 16 nodes run the ring (its latency, 2 x 15 Simple InfiniBand steps, is small); 128
  // nodes the tree (a ring's 254 network steps cost more than the tree's lower bandwidth), which
  // takes longer than the ring did: weak scaling is not flat for network reasons.
  const double s = 128 * 1024 * 1024;
  double time[2];
  int i = 0;
  for (int nodes : {16, 128}) {
    auto t = shipped_cluster("onprem.dgx-h100", nodes, 1, "ib-rail-optimized");
    const Collective c{CollectiveOp::kAllReduce, all_gpus(*t), s};
    CHECK(choose_algorithm(c, *t) ==
          (nodes == 16 ? CollectiveAlgorithm::kRing : CollectiveAlgorithm::kTree));
    time[i++] = collective_time(*t, c).seconds();
  }
  CHECK(time[1] > 1.2 * time[0]);
}

TEST_CASE("the ring's bus bandwidth does not depend on the number of GPUs") {
  // busbw = algbw x 2(n-1)/n = B at large sizes for any n (H200 data: 363-367 GB/s for 4-8 GPUs).
  for (int n : {2, 4, 8}) {
    auto t = shipped_cluster("aws.p5.48xlarge", 1, n);
    const double s = 16 * kGiB;
    const double busbw = s / seconds(*t, CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, s) *
                         bus_bandwidth_factor(CollectiveOp::kAllReduce, n);
    CHECK(busbw == Approx(kB).epsilon(0.001));
  }
}

TEST_CASE("NVLS all-reduce moves S(1 + 1/n) per GPU link at the in-switch efficiency") {
  // Plus (n - 1) S / R for the operands (R = 147600 GB/s) and 2(n-1) Simple steps.
  auto t = shipped_cluster("aws.p5.48xlarge", 1);
  const double n = 8, s = 1 * kGiB;
  CHECK(
      seconds(*t, CollectiveOp::kAllReduce, CollectiveAlgorithm::kNvls, s) ==
      Approx(s * (1 + 1 / n) / (450e9 * 0.695) + (n - 1) * s / 147600e9 + 2 * (n - 1) * kSimpleStep)
          .epsilon(1e-6));
}

TEST_CASE("bytes sent equal bytes received, for every collective and algorithm") {
  auto single = shipped_cluster("aws.p5.48xlarge", 1);
  auto multi = shipped_cluster("aws.p4d.24xlarge", 4);
  struct Case {
    const Topology* t;
    CollectiveOp op;
    CollectiveAlgorithm algorithm;
  };
  const Case cases[] = {
      {single.get(), CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing},
      {single.get(), CollectiveOp::kAllReduce, CollectiveAlgorithm::kNvls},
      {single.get(), CollectiveOp::kReduceScatter, CollectiveAlgorithm::kRing},
      {single.get(), CollectiveOp::kAllGather, CollectiveAlgorithm::kRing},
      {single.get(), CollectiveOp::kBroadcast, CollectiveAlgorithm::kRing},
      {single.get(), CollectiveOp::kAllToAll, CollectiveAlgorithm::kDirect},
      {multi.get(), CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing},
      {multi.get(), CollectiveOp::kAllReduce, CollectiveAlgorithm::kTree},
      {multi.get(), CollectiveOp::kAllReduce, CollectiveAlgorithm::kHierarchical},
  };
  for (const Case& c : cases) {
    INFO(collective_op_name(c.op) << " " << collective_algorithm_name(c.algorithm));
    Simulation sim;
    Network net(&sim, c.t);
    bool done = false;
    start_collective(&net, {c.op, all_gpus(*c.t), 1e8, c.algorithm}, [&] { done = true; });
    sim.run();
    CHECK(done);
    const double sent = std::accumulate(net.bytes_sent().begin(), net.bytes_sent().end(), 0.0);
    const double received =
        std::accumulate(net.bytes_received().begin(), net.bytes_received().end(), 0.0);
    CHECK(sent > 0);
    CHECK(sent == Approx(received));
  }
}

TEST_CASE("each GPU of a ring all-reduce sends 2(n-1)/n of the buffer") {
  auto t = shipped_cluster("aws.p4d.24xlarge", 2);
  Simulation sim;
  Network net(&sim, t.get());
  start_collective(&net, {CollectiveOp::kAllReduce, all_gpus(*t), 1e9, CollectiveAlgorithm::kRing},
                   [] {});
  sim.run();
  for (double sent : net.bytes_sent()) CHECK(sent == Approx(2.0 * 15 / 16 * 1e9));
}

TEST_CASE("more bandwidth (less oversubscription) is never slower") {
  const Catalog& catalog = testing::shipped_catalog();
  double previous = 0;
  for (double ratio : {8.0, 4.0, 2.0, 1.0}) {
    ClusterSpec spec;
    spec.instance = catalog.instances().find("aws.p5.48xlarge")->value;
    spec.nodes = 32;
    spec.fabric = catalog.fabrics().find("clos-2to1")->value;  // 16 nodes per leaf: 2 leaves
    spec.oversubscription_override = ratio;
    auto t = build_topology(spec, catalog).topology;
    const double time = seconds(*t, CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, kGiB);
    if (previous > 0) CHECK(time <= previous);
    previous = time;
  }
}

TEST_CASE("a ring across two CPU sockets runs at the socket link's rate, one socket's does not") {
  // onprem.h100-nvl-8: NVLink pairs, PCIe 5 roots (63 GB/s a direction) on two sockets joined by
  // 64 GB/s at the socket class's efficiency, below the PCIe links' rate at the pcie class's.
  const Catalog& catalog = testing::shipped_catalog();
  const schema::InstanceType& nvl = *catalog.instances().find("onprem.h100-nvl-8")->value;
  schema::InstanceType one_socket = nvl;
  one_socket.clear_cpu_sockets();
  ClusterSpec spec;
  spec.instance = &one_socket;
  auto joined = build_topology(spec, catalog).topology;
  REQUIRE(joined != nullptr);
  auto split = shipped_cluster("onprem.h100-nvl-8", 1);
  const double socket = 64e9 * catalog.link_classes().find("socket")->value->efficiency_fraction();
  const double pcie = catalog.gpu_of(nvl).pcie().per_direction_gb_per_s() * 1e9 *
                      catalog.link_classes().find("pcie")->value->efficiency_fraction();
  REQUIRE(socket < pcie);
  const double s = 4 * kGiB, factor = bus_bandwidth_factor(CollectiveOp::kAllReduce, 8);
  const auto ring = [&](const Topology& t, std::vector<int> gpus) {
    return seconds(t, CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, s, std::move(gpus));
  };
  // The ring 0..7 crosses the sockets at 3 -> 4 and 7 -> 0, one flow each way.
  CHECK(s * factor / ring(*split, all_gpus(*split)) == Approx(socket).epsilon(0.01));
  CHECK(s * factor / ring(*joined, all_gpus(*joined)) == Approx(pcie).epsilon(0.01));
  // GPUs 0-3 sit on socket 0: the socket link carries nothing.
  CHECK(ring(*split, {0, 1, 2, 3}) == ring(*joined, {0, 1, 2, 3}));
}

TEST_CASE("fewer hops are never slower") {
  // The same 4 nodes on one switch, and spread over leaves of one node each (3 more hops).
  const Catalog& catalog = testing::shipped_catalog();
  auto one_switch = shipped_cluster("aws.p4d.24xlarge", 4);
  const double near =
      seconds(*one_switch, CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, 1e6);
  // clos-2to1 with 16 nodes per leaf keeps 4 nodes on one leaf: use a 1:1 override with 2 leaves
  // by taking 32 nodes and the first and last GPUs' nodes only.
  ClusterSpec spec;
  spec.instance = catalog.instances().find("aws.p4d.24xlarge")->value;
  spec.nodes = 32;
  spec.fabric = catalog.fabrics().find("clos-2to1")->value;
  spec.oversubscription_override = 1;
  auto spread = build_topology(spec, catalog).topology;
  std::vector<int> gpus;
  for (int node : {0, 1, 16, 17}) {
    for (int i = 0; i < 8; ++i) gpus.push_back(node * 8 + i);
  }
  const double far =
      seconds(*spread, CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, 1e6, gpus);
  CHECK(near <= far);
}

TEST_CASE("requests that cannot run are rejected with the reason") {
  auto nvlink = shipped_cluster("aws.p5.48xlarge", 1);
  auto a100 = shipped_cluster("aws.p4d.24xlarge", 1);
  auto pcie = shipped_cluster("aws.g5.48xlarge", 1);
  const std::vector<int> all = all_gpus(*nvlink);
  CHECK(collective_problem({CollectiveOp::kAllReduce, {3}, 1e6}, *nvlink) ==
        "a collective needs at least two GPUs, got 1");
  CHECK(collective_problem({CollectiveOp::kAllReduce, all, 0}, *nvlink) ==
        "the size must be > 0 bytes, got 0");
  CHECK(collective_problem({CollectiveOp::kAllReduce, {0, 0}, 1e6}, *nvlink) ==
        "GPU 0 appears twice");
  CHECK(collective_problem({CollectiveOp::kAllReduce, {0, 8}, 1e6}, *nvlink) ==
        "GPU 8 is not in the cluster (0..7)");
  const std::string no_nvls =
      "nvls needs NVLink SHARP: NVLink 4 or later GPUs on NVSwitches, which this "
      "instance lacks";
  CHECK(collective_problem({CollectiveOp::kAllReduce, all, 1e6, CollectiveAlgorithm::kNvls},
                           *pcie) == no_nvls);
  CHECK(collective_problem({CollectiveOp::kAllReduce, all, 1e6, CollectiveAlgorithm::kNvls},
                           *a100) == no_nvls);
  CHECK(collective_problem({CollectiveOp::kAllReduce, all, 1e6, CollectiveAlgorithm::kTree},
                           *nvlink) == "tree needs GPUs in two or more NVLink domains (nodes)");
  CHECK(collective_problem({CollectiveOp::kAllGather, all, 1e6, CollectiveAlgorithm::kDirect},
                           *nvlink) == "direct applies to all_to_all and send_recv");
}

TEST_CASE("a group's GPUs by node keep the given order, nodes in order of first appearance") {
  auto t = shipped_cluster("aws.p5.48xlarge", 3);  // GPUs 0-7, 8-15, 16-23
  CHECK(gpus_by_domain({17, 3, 9, 1, 16}, *t) ==
        std::vector<std::vector<int>>{{17, 16}, {3, 1}, {9}});
  CHECK(gpus_by_domain({5}, *t) == std::vector<std::vector<int>>{{5}});
  // The same in one list: domain i's GPUs from begin[i] to begin[i + 1].
  const DomainGroups flat = group_by_domain({17, 3, 9, 1, 16}, *t);
  CHECK(flat.gpus == std::vector<int>{17, 16, 3, 1, 9});
  CHECK(flat.begin == std::vector<int>{0, 2, 4, 5});
  // The checks that look at nodes.
  CHECK(collective_problem({CollectiveOp::kAllReduce, {0, 8}, 1e6, CollectiveAlgorithm::kNvls},
                           *t) == "nvls works within one NVLink domain");
  CHECK(collective_problem(
            {CollectiveOp::kAllReduce, {0, 1, 8}, 1e6, CollectiveAlgorithm::kHierarchical}, *t) ==
        "hierarchical needs as many GPUs in every NVLink domain");
  CHECK(collective_problem(
            {CollectiveOp::kAllReduce, {0, 8}, 1e6, CollectiveAlgorithm::kHierarchical}, *t) ==
        "hierarchical needs two or more GPUs per NVLink domain");
  CHECK(collective_problem(
            {CollectiveOp::kAllReduce, {0, 1, 8, 9}, 1e6, CollectiveAlgorithm::kHierarchical}, *t)
            .empty());
}

TEST_CASE("an oversubscription below 1 or infinite or zero nodes do not build") {
  const Catalog& catalog = testing::shipped_catalog();
  ClusterSpec spec;
  spec.instance = catalog.instances().find("aws.p5.48xlarge")->value;
  spec.nodes = 2;
  spec.oversubscription_override = 0.5;
  CHECK(build_topology(spec, catalog).error == "oversubscription must be finite and >= 1, got 0.5");
  // An infinite ratio left the spine links no capacity (an internal error on crossing them).
  spec.oversubscription_override = std::numeric_limits<double>::infinity();
  CHECK(build_topology(spec, catalog).error == "oversubscription must be finite and >= 1, got inf");
  spec.nodes = 0;
  CHECK(build_topology(spec, catalog).error == "nodes must be >= 1, got 0");
  spec.nodes = 1;
  spec.gpus_per_node = 9;
  CHECK(build_topology(spec, catalog).error ==
        "gpus per node must be in [1, 8] for aws.p5.48xlarge, got 9");
}

TEST_CASE("the automatic choice takes NVLS on Hopper NVSwitch nodes at large sizes") {
  auto t = shipped_cluster("aws.p5.48xlarge", 1);
  CHECK(choose_algorithm({CollectiveOp::kAllReduce, all_gpus(*t), kGiB}, *t) ==
        CollectiveAlgorithm::kNvls);
  auto a100 = shipped_cluster("aws.p4d.24xlarge", 1);
  CHECK(choose_algorithm({CollectiveOp::kAllReduce, all_gpus(*a100), kGiB}, *a100) ==
        CollectiveAlgorithm::kRing);
}

}  // namespace
}  // namespace clustersim

namespace clustersim {
namespace {

TEST_CASE("two GPUs per node cross a rail-optimized fabric on two rails: twice the bandwidth") {
  // A data-parallel group of GPU 0 and GPU 4 of every node (tensor parallel 4): its ring's two
  // channels leave and enter each node on rails 0 and 4, against one rail for GPU 0 alone.
  auto t = shipped_cluster("onprem.dgx-h100", 4, 0, "ib-rail-optimized");
  std::vector<int> one, two;
  for (int node = 0; node < 4; ++node) {
    one.push_back(8 * node);
    two.insert(two.end(), {8 * node, 8 * node + 4});
  }
  const double bytes = 1e9;
  const auto time = [&](const std::vector<int>& gpus) {
    return seconds(*t, CollectiveOp::kReduceScatter, CollectiveAlgorithm::kRing, bytes, gpus);
  };
  // Bus bandwidth (n-1)/n x S / t.
  const double single = 3.0 / 4 * bytes / time(one), pair = 7.0 / 8 * bytes / time(two);
  CHECK(pair / single == Approx(2).epsilon(0.05));
}

TEST_CASE("a ring's binding link: NVLink in a node, the NICs across p5 nodes, PCIe without "
          "NVLink") {
  const auto p5 = shipped_cluster("aws.p5.48xlarge", 1);
  CHECK(ring_binding_link(*p5, all_gpus(*p5)) == LinkKind::kNvlink);
  // Across two p5: each of the 8 channels crosses through its own NIC (400 Gbit/s x 0.955 =
  // 47.75 GB/s) once, and passes 7 NVLink hops on each GPU's 450 GB/s x 0.80 = 360 GB/s:
  // 1 / 47.75 > 7 / 360 per byte of a channel.
  const auto two_p5 = shipped_cluster("aws.p5.48xlarge", 2);
  CHECK(ring_binding_link(*two_p5, all_gpus(*two_p5)) == LinkKind::kNetwork);
  const auto g5 = shipped_cluster("aws.g5.48xlarge", 1);  // 8 A10G on PCIe
  CHECK(ring_binding_link(*g5, all_gpus(*g5)) == LinkKind::kPcie);
}

TEST_CASE("across two p5 the double binary tree binds on NVLink where the ring binds on the NICs") {
  // The tree's 16 halves (8 channels x 2 trees) each move S/16 over every edge. Inside a node
  // each half is a chain over all 8 GPUs both ways: a GPU sends on 2 chain edges where it is
  // inner, on 1 at either end (4 of the 16 halves), 4 + 2 x 12 = 28 edges = 2 (g-1)/g S = 1.75 S
  // out over its NVLink (360 GB/s); it leads its node in 2 halves, S/8 out over its NIC
  // (47.75 GB/s). 1.75 / 360 > 0.125 / 47.75 per byte: NVLink binds. The ring's bind on the NICs
  // (the case above).
  const auto two_p5 = shipped_cluster("aws.p5.48xlarge", 2);
  const Collective tree{CollectiveOp::kAllReduce, all_gpus(*two_p5), 1e9,
                        CollectiveAlgorithm::kTree};
  CHECK(collectives_binding_link(*two_p5, std::span(&tree, 1)) == LinkKind::kNvlink);
  Collective ring = tree;
  ring.algorithm = CollectiveAlgorithm::kRing;
  CHECK(collectives_binding_link(*two_p5, std::span(&ring, 1)) == LinkKind::kNetwork);
  // Two nodes' GPUs 0 only: one GPU per node, no chain; the tree's edge crosses the NICs.
  const Collective pair{CollectiveOp::kAllReduce, {0, 8}, 1e9, CollectiveAlgorithm::kTree};
  CHECK(collectives_binding_link(*two_p5, std::span(&pair, 1)) == LinkKind::kNetwork);
  // NVLS inside one node loads only each GPU's links to the NVSwitches.
  const auto p5 = shipped_cluster("aws.p5.48xlarge", 1);
  const Collective nvls{CollectiveOp::kAllReduce, all_gpus(*p5), 1e9, CollectiveAlgorithm::kNvls};
  CHECK(collectives_binding_link(*p5, std::span(&nvls, 1)) == LinkKind::kNvlink);
}

}  // namespace
}  // namespace clustersim
