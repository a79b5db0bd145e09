// `clustersim validate [SCENARIO...]`: checks the catalog and the given scenarios, reporting every
// problem with its file, line and field; exits non-zero if there was any error.
#include <iostream>

#include "sim/io/scenario_loader.h"
#include "tools/clustersim/command_line.h"
#include "tools/clustersim/commands.h"

namespace clustersim::cli {

int validate_command(const std::vector<std::string>& args) {
  CommonOptions common;
  std::vector<std::string> scenarios;
  po::options_description options("validate options");
  add_common_options(&options, &common);
  options.add_options()("scenario", po::value(&scenarios)->composing(), "scenario files");
  po::positional_options_description positional;
  positional.add("scenario", -1);
  po::variables_map values;
  if (!parse(args, options, positional, &values, "clustersim validate [SCENARIO...] [options]")) {
    return kExitOk;
  }
  auto catalog = load_catalog(common);
  if (!catalog) return kExitInputError;
  std::cout << "catalog: " << catalog->gpus().all().size() << " GPUs, "
            << catalog->instances().all().size() << " instance types, "
            << catalog->storage().all().size() << " storage tiers, "
            << catalog->fabrics().all().size() << " fabrics, " << catalog->models().all().size()
            << " models: ok\n";
  int failed = 0;
  for (const std::string& path : scenarios) {
    Diagnostics diagnostics;
    auto loaded = load_scenario(path, *catalog, &diagnostics);
    print_diagnostics(diagnostics);
    std::cout << path << ": " << (loaded ? "ok" : "invalid") << "\n";
    if (!loaded) ++failed;
  }
  return failed == 0 ? kExitOk : kExitInputError;
}

}  // namespace clustersim::cli
