// Entry point of the clustersim tool: dispatches to a subcommand.
#include <boost/program_options/errors.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "tools/clustersim/command_line.h"
#include "tools/clustersim/commands.h"

namespace {

struct Subcommand {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>&);
};

const Subcommand kSubcommands[] = {
    {"catalog", "list GPUs, instances, storage tiers, fabrics or models",
     clustersim::cli::catalog_command},
    {"cost", "time and cost of whole training runs per billing mode, interruptions included",
     clustersim::cli::cost_command},
    {"collective", "simulate a collective over a range of sizes, printed like nccl-tests",
     clustersim::cli::collective_command},
    {"input", "the input pipeline of a scenario: data stall, limiting stage, what removes it",
     clustersim::cli::input_command},
    {"memory", "per-GPU memory of every configuration of a scenario, OOM rows with the gap",
     clustersim::cli::memory_command},
    {"merge", "join the results files of every shard of a sweep or serving sizing into one",
     clustersim::cli::merge_command},
    {"plan", "check a scenario and print what it asks: model, job, candidates, configurations",
     clustersim::cli::plan_command},
    {"plot", "SVG pictures of a results file: Pareto front, and breakdown or latency curve",
     clustersim::cli::plot_command},
    {"regress", "re-evaluate a scenario and compare with a baseline results file",
     clustersim::cli::regress_command},
    {"run", "simulate a training step of every configuration: time, MFU, breakdown, limits",
     clustersim::cli::run_command},
    {"serve", "size an inference deployment: latency percentiles, throughput, cost per token",
     clustersim::cli::serve_command},
    {"sweep", "the main job: every configuration in parallel, fastest, cheapest, Pareto front",
     clustersim::cli::sweep_command},
    {"validate", "check the catalog and scenario files, reporting every problem",
     clustersim::cli::validate_command},
};

void print_usage(std::ostream& out) {
  out << "clustersim " CLUSTERSIM_VERSION
         " - simulate distributed training and inference on GPU clusters\n\n"
         "usage: clustersim COMMAND [options]\n\ncommands:\n";
  for (const Subcommand& s : kSubcommands) {
    out << "  " << s.name << std::string(12 - std::string(s.name).size(), ' ') << s.summary << "\n";
  }
  out << "\n'clustersim COMMAND --help' describes a command's options.\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_usage(args.empty() ? std::cerr : std::cout);
    return args.empty() ? clustersim::cli::kExitUsage : clustersim::cli::kExitOk;
  }
  if (args[0] == "--version") {
    std::cout << "clustersim " CLUSTERSIM_VERSION "\n";
    return clustersim::cli::kExitOk;
  }
  for (const Subcommand& s : kSubcommands) {
    if (args[0] != s.name) continue;
    try {
      return s.run(std::vector<std::string>(args.begin() + 1, args.end()));
    } catch (const boost::program_options::error& e) {
      clustersim::cli::command_error(s.name) << e.what() << "\n";
      return clustersim::cli::kExitUsage;
    }
  }
  std::cerr << "clustersim: unknown command \"" << args[0] << "\"\n\n";
  print_usage(std::cerr);
  return clustersim::cli::kExitUsage;
}
