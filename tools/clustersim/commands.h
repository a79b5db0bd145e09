// The subcommands of the clustersim tool. Each takes the arguments after its name and returns the
// process exit code (see command_line.h).
#pragma once

#include <string>
#include <vector>

namespace clustersim::cli {

int catalog_command(const std::vector<std::string>& args);
int cost_command(const std::vector<std::string>& args);
int collective_command(const std::vector<std::string>& args);
int input_command(const std::vector<std::string>& args);
int memory_command(const std::vector<std::string>& args);
int merge_command(const std::vector<std::string>& args);
int plan_command(const std::vector<std::string>& args);
int plot_command(const std::vector<std::string>& args);
int regress_command(const std::vector<std::string>& args);
int run_command(const std::vector<std::string>& args);
int serve_command(const std::vector<std::string>& args);
int sweep_command(const std::vector<std::string>& args);
int validate_command(const std::vector<std::string>& args);

}  // namespace clustersim::cli
