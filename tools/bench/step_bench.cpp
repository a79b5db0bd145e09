// Benchmark: wall time and peak memory to evaluate one training-step configuration (memory
// model, cluster construction, step simulation), each scenario in its own child process.
// Usage: step_bench SCENARIO...   (default: the two scenarios beside this file). CSV on stdout.
#include <cstdio>
#include <string>
#include <vector>

#include "sim/io/scenario_loader.h"
#include "sim/sweep/evaluation.h"
#include "tools/bench/bench_util.h"

namespace {

using namespace clustersim;

int run_scenario(const std::string& path) {
  const std::string root = CLUSTERSIM_DEFAULT_ROOT;
  Diagnostics diagnostics;
  auto catalog = Catalog::load({root + "/models", root + "/topologies"}, &diagnostics);
  auto loaded = catalog ? load_scenario(path, *catalog, &diagnostics) : nullptr;
  if (!loaded) {
    std::fputs(diagnostics.to_string().c_str(), stderr);
    return 1;
  }
  const Configuration config = expand_configurations(*loaded).valid.at(0);
  double step_s = 0;
  const double wall_s = bench::median_seconds(
      [&] {
        Evaluator evaluator(*catalog, *loaded);  // fresh: includes building the cluster
        step_s = evaluator.evaluate(config).step->step_s;
      },
      3);
  std::printf("%s,%d,%.3f,%.1f,%.3f\n", loaded->scenario().name().c_str(), config.gpus(), wall_s,
              bench::peak_rss_mib(), step_s);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> paths(argv + 1, argv + argc);
  if (paths.empty()) {
    const std::string here = std::string(CLUSTERSIM_DEFAULT_ROOT) + "/tools/bench/";
    paths = {here + "gpt3_175b_1024_a100.textproto", here + "llama3_405b_16384_h100.textproto"};
  }
  std::printf("scenario,gpus,wall_s,peak_rss_mib,simulated_step_s\n");
  for (const std::string& path : paths) {
    if (!bench::in_child_process([&path] { return run_scenario(path); })) return 1;
  }
  return 0;
}
