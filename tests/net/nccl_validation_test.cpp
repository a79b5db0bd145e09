// The network model against measured NCCL bus bandwidths (reference data validation/nccl.csv and
// nccl_2025.csv). The fitted numbers (links.textproto): NVLink 3 ring efficiency on the two 8x A100
// sweeps at their largest sizes, NVLink ring efficiency on 8x A100 and 8x H200 at 16 GiB, NVLS
// efficiency on 8x H200 at 16 GiB, NVLink's Simple step latency on 8x H100 at 8 MiB, NVLink 5 ring
// and NVLS on 8x B200 at 8 GiB and NVLS on the GB200 NVL72, EFA efficiency on 4 x 8 B200 at 16 GiB
// and the EFA step latency at 1-16 MiB. Every other row here is a check.
// Tolerance: 10% (the issue's bar); the comment gives today's error.
#include <catch2/catch.hpp>

#include "sim/net/collective.h"
#include "tests/testing/cluster.h"
#include "tests/testing/units.h"

namespace clustersim {
namespace {

using testing::all_gpus;
using testing::shipped_cluster;

using testing::kGiB;

double busbw_gb_per_s(const Topology& t, CollectiveOp op, CollectiveAlgorithm algorithm,
                      double bytes) {
  const Collective c{op, all_gpus(t), bytes, algorithm};
  const double algbw = bytes / collective_time(t, c).seconds();
  return algbw * bus_bandwidth_factor(op, t.gpu_count()) / 1e9;
}

void check_within_10_percent(double predicted, double measured) {
  INFO("predicted " << predicted << " GB/s, measured " << measured << " GB/s");
  CHECK(predicted == Approx(measured).epsilon(0.10));
}

TEST_CASE("8x A100 all-reduce by size: the nvlink3 class against both nccl-tests sweeps") {
  // nccl.csv: ml-engineering's sweep (out-of-place, 512 MiB-16 GiB) and Azure's ND A100 v4 sweep
  // (in-place, NCCL 2.18.5, 512 MiB-8 GiB). Fitted: the efficiency, on the two largest sizes' mean
  // (233.2 GB/s). Model: 230.1, 231.6, 232.3, 232.7, 232.9, 233.0 at 512 MiB-16 GiB: within 4% of
  // every row from 512 MiB (ml-engineering -0.8% to +3.3%, Azure +0.6% to +3.8%).
  auto t = shipped_cluster("onprem.dgx-a100-80gb", 1);
  const double mib = 1048576;
  const double sizes[] = {512 * mib, 1 * kGiB, 2 * kGiB, 4 * kGiB, 8 * kGiB, 16 * kGiB};
  const double ml_engineering[] = {222.72, 229.04, 231.41, 233.88, 234.61, 234.89};
  const double azure[] = {221.58, 228.10, 230.22, 230.48, 231.58};
  for (size_t i = 0; i < std::size(sizes); ++i) {
    INFO(sizes[i] << " bytes");
    const double predicted =
        busbw_gb_per_s(*t, CollectiveOp::kAllReduce, CollectiveAlgorithm::kAuto, sizes[i]);
    CHECK(predicted == Approx(ml_engineering[i]).epsilon(0.04));
    if (i < std::size(azure)) CHECK(predicted == Approx(azure[i]).epsilon(0.04));
  }
}

TEST_CASE("8x A100 at 16-256 MiB: the model is fast against both sweeps, as documented") {
  // Not fitted: NCCL's channels and protocol by size are not modelled, and the step latencies
  // that would fit these rows contradict the A100 training rows (links.textproto, nvlink3). Pinned
  // so that a change of the gap is seen: model / measured busbw at 16, 32, 64, 128 and 256 MiB
  // is 1.55, 1.39, 1.23, 1.25, 1.17 (ml-engineering) and 1.51, 1.45, 1.27, 1.27, 1.06 (Azure);
  // the model's 128 MiB all-reduce takes 1061 us against 1328 and 1348 us measured.
  auto t = shipped_cluster("onprem.dgx-a100-80gb", 1);
  const double mib = 1048576;
  const double sizes[] = {16 * mib, 32 * mib, 64 * mib, 128 * mib, 256 * mib};
  const double ml_engineering[] = {106.16, 138.49, 171.54, 176.92, 194.07};
  const double azure[] = {109.22, 132.77, 166.63, 174.18, 213.87};
  for (size_t i = 0; i < std::size(sizes); ++i) {
    INFO(sizes[i] << " bytes");
    const double predicted =
        busbw_gb_per_s(*t, CollectiveOp::kAllReduce, CollectiveAlgorithm::kAuto, sizes[i]);
    for (double measured : {ml_engineering[i], azure[i]}) {
      CHECK(predicted > measured);
      CHECK(predicted < 1.6 * measured);
    }
  }
}

TEST_CASE("A100 and A800 take the nvlink3 class, V100 and H100 the nvlink class") {
  // 16 GiB ring all-reduce busbw = line rate x efficiency (the step latencies are 0.02% of it):
  // A100 300 x 0.777 = 233.1, H100 450 x 0.80 = 360.
  auto a100 = shipped_cluster("onprem.dgx-a100-40gb", 1);
  CHECK(busbw_gb_per_s(*a100, CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, 16 * kGiB) ==
        Approx(233.1).epsilon(0.002));
  auto h100 = shipped_cluster("onprem.dgx-h100", 1);
  CHECK(busbw_gb_per_s(*h100, CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, 16 * kGiB) ==
        Approx(360.0).epsilon(0.002));
}

TEST_CASE("8x H200 at 16 GiB: ring 367.2, NVLS 480.0, all-gather 361.4, reduce-scatter 362.9") {
  // Model: 359.9 (-2.0%), 480.1 (+0.0%), 359.9 (-0.4%), 359.9 (-0.8%). Source: ml-engineering
  // all_reduce_bench.py / collectives at 16 GiB, NCCL_NVLS_ENABLE=0 for the ring row.
  auto t = shipped_cluster("aws.p5en.48xlarge", 1);
  check_within_10_percent(
      busbw_gb_per_s(*t, CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, 16 * kGiB), 367.2);
  check_within_10_percent(
      busbw_gb_per_s(*t, CollectiveOp::kAllReduce, CollectiveAlgorithm::kAuto, 16 * kGiB), 480.0);
  check_within_10_percent(
      busbw_gb_per_s(*t, CollectiveOp::kAllGather, CollectiveAlgorithm::kAuto, 16 * kGiB), 361.4);
  check_within_10_percent(
      busbw_gb_per_s(*t, CollectiveOp::kReduceScatter, CollectiveAlgorithm::kAuto, 16 * kGiB),
      362.9);
}

TEST_CASE("H200 NVLS and ring by GPU count at 8 GiB (not fitted)") {
  // Measured (ml-engineering, NVLS vs ring by GPU count): NVLS 414.2, 435.6, 460.0 for 5, 6, 7
  // GPUs; ring 363.3, 364.4, 365.1, 365.7 for 4..7. Model NVLS: 411.5, 440.9, 462.9; ring: 359.9.
  const double nvls[] = {414.2, 435.6, 460.0};
  const double ring[] = {363.3, 364.4, 365.1, 365.7};
  for (int n = 4; n <= 7; ++n) {
    auto t = shipped_cluster("aws.p5en.48xlarge", 1, n);
    check_within_10_percent(
        busbw_gb_per_s(*t, CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, 8 * kGiB),
        ring[n - 4]);
    if (n >= 5) {
      check_within_10_percent(
          busbw_gb_per_s(*t, CollectiveOp::kAllReduce, CollectiveAlgorithm::kNvls, 8 * kGiB),
          nvls[n - 5]);
    }
  }
}

TEST_CASE("8x H100 by size, NCCL's default (dgxc-benchmarking sweep, nccl.csv)") {
  // Fitted: the Simple step latency at 8 MiB (links.textproto). Checks at 128 MiB and above; at 2
  // and 32 MiB the model is 19% and 12% fast in time (busbw 107.6 and 336.0 against 86.9 and
  // 294.7): NCCL's channels by size are not modelled.
  auto t = shipped_cluster("onprem.dgx-h100", 1);
  const double mib = 1048576;
  const double sizes[] = {8 * mib, 128 * mib, 512 * mib, 2 * kGiB, 8 * kGiB, 16 * kGiB};
  const double measured[] = {176.77, 400.53, 436.79, 473.37, 480.16, 479.90};
  for (size_t i = 0; i < std::size(sizes); ++i) {
    INFO(sizes[i] << " bytes");
    check_within_10_percent(
        busbw_gb_per_s(*t, CollectiveOp::kAllReduce, CollectiveAlgorithm::kAuto, sizes[i]),
        measured[i]);
  }
}

TEST_CASE("8x H100: ~370 GB/s ring and ~480 GB/s NVLS (NCCL maintainer, nccl.csv)") {
  auto t = shipped_cluster("aws.p5.48xlarge", 1);
  check_within_10_percent(
      busbw_gb_per_s(*t, CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, 16 * kGiB), 370);
  check_within_10_percent(
      busbw_gb_per_s(*t, CollectiveOp::kAllReduce, CollectiveAlgorithm::kAuto, 16 * kGiB), 480);
}

TEST_CASE("4 x 8 H200 over EFA, ring all-reduce at 4 GiB: 364.87 GB/s (ml-engineering, p5en)") {
  // Model: 375.0 (+2.8%): 8 NICs x 50 GB/s x 0.955, the network bound.
  auto t = shipped_cluster("aws.p5en.48xlarge", 4);
  check_within_10_percent(
      busbw_gb_per_s(*t, CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, 4 * kGiB), 364.87);
}

TEST_CASE("8x B200 (p6-b200) at 8 GiB: ring 682.2, NVLS 838.0, by GPU count (nccl_2025.csv)") {
  // Fitted: ring and NVLS at 8 GPUs (nvlink5 link class). Checks, measured (NCCL_NVLS_ENABLE=0
  // for the ring): ring 673.8, 677.8, 677.8, 680.5 for 4..7 GPUs (model 682.2, +0.3% to +1.3%);
  // NVLS 778.2 and 811.2 for 6 and 7 GPUs (model 775.1, 810.9). NCCL's default at 4 and 5 GPUs
  // was the ring (673.2, 677.8): the model picks the ring at 4 (NVLS 655.6) and NVLS at 5 (725.9,
  // +7.1% against the default's measurement).
  const double ring[] = {673.8, 677.8, 677.8, 680.5, 682.2};
  const double nvls[] = {778.2, 811.2, 838.0};
  const double chosen[] = {673.2, 677.8};
  for (int n = 4; n <= 8; ++n) {
    INFO(n << " GPUs");
    auto t = shipped_cluster("aws.p6-b200.48xlarge", 1, n);
    check_within_10_percent(
        busbw_gb_per_s(*t, CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, 8 * kGiB),
        ring[n - 4]);
    if (n >= 6) {
      check_within_10_percent(
          busbw_gb_per_s(*t, CollectiveOp::kAllReduce, CollectiveAlgorithm::kNvls, 8 * kGiB),
          nvls[n - 6]);
    } else {
      check_within_10_percent(
          busbw_gb_per_s(*t, CollectiveOp::kAllReduce, CollectiveAlgorithm::kAuto, 8 * kGiB),
          chosen[n - 4]);
    }
  }
}

// nccl_2025.csv, ml-engineering all_reduce_bench.py on AWS P6-B200 (NCCL 2.27.7, NCCL's default
// algorithm with AWS's tuner plugin): bus bandwidth by size on 1 node (8 GPUs) and 4 nodes (32
// GPUs, 8 x EFA v4 each).
struct SweepRow {
  double bytes;
  double busbw_gb_per_s;
};

void check_sweep(const Topology& t, CollectiveAlgorithm algorithm,
                 const std::vector<SweepRow>& rows) {
  for (const SweepRow& row : rows) {
    INFO(row.bytes << " bytes");
    check_within_10_percent(busbw_gb_per_s(t, CollectiveOp::kAllReduce, algorithm, row.bytes),
                            row.busbw_gb_per_s);
  }
}

constexpr double kMiB = 1048576;

TEST_CASE("P6-B200, 1 node: all-reduce at 8 and 16 GiB, 839.07 and 845.67 GB/s (nccl_2025.csv)") {
  // Model: NVLS 834.9 and 836.1 (-0.5%, -1.1%). From 256 MiB to 4 GiB the benchmark measured
  // 646-741 GB/s, between the model's ring (634-679) and NVLS (766-832): NCCL's choice of
  // channels by size there is not modelled. Below 64 MiB the benchmark's per-call Python overhead
  // (48 us at 32 KiB) dominates.
  auto t = shipped_cluster("aws.p6-b200.48xlarge", 1);
  check_sweep(*t, CollectiveAlgorithm::kAuto, {{8 * kGiB, 839.07}, {16 * kGiB, 845.67}});
}

TEST_CASE("P6-B200, 4 nodes over EFA: ring all-reduce 1-16 MiB and 1-16 GiB (nccl_2025.csv)") {
  // Fitted: EFA efficiency at 16 GiB and the EFA step latency at 1-16 MiB with the ring
  // (links.textproto); the model's ring: 5.34, 19.69, 60.16, 348.7, 373.1, 379.7 (-0.6% to
  // -6.6%). From 32 to 512 MiB the measured curve climbs more slowly than latency plus bandwidth
  // (NCCL's channels by size); those rows are not compared. AWS's tuner plugin ran the ring there
  // (its p5en footnote: "Ring (default, AWS ofi tuner)"); the model's own choice below 1 GiB is
  // the tree, whose two EFA steps per level make it up to twice as fast as that measurement at
  // small sizes. From 1 GiB the default's figures hold for the model's choice too: 371.0, 382.0,
  // 384.9 (+2.5%, +1.2%, +0.8%).
  auto t = shipped_cluster("aws.p6-b200.48xlarge", 4);
  check_sweep(*t, CollectiveAlgorithm::kRing,
              {{1 * kMiB, 5.37},
               {4 * kMiB, 18.90},
               {16 * kMiB, 64.43},
               {1 * kGiB, 361.99},
               {4 * kGiB, 377.34},
               {16 * kGiB, 381.80}});
  check_sweep(*t, CollectiveAlgorithm::kAuto,
              {{1 * kGiB, 361.99}, {4 * kGiB, 377.34}, {16 * kGiB, 381.80}});
}

TEST_CASE("GB200 NVL72, 72 GPUs: NVLS 850 and non-SHARP 680 GB/s busbw (NVIDIA, nccl_2025.csv)") {
  // Fitted: NVLS on the 72 GPUs (with 8x B200); the ring is a check (682.2, +0.3%).
  auto t = shipped_cluster("onprem.gb200-nvl72", 18);
  REQUIRE(t->gpu_count() == 72);
  REQUIRE(t->domains() == 1);
  check_within_10_percent(
      busbw_gb_per_s(*t, CollectiveOp::kAllReduce, CollectiveAlgorithm::kAuto, 8 * kGiB), 850);
  check_within_10_percent(
      busbw_gb_per_s(*t, CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, 8 * kGiB), 680);
  CHECK(choose_algorithm({CollectiveOp::kAllReduce, all_gpus(*t), 8 * kGiB}, *t) ==
        CollectiveAlgorithm::kNvls);
}

// A DGX-A100-like node described in the test: 8 A100 80GB on NVSwitch with `nics` HDR (200 Gb/s)
// InfiniBand NICs.
std::unique_ptr<Topology> dgx_a100(int nodes, int nics, const std::string& gpu) {
  testing::TempDir dir;
  dir.write("dgx.textproto", R"(instance {
  name: "onprem.test-dgx-a100" provider: ONPREM gpu: ")" +
                                 gpu + R"(" gpu_count: 8
  gpu_interconnect: NVSWITCH vcpus: 256 host_memory_gib: 1024
  network { kind: INFINIBAND total_gbit_per_s: )" +
                                 std::to_string(200 * nics) +
                                 " nic_count: " + std::to_string(nics) + R"( }
  source { citation: "test fixture" } })");
  Diagnostics diagnostics;
  auto catalog = Catalog::load(
      {testing::source_path("models"), testing::source_path("topologies"), dir.path()},
      &diagnostics);
  REQUIRE_FALSE(diagnostics.has_errors());
  ClusterSpec spec;
  spec.instance = catalog->instances().find("onprem.test-dgx-a100")->value;
  spec.nodes = nodes;
  auto built = build_topology(spec, *catalog);
  REQUIRE(built.topology);
  return std::move(built.topology);
}

TEST_CASE("DGX-A100 with 8 x 200 Gb/s HDR: 192 GB/s multi-node all-reduce (NCCL maintainer)") {
  // Model: 8 x 25 GB/s x 0.95 = 190 GB/s (-1.0%).
  auto t = dgx_a100(2, 8, "A100-SXM4-80GB");
  check_within_10_percent(
      busbw_gb_per_s(*t, CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, 4 * kGiB), 192);
}

TEST_CASE("3 x 8 A100 40GB with 4 x HDR per node: peak ~96 GB/s (user report, nccl.csv)") {
  // Model: 4 x 25 GB/s x 0.95 = 95 GB/s (-1.0%). The report's average over sizes was 84.8.
  auto t = dgx_a100(3, 4, "A100-SXM4-40GB");
  check_within_10_percent(
      busbw_gb_per_s(*t, CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, 4 * kGiB), 96);
}

TEST_CASE("contention: 8 concurrent all-reduces across one shared NIC take 8x as long as one") {
  // Four nodes; all-reduce among the GPUs of equal local rank (a data-parallel group per tensor-
  // parallel rank). With one NIC per node the eight groups share it; with one NIC per GPU each
  // group has its own.
  for (int nics : {1, 8}) {
    auto t = dgx_a100(4, nics, "A100-SXM4-80GB");
    auto group = [](int local) {
      std::vector<int> gpus;
      for (int node = 0; node < 4; ++node) gpus.push_back(node * 8 + local);
      return gpus;
    };
    const double bytes = 1 * kGiB;
    const double one =
        collective_time(*t, {CollectiveOp::kAllReduce, group(0), bytes, CollectiveAlgorithm::kRing})
            .seconds();
    Simulation sim;
    Network net(&sim, t.get());
    Picoseconds last;
    for (int local = 0; local < 8; ++local) {
      start_collective(&net,
                       {CollectiveOp::kAllReduce, group(local), bytes, CollectiveAlgorithm::kRing},
                       [&] { last = std::max(last, sim.now()); });
    }
    sim.run();
    INFO(nics << " NIC(s) per node");
    CHECK(last.seconds() / one == Approx(nics == 1 ? 8 : 1).epsilon(0.05));
  }
}

}  // namespace
}  // namespace clustersim
