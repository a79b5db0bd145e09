// `clustersim merge SHARD.h5... -o ALL.h5`: joins the results files of every shard of a training
// sweep or of a serving sizing (run with --shard K/N, e.g. as a Slurm job array or a Kubernetes
// indexed job) into the file a single run of the whole sweep or sizing gives.
#include <iostream>

#include "sim/sweep/results_export.h"
#include "sim/sweep/results_merge.h"
#include "tools/clustersim/command_line.h"
#include "tools/clustersim/commands.h"

namespace clustersim::cli {

int merge_command(const std::vector<std::string>& args) {
  std::vector<std::string> inputs;
  std::string output;
  po::options_description options("merge options");
  options.add_options()("inputs", po::value(&inputs)->required()->multitoken(),
                        "results files of every shard")("output,o", po::value(&output)->required(),
                                                        "merged results file (.h5)");
  po::positional_options_description positional;
  positional.add("inputs", -1);
  po::variables_map values;
  if (!parse(args, options, positional, &values, "clustersim merge SHARD.h5... -o ALL.h5")) {
    return kExitOk;
  }
  // An HDF5 file under another name was written as asked, and read by nothing that goes by names.
  if (results_format(output) != ResultsFormat::kHdf5) {
    command_error("merge") << "-o must end in .h5 (merge writes a results file): " << output
                           << "\n";
    return kExitUsage;
  }
  std::string error;
  if (!merge_results(inputs, output, results_kinds(), &error)) {
    command_error("merge") << error << "\n";
    return kExitInputError;
  }
  std::cerr << "merged " << inputs.size() << " shards into " << output << "\n";
  return kExitOk;
}

}  // namespace clustersim::cli
