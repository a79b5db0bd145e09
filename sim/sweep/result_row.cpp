// The result columns and the row of one evaluated configuration.
#include "sim/sweep/result_row.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "sim/cost/run_cost.h"
#include "sim/cost/training_budget.h"
#include "sim/io/volume_words.h"
#include "sim/parallel/expert_parallel.h"
#include "sim/parallel/memory_model.h"
#include "sim/sweep/pool_placement.h"
#include "sim/util/check.h"
#include "sim/util/number_format.h"
#include "sim/util/units.h"

namespace clustersim {
namespace {

namespace s = schema;
using Kind = ResultColumn::Kind;
using Drift = ResultColumn::Drift;

constexpr double kFigureTolerance = 1e-4;  // relative; regress default for times, costs, memory
constexpr double kUtilizationTolerance = 1e-4;  // absolute, for MFU and HFU (fractions)

ResultColumn identity(std::string key, std::string header, Kind kind) {
  return identity_column(std::move(key), std::move(header), kind);
}
ResultColumn axis(std::string key, std::string header, Kind kind) {
  return configuration_column(std::move(key), std::move(header), kind);
}
ResultColumn figure(std::string key, std::string header, int decimals) {
  return figure_column(std::move(key), std::move(header), decimals);
}

}  // namespace

ResultColumn identity_column(std::string key, std::string header, Kind kind) {
  return {std::move(key), std::move(header), kind, 0, Drift::kExact, 0};
}
ResultColumn configuration_column(std::string key, std::string header, Kind kind) {
  ResultColumn column = identity_column(std::move(key), std::move(header), kind);
  column.configuration = true;
  return column;
}
ResultColumn figure_column(std::string key, std::string header, int decimals) {
  return {std::move(key), std::move(header), Kind::kReal,
          decimals,       Drift::kRelative,  kFigureTolerance};
}

std::string recompute_label(const s::Parallelism& p) {
  std::string label = s::Recompute_Name(p.recompute()) +
                      (p.recompute_latent_up_projection() ? "+MLA_UP_PROJECTION" : "");
  for (int module : p.recompute_modules()) {
    label += "+" + s::RecomputeModule_Name(module).substr(std::string("RECOMPUTE_").size());
  }
  return label;
}

const std::vector<ResultColumn>& result_columns() {
  static const std::vector<ResultColumn> columns = {
      identity("index", "#", Kind::kInteger),
      axis("instance", "instance", Kind::kText),
      axis("nodes", "nodes", Kind::kInteger),
      axis("gpus", "GPUs", Kind::kInteger),
      axis("pools", "pools", Kind::kInteger),  // instance types of a mix; 1 otherwise
      // A mix's pool placement (DATA_PARALLEL_POOLS or PIPELINE_ACROSS_POOLS); empty for one
      // instance type. pool_placement below says where each part runs.
      axis("pools_as", "pools as", Kind::kText),
      axis("tensor_parallel", "TP", Kind::kInteger),
      axis("context_parallel", "CP", Kind::kInteger),
      axis("pipeline_parallel", "PP", Kind::kInteger),
      axis("data_parallel", "DP", Kind::kInteger),
      // The data-parallel ranks of one sharding group: fewer than DP under hybrid sharding.
      axis("data_parallel_shard", "shard", Kind::kInteger),
      axis("expert_parallel", "EP", Kind::kInteger),  // 1 for a dense model
      axis("micro_batch_size", "mbs", Kind::kInteger),
      axis("virtual_stages", "v", Kind::kInteger),
      axis("schedule", "schedule", Kind::kText),
      axis("zero_stage", "ZeRO", Kind::kInteger),
      axis("distributed_optimizer", "dist opt", Kind::kBool),
      axis("sequence_parallel", "SP", Kind::kBool),
      axis("recompute", "recompute", Kind::kText),
      // The input pipeline's choices; empty when the job has no dataloader.
      axis("storage_tier", "storage", Kind::kText),
      {"storage_capacity_gib", "storage GiB", Kind::kReal, 0, Drift::kExact, 0, true},
      {"dataloader_workers_per_gpu", "workers", Kind::kReal, 0, Drift::kExact, 0, true},
      // The volume the run's checkpoints go to, its instance's provider's (volume_words: tier,
      // capacity, performance bought); empty without checkpoints.
      axis("checkpoint_storage", "ckpt storage", Kind::kText),
      axis("billing", "billing", Kind::kText),
      identity("status", "status", Kind::kText),
      figure("memory_gib", "mem GiB", 1),
      figure("capacity_gib", "cap GiB", 1),
      figure("step_s", "step s", 3),
      figure("tokens_per_s", "tokens/s", 0),  // empty for a model without tokens (a CNN)
      figure("samples_per_s", "samples/s", 1),
      {"mfu", "MFU", Kind::kReal, 3, Drift::kAbsolute, kUtilizationTolerance},
      {"hfu", "HFU", Kind::kReal, 3, Drift::kAbsolute, kUtilizationTolerance},
      figure("compute_s", "compute", 3),
      figure("tensor_comm_s", "TP comm", 3),
      figure("context_comm_s", "CP comm", 3),
      figure("expert_comm_s", "EP comm", 3),     // dispatch/combine all-to-alls, exposed
      figure("expert_compute_s", "experts", 3),  // routed experts' kernels, part of compute
      figure("bubble_s", "bubble", 3),
      figure("data_comm_s", "DP comm", 3),
      figure("optimizer_s", "optim", 3),
      figure("data_stall_s", "data stall", 3),
      identity("steps", "steps", Kind::kInteger),  // the budget's optimizer steps
      figure("time_to_train_h", "train h", 1),     // p50 over spot trials
      figure("time_to_train_p95_h", "p95 h", 1),
      figure("price_per_hour", "price/h", 2),
      identity("currency", "cur", Kind::kText),
      // The region of the price paid (prices.region chooses among a catalog's several); pools'
      // regions "+"-joined where they differ; empty when the price names none.
      identity("price_region", "region", Kind::kText),
      // How far the prices paid can be relied on (price_book.h price_confidence): "read",
      // "user" (a user's price of no stated confidence) or "unverified" (second-hand: check it
      // before relying on the cost); empty where the row pays none.
      identity("price_confidence", "price src", Kind::kText),
      figure("cost", "cost", 0),  // p50, in the report currency: instances + checkpoint storage
      figure("cost_p95", "cost p95", 0),
      // The checkpoint volumes' part of `cost` (storage_cost.h); empty where their tier is not
      // priced or the run has no checkpoint.
      figure("storage_cost", "storage", 0),
      // The billing mode's checkpoint interval (the scenario's, else its simulated optimum; empty
      // when it writes none during the run) and the mean interruptions of a run (faults, and spot's
      // preemptions; empty without checkpoints).
      figure("checkpoint_interval_h", "ckpt h", 2),
      figure("interruptions", "interrupts", 2),
      identity("limiting", "limiting", Kind::kText),
      // A mix: the pool whose replicas finish last, how long the others wait for it per step; of
      // a pipeline across pools, the busiest stage's pool, that stage and the layers per stage.
      identity("limiting_pool", "limiting pool", Kind::kText),
      figure("pool_wait_s", "pool wait", 3),
      // A mix: which pool holds which pipeline stages, or how many data-parallel replicas and the
      // micro-batches each takes; empty for one instance type (pool_placement.h has the format).
      identity("pool_placement", "placement", Kind::kText),
      // With nodes already owned: the nodes the row adds to them (rented).
      identity("nodes_added", "add", Kind::kText),
      identity("calibrated", "calibrated", Kind::kBool),
  };
  return columns;
}

int column_index(const std::vector<ResultColumn>& columns, std::string_view key) {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].key == key) return static_cast<int>(i);
  }
  return -1;
}

namespace {

// "2 aws.p5.48xlarge": the nodes rented beside the owned ones ("none" when none).
std::string describe_added(const PoolMix& pools) {
  std::string text;
  for (const PoolShare& pool : pools) {
    if (pool.nodes == pool.owned_nodes) continue;
    text += (text.empty() ? "" : " + ") + std::to_string(pool.nodes - pool.owned_nodes) + " " +
            pool.instance->name();
  }
  return text.empty() ? "none" : text;
}

// "aws.p4d.24xlarge stage 5 (layers 14+14+14+14+12+12)": a pipeline across pools' busiest stage
// and its split.
std::string describe_limiting_stage(const PipelineAcrossPoolsResult& stages, const PoolMix& pools) {
  std::string layers;
  for (int n : stages.stage_layers) layers += (layers.empty() ? "" : "+") + std::to_string(n);
  return pools[stages.limiting_pool].instance->name() + " stage " +
         std::to_string(stages.limiting_stage + 1) + " (layers " + layers + ")";
}

// Nodes of `instance` rented (not owned) by `c`.
int rented_nodes(const Configuration& c, const std::string& instance) {
  if (!c.pools) return c.instance->name() == instance ? c.nodes : 0;
  int nodes = 0;
  for (const PoolShare& pool : *c.pools) {
    if (pool.instance->name() == instance) nodes += pool.nodes - pool.owned_nodes;
  }
  return nodes;
}

// Whether `c` rents more of an instance type under `billing` than an availability cap allows.
bool over_availability(const Configuration& c, const s::Constraints& limits,
                       s::BillingMode billing) {
  for (const s::AvailabilityCap& cap : limits.availability()) {
    const bool applies = !cap.has_billing() || cap.billing() == s::BILLING_MODE_UNSPECIFIED ||
                         cap.billing() == billing;
    if (applies && rented_nodes(c, cap.instance()) > cap.max_nodes()) return true;
  }
  return false;
}

}  // namespace

ResultRow configuration_row(const Configuration& c) {
  const s::Parallelism& p = c.parallelism;
  const auto number = [](auto value) { return Table::Cell(static_cast<double>(value)); };
  ResultRow base = {number(c.index),
                    cluster_label(c),
                    number(c.nodes),
                    number(c.gpus()),
                    number(c.pools ? c.pools->size() : 1),
                    c.is_mix() ? Table::Cell(s::PoolPlacement_Name(p.pool_placement()))
                               : Table::Cell(),
                    number(p.tensor_parallel()),
                    number(p.context_parallel()),
                    number(p.pipeline_parallel()),
                    number(p.data_parallel()),
                    number(data_parallel_shard_ranks(p)),
                    number(expert_layout(p).expert_parallel),
                    number(p.micro_batch_size()),
                    number(p.virtual_stages()),
                    s::PipelineSchedule_Name(p.schedule()),
                    number(p.zero_stage()),
                    p.distributed_optimizer(),
                    p.sequence_parallel(),
                    recompute_label(p),
                    c.dataset_storage ? Table::Cell(c.dataset_storage->tier()) : Table::Cell(),
                    c.dataset_storage ? number(c.dataset_storage->capacity_gib()) : Table::Cell(),
                    c.dataset_storage ? number(c.dataloader_workers_per_gpu) : Table::Cell()};
  // checkpoint_storage and billing: make_result_rows.
  base.resize(result_columns().size());
  return base;
}

ResultRow make_step_row(const Configuration& c, const Evaluation& e) {
  CLUSTERSIM_CHECK(e.error.empty(), "a row of a configuration that could not be built");
  ResultRow base = configuration_row(c);
  base[result_column("status")] = kStatusOk;
  base[result_column("memory_gib")] = e.memory.total_bytes() / kBytesPerGibibyte;
  base[result_column("capacity_gib")] = e.memory.capacity_bytes / kBytesPerGibibyte;
  base[result_column("calibrated")] = e.calibrated;
  if (c.has_owned_nodes()) base[result_column("nodes_added")] = describe_added(*c.pools);
  const std::string placement = describe_pool_placement(c, e);
  if (!placement.empty()) base[result_column("pool_placement")] = placement;
  if (e.pools) {
    base[result_column("limiting_pool")] = (*c.pools)[e.pools->limiting_pool].instance->name();
    base[result_column("pool_wait_s")] = e.pools->wait_s;
  }
  if (e.stages) {
    base[result_column("limiting_pool")] = describe_limiting_stage(*e.stages, *c.pools);
    base[result_column("pool_wait_s")] = e.stages->wait_s;
  }
  if (e.step) {
    const StepResult& r = *e.step;
    for (auto [key, value] : {std::pair{"step_s", r.step_s},
                              {"tokens_per_s", r.tokens_per_s},
                              {"samples_per_s", r.samples_per_s},
                              {"mfu", r.mfu},
                              {"hfu", r.hfu},
                              {"compute_s", r.compute_s},
                              {"tensor_comm_s", r.tensor_comm_s},
                              {"context_comm_s", r.context_comm_s},
                              {"expert_comm_s", r.expert_comm_s},
                              {"expert_compute_s", r.expert_compute_s},
                              {"bubble_s", r.bubble_s},
                              {"data_comm_s", r.data_comm_s},
                              {"optimizer_s", r.optimizer_s},
                              {"data_stall_s", r.data_stall_s}}) {
      base[result_column(key)] = value;
    }
    // A CNN has no tokens: its throughput is samples/s (images) alone.
    if (r.tokens_per_s == 0) base[result_column("tokens_per_s")] = Table::Cell();
    base[result_column("limiting")] = r.limiting;
  } else {
    // 64 bits: a user's model can be short by more than 2^31 GiB.
    const long long missing = std::llround(e.memory.missing_bytes() / kBytesPerGibibyte);
    base[result_column("status")] = kStatusOutOfMemory;
    base[result_column("limiting")] = "GPU memory (OOM by " + std::to_string(missing) + " GiB)";
  }
  return base;
}

namespace {

// The instance types of `c`'s pools (its one instance type when it has none).
std::vector<const s::InstanceType*> pool_instances(const Configuration& c) {
  std::vector<const s::InstanceType*> instances;
  if (c.pools) {
    for (const PoolShare& pool : *c.pools) instances.push_back(pool.instance);
  } else {
    instances.push_back(c.instance);
  }
  return instances;
}

}  // namespace

std::vector<ResultRow> make_result_rows(const Configuration& c, const Evaluation& e,
                                        const LoadedScenario& scenario, const CostModel& cost) {
  ResultRow base = make_step_row(c, e);
  base[result_column("currency")] = s::Currency_Name(cost.currency);
  if (const CheckpointVolume* volume = checkpoint_volume(cost, c)) {
    base[result_column("checkpoint_storage")] = volume_words(*volume->volume);
  }
  std::vector<ResultRow> rows;
  const std::optional<CheckpointPlan> checkpoints =
      e.step ? std::optional(plan_checkpoints(cost, c, e.memory, *e.step)) : std::nullopt;
  base[result_column("steps")] = budget_steps(scenario.scenario().job());
  const std::vector<const s::InstanceType*> instances = pool_instances(c);
  for (s::BillingMode billing : cost.billing_modes) {
    ResultRow& row = rows.emplace_back(base);
    row[result_column("billing")] = s::BillingMode_Name(billing);
    const std::string region = price_regions(cost.prices, instances, billing);
    if (!region.empty()) row[result_column("price_region")] = region;  // read back as no cell
    const std::string confidence = prices_confidence(cost.prices, instances, billing);
    if (!confidence.empty()) row[result_column("price_confidence")] = confidence;
    if (!e.step) {
      if (priced_by_pool(c)) {
        const std::optional<double> per_hour = pools_price_per_hour(cost, c, billing);
        if (per_hour) row[result_column("price_per_hour")] = *per_hour;
        continue;
      }
      const std::optional<UsedPrice> price = cost.prices.price(*c.instance, billing);
      if (price) row[result_column("price_per_hour")] = report_per_hour(cost, *price) * c.nodes;
      continue;
    }
    if (!checkpoints->over_volume.empty()) {
      row[result_column("status")] = kStatusCheckpointOverVolume;
      row[result_column("limiting")] = checkpoints->over_volume;
      continue;
    }
    const RunCost run = run_cost(cost, c, *checkpoints, billing);
    if (!run.unsimulated.empty()) {
      row[result_column("status")] = kStatusTooLong;
      row[result_column("limiting")] = run.unsimulated;
      continue;
    }
    const double hours = run.time.p50_s / 3600;
    row[result_column("time_to_train_h")] = hours;
    row[result_column("time_to_train_p95_h")] = run.time.p95_s / 3600;
    if (run.checkpoint.periodic) {  // none where the interval is beyond the run
      row[result_column("checkpoint_interval_h")] = run.checkpoint.interval_s / 3600;
    }
    if (checkpoints->enabled) row[result_column("interruptions")] = run.time.mean_interruptions;
    if (run.price) {
      row[result_column("price_per_hour")] = run.per_instance_hour * c.nodes;
      row[result_column("cost")] = run.cost_p50;
      row[result_column("cost_p95")] = run.cost_p95;
      if (run.storage_per_hour) row[result_column("storage_cost")] = run.storage_cost_p50;
    }
    const char* outside = constraint_status(cost, c, run);
    if (outside != nullptr) row[result_column("status")] = outside;
  }
  return rows;
}

const char* constraint_status(const CostModel& cost, const Configuration& c, const RunCost& run) {
  const s::Constraints& limits = cost.scenario->scenario().sweep().constraints();
  if (over_availability(c, limits, run.billing)) return kStatusOverAvailability;
  if (limits.has_max_time_to_train_hours() &&
      run.time.p50_s / 3600 > limits.max_time_to_train_hours()) {
    return kStatusOverTime;
  }
  if (limits.has_max_cost()) {
    // The limit in the report currency; without a rate to convert it, nothing is within it.
    const std::optional<double> rate = cost.prices.exchange_rate(limits.currency(), cost.currency);
    if (!run.price || !rate || run.cost_p50 > limits.max_cost() * *rate) return kStatusOverCost;
  }
  return nullptr;
}

double row_number(const ResultRow& row, int column) {
  const Table::Cell& cell = row[column];
  if (const double* value = std::get_if<double>(&cell)) return *value;
  if (const bool* value = std::get_if<bool>(&cell)) return *value ? 1 : 0;
  return std::numeric_limits<double>::quiet_NaN();
}

const std::string& row_text(const ResultRow& row, int column) {
  static const std::string empty;
  const std::string* text = std::get_if<std::string>(&row[column]);
  return text ? *text : empty;
}

bool row_flag(const ResultRow& row, int column) {
  const bool* flag =
      column < static_cast<int>(row.size()) ? std::get_if<bool>(&row[column]) : nullptr;
  return flag && *flag;
}

bool any_row_flag(const std::vector<ResultRow>& rows, int column) {
  return std::any_of(rows.begin(), rows.end(),
                     [&](const ResultRow& r) { return row_flag(r, column); });
}

bool any_price_in_doubt(const std::vector<ResultRow>& rows, int column) {
  return std::any_of(rows.begin(), rows.end(), [&](const ResultRow& r) {
    const std::string& confidence = row_text(r, column);
    return !confidence.empty() && confidence != "read";
  });
}

Table column_table(const std::vector<ResultColumn>& columns, const std::vector<std::string>& keys,
                   const std::vector<ResultRow>& rows) {
  Table table;
  std::vector<int> indices;
  for (const std::string& key : keys) {
    const int i = column_index(columns, key);
    CLUSTERSIM_CHECK(i >= 0, "unknown result column");
    indices.push_back(i);
    table.add_column(key, columns[i].header, columns[i].decimals);
  }
  for (const ResultRow& row : rows) {
    std::vector<Table::Cell> cells;
    for (int i : indices) cells.push_back(row[i]);
    table.add_row(std::move(cells));
  }
  return table;
}

std::vector<std::string> result_column_keys() {
  std::vector<std::string> keys;
  for (const ResultColumn& column : result_columns()) keys.push_back(column.key);
  return keys;
}

std::vector<std::string> layout_columns(const std::vector<ResultRow>& rows) {
  std::vector<std::string> keys = {
      "instance",          "nodes",         "tensor_parallel", "context_parallel",
      "pipeline_parallel", "data_parallel", "expert_parallel", "micro_batch_size",
      "virtual_stages",    "recompute"};
  const bool hybrid = std::any_of(rows.begin(), rows.end(), [](const ResultRow& r) {
    return row_number(r, result_column("data_parallel_shard")) <
           row_number(r, result_column("data_parallel"));
  });
  if (hybrid) {
    keys.insert(std::find(keys.begin(), keys.end(), "data_parallel") + 1, "data_parallel_shard");
  }
  return keys;
}

std::vector<std::string> summary_columns(const std::vector<ResultRow>& rows, bool checkpoint_axis) {
  const int storage = result_column("storage_tier");
  const bool input = std::any_of(rows.begin(), rows.end(),
                                 [&](const ResultRow& r) { return !row_text(r, storage).empty(); });
  std::vector<std::string> keys = {"index"};
  const std::vector<std::string> layout = layout_columns(rows);
  keys.insert(keys.end(), layout.begin(), layout.end());
  keys.insert(keys.end(), {"billing", "step_s", "mfu", "memory_gib", "time_to_train_h", "cost",
                           "currency", "limiting"});
  const auto any_text = [&](const char* key) {
    return std::any_of(rows.begin(), rows.end(), [&](const ResultRow& r) {
      return !row_text(r, result_column(key)).empty();
    });
  };
  if (any_text("price_region")) {
    keys.insert(std::find(keys.begin(), keys.end(), "limiting"), "price_region");
  }
  if (any_price_in_doubt(rows, result_column("price_confidence"))) {
    keys.insert(std::find(keys.begin(), keys.end(), "limiting"), "price_confidence");
  }
  if (any_text("limiting_pool")) keys.insert(keys.end(), {"limiting_pool", "pool_wait_s"});
  if (any_text("pool_placement")) keys.insert(keys.end(), "pool_placement");
  if (any_text("nodes_added")) {
    keys.insert(std::find(keys.begin(), keys.end(), "billing"), "nodes_added");
  }
  std::set<std::string> checkpoint_storage;
  for (const ResultRow& r : rows) {
    checkpoint_storage.insert(row_text(r, result_column("checkpoint_storage")));
  }
  if (checkpoint_axis || checkpoint_storage.size() > 1) {
    keys.insert(std::find(keys.begin(), keys.end(), "billing"), "checkpoint_storage");
  }
  if (input) {
    const auto at = std::find(keys.begin(), keys.end(), "billing");
    keys.insert(at, {"storage_tier", "storage_capacity_gib", "dataloader_workers_per_gpu"});
    keys.insert(std::find(keys.begin(), keys.end(), "mfu"), "data_stall_s");
  }
  return keys;
}

}  // namespace clustersim
