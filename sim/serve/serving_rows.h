// One row of a serving sizing: a deployment and every figure evaluated for it, one row per
// billing mode, as the cells of a fixed list of columns (the ResultColumn type of training
// sweeps, so the same tables, CSV/JSON and results files take them).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/serve/serving_cost.h"
#include "sim/serve/serving_evaluation.h"
#include "sim/sweep/result_row.h"

namespace clustersim {

// Every column of a serving row of one traffic sample, in output order. Column 0 is the
// configuration index.
const std::vector<ResultColumn>& serving_columns();
// Those of a sizing over several traffic samples (traffic_samples.h): serving_columns(), then
// the samples, how many met the objectives and the worst p99s. One sample's rows, files and
// tables keep serving_columns(), as they were before samples.
const std::vector<ResultColumn>& sampled_serving_columns();
// The columns of a sizing over `samples` traffic samples.
const std::vector<ResultColumn>& serving_columns(int samples);
// Index of the column named `key` (in sampled_serving_columns(), whose first columns are
// serving_columns()). Requires: such a column exists.
int serving_column(std::string_view key);

inline constexpr const char* kStatusMissesSlo = "misses SLO";
// Served fewer requests than arrived, beyond the arrivals' noise (falls_behind): its latencies
// are the length its queue reached by the traffic's end, so "limiting" gives the rates instead.
inline constexpr const char* kStatusOverloaded = "overloaded";

// The p99 TTFT column the SLO verdict is on, which every ranking, Pareto front and chart of a
// sizing against latency takes: over several traffic samples the worst sample's
// ("ttft_p99_worst_ms"), else "ttft_p99_ms".
const char* verdict_ttft_p99_key(int samples);
// The traffic samples of a sizing's rows: their `samples` cell (1 where absent: one sample's rows,
// or none).
int rows_samples(const std::vector<ResultRow>& rows);

// The rows of `c` after `e` (one per billing mode of `prices`), of sampled_serving_columns() when
// `e` has a sample spread, else of serving_columns(); `max_rate_per_s`, when given, is the highest
// request rate meeting the objectives. Requires: e.error is empty.
std::vector<ResultRow> make_serving_rows(const ServingConfiguration& c, const ServingEvaluation& e,
                                         const ServingPrices& prices,
                                         std::optional<double> max_rate_per_s);

// The columns the terminal shows by default; with closed-loop traffic, latency percentiles and
// throughput per concurrency level; with speculative decoding, its draft tokens and the tokens
// kept per iteration.
// With several traffic samples, the samples meeting the objectives and the worst p99s before
// "limiting".
std::vector<std::string> serving_summary_columns(bool closed_loop, bool speculative,
                                                 int samples = 1);

// A table with the given serving columns (by key, of sampled_serving_columns()) holding those
// cells of `rows`.
Table serving_table(const std::vector<std::string>& keys, const std::vector<ResultRow>& rows);

// A row's deployment in words: "aws.g6.xlarge x 2 replicas, TP 1 PP 1, FP16, CONTINUOUS
// batch 256, ON_DEMAND" (", prefix caching on" or "off" where requests carry shared prefixes).
std::string describe_deployment(const ResultRow& row);

}  // namespace clustersim
