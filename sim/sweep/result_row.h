// One row of a sweep's results: a configuration and every figure evaluated for it, as the cells
// of a fixed list of columns. The one definition every output shares (terminal table, CSV/JSON,
// the HDF5 results file, merge and regress), so a column added here appears everywhere.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/cost/cost_model.h"
#include "sim/io/table.h"
#include "sim/sweep/configuration_space.h"
#include "sim/sweep/evaluation.h"

namespace clustersim {

struct RunCost;  // sim/cost/run_cost.h

using ResultRow = std::vector<Table::Cell>;

struct ResultColumn {
  enum class Kind { kInteger, kReal, kBool, kText };
  // How `clustersim regress` compares the column with a baseline: identity columns and outcomes
  // must match exactly; figures within a relative or absolute tolerance.
  enum class Drift { kExact, kRelative, kAbsolute };
  std::string key;     // CSV/JSON/HDF5 name, units in the name
  std::string header;  // short label of the aligned table
  Kind kind;
  int decimals;  // in the aligned table
  Drift drift;
  double tolerance;  // default for regress (kRelative: fraction; kAbsolute: in the column's unit)
  // Names the configuration (an axis of the sweep), not its outcome: regress pairs a baseline's
  // rows with the current ones by these columns, not by their position in the sweep.
  bool configuration = false;
};

// A column naming the configuration or its outcome, compared exactly by regress.
ResultColumn identity_column(std::string key, std::string header, ResultColumn::Kind kind);
// A column naming the configuration, compared exactly by regress and pairing its rows.
ResultColumn configuration_column(std::string key, std::string header, ResultColumn::Kind kind);
// A real figure shown with `decimals`, compared by regress within a relative 1e-4.
ResultColumn figure_column(std::string key, std::string header, int decimals);

// The "recompute" column's text: the parallelism's recompute, with "+MLA_UP_PROJECTION" when the
// latent attention's up projections are recomputed as well.
std::string recompute_label(const schema::Parallelism& p);

// Every column, in output order. Column 0 is the configuration index.
const std::vector<ResultColumn>& result_columns();
// Index of the column named `key` in `columns` (result_columns() by default); -1 when none.
int column_index(const std::vector<ResultColumn>& columns, std::string_view key);
inline int result_column(std::string_view key) { return column_index(result_columns(), key); }

// Row outcomes (the "status" column).
inline constexpr const char* kStatusOk = "ok";
inline constexpr const char* kStatusOutOfMemory = "OOM";
inline constexpr const char* kStatusOverTime = "over max time";
inline constexpr const char* kStatusOverCost = "over max cost";
// More nodes of an instance type rented under the row's billing than constraints.availability
// allows.
inline constexpr const char* kStatusOverAvailability = "over availability";
// The run is beyond what the run simulation spans (run_simulation.h); `limiting` says why.
inline constexpr const char* kStatusTooLong = "too long to simulate";
// The configuration's checkpoint (a node's share on a block volume) does not fit in its
// cost.checkpoint volume; `limiting` says by how much. Not costed.
inline constexpr const char* kStatusCheckpointOverVolume = "checkpoint over volume";

// The cells of `configuration`'s configuration columns (ResultColumn::configuration, and its
// index), its checkpoint volume and billing left empty; every other cell empty.
ResultRow configuration_row(const Configuration& configuration);

// The row of `configuration` after `evaluation` without the run's time and cost: configuration,
// memory, the simulated step (or OOM) and what limits it. Requires: evaluation.error is empty.
ResultRow make_step_row(const Configuration& configuration, const Evaluation& evaluation);

// The rows of `configuration` after `evaluation`, one per billing mode of `cost` (the scenario's
// cost.billing; on demand when absent): the whole run's time and cost (p50/p95 over spot trials,
// checkpoints included; cost_model.h), in the cost model's report currency, and the status
// against the sweep's constraints. Requires: evaluation.error is empty; `cost` built for
// `scenario`.
std::vector<ResultRow> make_result_rows(const Configuration& configuration,
                                        const Evaluation& evaluation,
                                        const LoadedScenario& scenario, const CostModel& cost);

// Which of the scenario's sweep.constraints a costed run of `configuration` breaks: its billing
// mode's availability cap, max_time_to_train_hours or max_cost (each on the run's p50), as the
// status of its row (kStatusOverAvailability, kStatusOverTime, kStatusOverCost); nullptr when
// within them all, and so ranked. `sweep` and `cost` rank by it alike.
const char* constraint_status(const CostModel& cost, const Configuration& configuration,
                              const RunCost& run);

// Typed reads of a row's cells by column index (NaN / "" / false when the cell is empty).
double row_number(const ResultRow& row, int column);
const std::string& row_text(const ResultRow& row, int column);
bool row_flag(const ResultRow& row, int column);
// Whether any of `rows` holds true in `column`.
bool any_row_flag(const std::vector<ResultRow>& rows, int column);
// Whether any of `rows` pays a price other than one read in its cited source: its
// price_confidence `column` (price_book.h) "user" or "unverified". The tables show the column then.
bool any_price_in_doubt(const std::vector<ResultRow>& rows, int column);

// A table with the given columns of `columns` (by key), holding those cells of `rows`.
// Requires: every key names a column.
Table column_table(const std::vector<ResultColumn>& columns, const std::vector<std::string>& keys,
                   const std::vector<ResultRow>& rows);
inline Table result_table(const std::vector<std::string>& keys,
                          const std::vector<ResultRow>& rows) {
  return column_table(result_columns(), keys, rows);
}
// Every column's key, in order (the header of a CSV/JSON of whole rows).
std::vector<std::string> result_column_keys();
// The columns the terminal shows by default: configuration, step, MFU, time, cost, limiting;
// with the input pipeline's (storage, workers, data stall) when a row of `rows` has a dataloader,
// the checkpoint volume when the rows use several or `checkpoint_axis` (the scenario sweeps it:
// sweep.checkpoint_storage).
std::vector<std::string> summary_columns(const std::vector<ResultRow>& rows,
                                         bool checkpoint_axis = false);

// The keys of the columns that name the instance, cluster and parallel layout of `rows`'
// configurations, in the order every table prints them; the hybrid-sharding group
// (data_parallel_shard) after data_parallel only when a row shards within groups smaller than its
// data-parallel ranks.
std::vector<std::string> layout_columns(const std::vector<ResultRow>& rows);

}  // namespace clustersim
