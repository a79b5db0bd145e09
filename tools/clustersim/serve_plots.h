// SVG pictures of a serving sizing for `clustersim serve --plot-dir` and `clustersim plot` of its
// results file: p99 time to first token
// against output throughput (every simulated deployment, by instance type), and cost per million
// output tokens against p99 time to first token with the Pareto front of the two. Over several
// traffic samples the p99 TTFT is the worst sample's, as the SLO verdict and serve's Pareto front
// take it (serving_rows.h verdict_ttft_p99_key), the median in each point's tooltip beside it.
#pragma once

#include <string>
#include <vector>

#include "sim/sweep/result_row.h"

namespace clustersim::cli {

// Writes DIR/NAME-latency.svg and DIR/NAME-pareto.svg of `rows`, a sizing over `samples` traffic
// samples; prints their paths. False when one cannot be written, after an error naming `command`
// and its `option` that named DIR ("--plot-dir").
bool write_serving_plots(const std::string& dir, const std::string& name,
                         const std::vector<ResultRow>& rows, int samples,
                         const std::string& currency, const std::string& command,
                         const std::string& option);

}  // namespace clustersim::cli
