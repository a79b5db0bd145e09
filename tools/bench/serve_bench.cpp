// Benchmark: wall time and peak memory to serve one hour of traffic at 50 requests/s (180,000
// requests) on one deployment: generating the requests, building the iteration model and
// simulating every iteration of every replica, then the latency percentiles.
// Usage: serve_bench [SCENARIO]   (default: serve_hour_50rps.textproto beside this file). CSV.
#include <cstdio>
#include <string>

#include "sim/serve/serving_evaluation.h"
#include "tools/bench/bench_util.h"

namespace {

using namespace clustersim;

int run(const std::string& path) {
  const std::string root = CLUSTERSIM_DEFAULT_ROOT;
  Diagnostics diagnostics;
  auto catalog = Catalog::load({root + "/models", root + "/topologies"}, &diagnostics);
  auto loaded = catalog ? load_serving_scenario(path, *catalog, &diagnostics) : nullptr;
  if (!loaded) {
    std::fputs(diagnostics.to_string().c_str(), stderr);
    return 1;
  }
  const ServingConfiguration c = ServingSpace(*loaded).at(0);
  ServingEvaluation e;
  const double wall_s = bench::median_seconds(
      [&] {
        ServingEvaluator evaluator(*catalog, *loaded);  // fresh: generates the traffic again
        e = evaluator.evaluate(c);
      },
      3);
  std::printf("%s,%lld,%.3f,%.1f,%.1f,%.1f\n", loaded->scenario().name().c_str(),
              static_cast<long long>(e.metrics->measured), wall_s, bench::peak_rss_mib(),
              e.metrics->ttft_ms.p99, e.metrics->output_tokens_per_s);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1]
                                    : std::string(CLUSTERSIM_DEFAULT_ROOT) +
                                          "/tools/bench/serve_hour_50rps.textproto";
  std::printf("scenario,requests,wall_s,peak_rss_mib,ttft_p99_ms,output_tokens_per_s\n");
  return bench::in_child_process([&path] { return run(path); }) ? 0 : 1;
}
