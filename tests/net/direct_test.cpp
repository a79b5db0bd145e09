// Tests of the direct all-to-all (sim/net/direct.cpp), the traffic of expert parallelism's token
// dispatch and combine: closed forms on one NVSwitch node, NICs shared across nodes, the
// network's all-to-all bandwidth share between NVLink domains and the NVLink class's inside one.
#include <catch2/catch.hpp>

#include "sim/net/collective.h"
#include "sim/net/collective_algorithms.h"
#include "tests/testing/cluster.h"
#include "tests/testing/units.h"

namespace clustersim {
namespace {

using testing::shipped_cluster;

using testing::kGiB;

// p5.48xlarge: 8 H100 on NVSwitch, NVLink 450 GB/s per direction x 0.80 for rings, of which NCCL's
// all-to-all reaches the nvlink class's all_to_all_bandwidth_fraction, 0.35 (links.textproto).
constexpr double kNvlink = 450e9 * 0.80;
constexpr double kNvlinkAllToAll = kNvlink * 0.35;

TEST_CASE("an all-to-all within an NVSwitch node takes S(n-1)/n over the link plus a step") {
  // Each GPU sends S/n to each of the n-1 others over its own NVLink port, all at once:
  //   t = S (n-1)/n / B + step latency, B the link's all-to-all rate.
  auto t = shipped_cluster("aws.p5.48xlarge", 1);
  REQUIRE(t->domain_all_to_all_bandwidth_fraction() == 0.35);
  const double s = 1 * kGiB;
  for (int n : {2, 4, 8}) {
    INFO(n << " GPUs");
    std::vector<int> gpus;
    for (int g = 0; g < n; ++g) gpus.push_back(g);
    const double latency = step_latency(0, 1, *t).seconds();
    CHECK(collective_time(*t, {CollectiveOp::kAllToAll, gpus, s, CollectiveAlgorithm::kDirect})
              .seconds() == Approx(s * (n - 1) / n / kNvlinkAllToAll + latency).epsilon(1e-6));
  }
}

// The finish time of each all-to-all of `groups`, all started at once on one network.
std::vector<double> concurrent_seconds(const Topology& t,
                                       const std::vector<std::vector<int>>& groups, double bytes) {
  Simulation sim;
  Network net(&sim, &t);
  std::vector<double> done(groups.size());
  for (size_t i = 0; i < groups.size(); ++i) {
    start_collective(&net, {CollectiveOp::kAllToAll, groups[i], bytes, CollectiveAlgorithm::kDirect},
                     [&, i] { done[i] = sim.now().seconds(); });
  }
  sim.run();
  return done;
}

TEST_CASE("expert-parallel all-to-alls across nodes slow k-fold when k GPUs share a NIC") {
  // p4d.24xlarge: 8 A100, 4 EFA NICs, each on the PCIe switch of two GPUs (k = 2). An EP group of
  // GPU 0 of two nodes sends S/2 each way through NIC 0; GPU 1's group shares that NIC, so with
  // both running each takes k times the single group's transfer time (plus the same latency).
  auto t = shipped_cluster("aws.p4d.24xlarge", 2);
  const double s = 256e6;
  const double latency = step_latency(0, 8, *t).seconds();
  const double alone = concurrent_seconds(*t, {{0, 8}}, s)[0] - latency;
  const std::vector<double> shared = concurrent_seconds(*t, {{0, 8}, {1, 9}}, s);
  for (double seconds : shared) CHECK(seconds - latency == Approx(2 * alone).epsilon(1e-6));
  // GPUs 0 and 2 use different NICs: no slowdown.
  for (double seconds : concurrent_seconds(*t, {{0, 8}, {2, 10}}, s)) {
    CHECK(seconds - latency == Approx(alone).epsilon(1e-6));
  }
  // The single flow runs at the NIC's rate: 100 Gbit/s x the EFA efficiency (0.955).
  CHECK(alone == Approx(s / 2 / (100e9 / 8 * 0.955)).epsilon(1e-6));
}

TEST_CASE("an all-to-all reaches the network's all-to-all share of its links between nodes only") {
  // DGX H100: one 400 Gbit/s InfiniBand NIC per GPU, x 0.95 for rings, of which an all-to-all's
  // transfers between nodes reach the class's all_to_all_bandwidth_fraction (0.74,
  // links.textproto). GPU 0 of two nodes: one flow each way through NIC 0 (the same rail).
  auto t = shipped_cluster("onprem.dgx-h100", 2, 0, "ib-rail-optimized");
  REQUIRE(t->all_to_all_bandwidth_fraction() == 0.74);
  const double s = 256e6;
  const double across = concurrent_seconds(*t, {{0, 8}}, s)[0] - step_latency(0, 8, *t).seconds();
  CHECK(across == Approx(s / 2 / (400e9 / 8 * 0.95 * 0.74)).epsilon(1e-6));
  // Inside a node the NVLink class's share holds, not the network's (450 GB/s x 0.80 x 0.35).
  const double inside = concurrent_seconds(*t, {{0, 1}}, s)[0] - step_latency(0, 1, *t).seconds();
  CHECK(inside == Approx(s / 2 / kNvlinkAllToAll).epsilon(1e-6));
  // Without the field (the share 1) the flow across runs at the ring's rate.
  t->set_all_to_all_bandwidth_fraction(1);
  CHECK(concurrent_seconds(*t, {{0, 8}}, s)[0] - step_latency(0, 8, *t).seconds() ==
        Approx(s / 2 / (400e9 / 8 * 0.95)).epsilon(1e-6));
}

TEST_CASE("NCCL's all-to-all inside an NVLink 5 domain reaches its class's share, HybridEP's not") {
  // DGX B200: NVLink 5 at 900 GB/s per direction x 0.758 for rings, of which NCCL's all-to-all
  // reaches the nvlink5 class's all_to_all_bandwidth_fraction (0.35, links.textproto); the flex
  // dispatcher's kernels (Collective::dispatcher_kernels) the ring's rate. GPUs 0 and 1: one flow
  // each way.
  auto t = shipped_cluster("onprem.dgx-b200", 1);
  REQUIRE(t->domain_all_to_all_bandwidth_fraction() == 0.35);
  REQUIRE(t->all_to_all_bandwidth_fraction() == 1);  // the network's, unused here
  const double s = 256e6, latency = step_latency(0, 1, *t).seconds();
  auto seconds = [&](bool dispatcher_kernels) {
    Simulation sim;
    Network net(&sim, t.get());
    double done = 0;
    start_collective(&net,
                     {CollectiveOp::kAllToAll, {0, 1}, s, CollectiveAlgorithm::kDirect,
                      dispatcher_kernels},
                     [&] { done = sim.now().seconds(); });
    sim.run();
    return done - latency;
  };
  CHECK(seconds(false) == Approx(s / 2 / (900e9 * 0.758 * 0.35)).epsilon(1e-6));
  CHECK(seconds(true) == Approx(s / 2 / (900e9 * 0.758)).epsilon(1e-6));
  // NVLink 4's class takes nvlink5's share (the same NCCL channels per NVLink); set to 1 (a
  // class without the field) its all-to-all runs at the ring's rate.
  auto h100 = shipped_cluster("aws.p5.48xlarge", 1);
  CHECK(h100->domain_all_to_all_bandwidth_fraction() == 0.35);
  h100->set_domain_all_to_all_bandwidth_fraction(1);
  CHECK(concurrent_seconds(*h100, {{0, 1}}, s)[0] - step_latency(0, 1, *h100).seconds() ==
        Approx(s / 2 / kNvlink).epsilon(1e-6));
}

}  // namespace
}  // namespace clustersim
