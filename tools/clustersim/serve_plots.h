// SVG pictures of a serving sizing for `clustersim serve --plot-dir` and `clustersim plot` of its
// results file: p99 time to first token
// against output throughput (every simulated deployment, by instance type), and cost per million
// output tokens against p99 time to first token with the Pareto front of the two.
#pragma once

#include <string>
#include <vector>

#include "sim/sweep/result_row.h"

namespace clustersim::cli {

// Writes DIR/NAME-latency.svg and DIR/NAME-pareto.svg; prints their paths. False when one cannot
// be written, after an error naming `command` and its `option` that named DIR ("--plot-dir").
bool write_serving_plots(const std::string& dir, const std::string& name,
                         const std::vector<ResultRow>& rows, const std::string& currency,
                         const std::string& command, const std::string& option);

}  // namespace clustersim::cli
