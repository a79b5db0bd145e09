// Benchmark: wall time and peak memory to simulate a 1 GiB all-reduce over 8, 64, 1024 and 8192
// H100 GPUs (aws.p5.48xlarge nodes on one switch). Each size runs in its own child process so
// that its peak resident memory is its own. Per size: the time to build the topology, and the
// median of 5 timed runs (after one warm-up) of a ring all-reduce and of the automatic choice
// (which simulates every applicable algorithm once, then the chosen one).
//
// Usage: collective_bench [GPUS...]   (default 8 64 1024 8192). CSV on stdout.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "sim/net/collective.h"
#include "sim/net/topology_builder.h"
#include "tools/bench/bench_util.h"

namespace {

using namespace clustersim;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Runs one size and prints its CSV line; returns the process exit code.
int run_size(int gpus) {
  Diagnostics diagnostics;
  const std::string root = CLUSTERSIM_DEFAULT_ROOT;
  auto catalog = Catalog::load({root + "/models", root + "/topologies"}, &diagnostics);
  if (diagnostics.has_errors()) {
    std::fputs(diagnostics.to_string().c_str(), stderr);
    return 1;
  }
  ClusterSpec spec;
  spec.instance = catalog->instances().find("aws.p5.48xlarge")->value;
  spec.nodes = gpus / 8;
  const auto start = Clock::now();
  TopologyOrError built = build_topology(spec, *catalog);
  const double build_s = seconds_since(start);
  if (!built.topology) {
    std::fprintf(stderr, "%s\n", built.error.c_str());
    return 1;
  }
  const Topology& t = *built.topology;
  Collective ring{CollectiveOp::kAllReduce, t.first_gpus(), 1073741824.0,
                  CollectiveAlgorithm::kRing};
  Collective automatic = ring;
  automatic.algorithm = CollectiveAlgorithm::kAuto;
  double simulated_s = 0;
  const double ring_s =
      bench::median_seconds([&] { simulated_s = collective_time(t, ring).seconds(); });
  const double auto_s = bench::median_seconds([&] { collective_time(t, automatic); });
  std::printf("%d,%.4f,%.4f,%.4f,%.1f,%.6f\n", gpus, build_s, ring_s, auto_s, bench::peak_rss_mib(),
              simulated_s);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes = {8, 64, 1024, 8192};
  if (argc > 1) sizes.assign(argc - 1, 0);
  for (int i = 1; i < argc; ++i) sizes[i - 1] = std::atoi(argv[i]);
  std::printf("gpus,build_s,ring_wall_s,auto_wall_s,peak_rss_mib,simulated_ring_s\n");
  std::fflush(stdout);
  for (int gpus : sizes) {
    if (gpus < 8 || gpus % 8 != 0) {
      std::fprintf(stderr, "GPU counts must be multiples of 8, got %d\n", gpus);
      return 2;
    }
    if (!bench::in_child_process([gpus] { return run_size(gpus); })) return 1;
  }
  return 0;
}
