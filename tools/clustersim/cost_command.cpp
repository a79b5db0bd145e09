// `clustersim cost SCENARIO`: the time and cost of the whole training run of every configuration
// under every billing mode the scenario compares, ranked by cost and by time, marking the
// cheapest, the fastest, the configurations that do not fit and the runs outside the scenario's
// constraints (unranked); then the prices used.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <iostream>
#include <limits>
#include <optional>
#include <set>

#include "sim/cost/cost_model.h"
#include "sim/cost/run_cost.h"
#include "sim/cost/run_simulation.h"
#include "sim/cost/storage_cost.h"
#include "sim/io/volume_words.h"
#include "sim/parallel/memory_model.h"
#include "sim/sweep/evaluation.h"
#include "sim/sweep/configuration_labels.h"
#include "sim/sweep/ranking_leaders.h"
#include "sim/sweep/result_row.h"
#include "sim/sweep/runnable.h"
#include "sim/util/number_format.h"
#include "sim/util/units.h"
#include "tools/clustersim/accuracy_notes.h"
#include "tools/clustersim/command_line.h"
#include "tools/clustersim/commands.h"

namespace clustersim::cli {
namespace {

namespace s = schema;
using Cell = Table::Cell;

constexpr double kUnranked = std::numeric_limits<double>::infinity();

// With `storage` (a checkpoint volume of a priced tier), the storage's share of the cost; with
// `notice_save` (cost.checkpoint.save_on_preemption_notice), a column saying whether a spot run's
// preemptions save in their notice.
// With `checkpoint_axis` (sweep.checkpoint_storage), a column naming each row's checkpoint volume.
Table cost_table(const ShardingColumns& sharding, bool checkpoint_axis, bool storage,
                 bool notice_save) {
  Table table = layout_table();
  sharding.add_to(&table);
  table.add_column("recompute", "recompute");
  if (checkpoint_axis) table.add_column("checkpoint_storage", "ckpt storage");
  table.add_columns({{"billing", "billing"},
                     {"fits", "fits"},
                     {"step_s", "step s", 3},
                     {"time_p50_h", "time p50 h", 1},
                     {"time_p95_h", "time p95 h", 1},
                     {"instance_hours", "inst-h", 0},
                     {"per_instance_hour", "price/h", 3},
                     {"cost_p50", "cost p50", 0},
                     {"cost_p95", "cost p95", 0}});
  if (storage) {
    table.add_columns(
        {{"storage_per_hour", "storage/h", 3}, {"storage_cost_p50", "storage p50", 0}});
  }
  table.add_columns({{"cost_per_million_tokens", "per Mtok", 3},
                     {"cost_per_epoch", "per epoch", 0},
                     {"billed_periods", "periods", 0},
                     {"checkpoint_interval_h", "ckpt every h", 2},
                     {"young_daly_h", "Young/Daly h", 2},
                     {"checkpoint_write_s", "ckpt write s", 1},
                     {"interruptions", "interrupts", 2}});  // mean per run: faults, preemptions
  if (notice_save) table.add_column("saves_in_notice", "saves in notice");
  table.add_columns({{"price_from", "price from"},
                     {"cost_rank", "cost #"},
                     {"time_rank", "time #"},
                     {"mark", "mark"}});
  return table;
}
constexpr size_t kRankColumns = 3;  // cost #, time #, mark: filled after ranking

struct Row {
  double cost = kUnranked;  // p50, report currency; kUnranked: no price or does not fit
  double time = kUnranked;  // p50 seconds; kUnranked: does not fit
  double time_p95 = kUnranked;
  std::vector<Cell> cells{};    // all but the rank columns
  std::string note{};           // the mark of a row that is neither cheapest nor fastest
  std::string configuration{};  // in words, with its billing mode (runnable.h describe)
  int64_t index = -1;           // the configuration's
  std::string billing{};        // its billing mode's name
  std::string no_checkpoint{};  // no_checkpoint_note's
};

// Whether the scenario sweeps the checkpoint volume (sweep.checkpoint_storage).
bool checkpoint_axis(const CostModel& model) {
  return model.scenario->scenario().sweep().checkpoint_storage_size() > 0;
}

// The volume `c` checkpoints to, in words. Requires: a scenario with checkpoints.
std::string checkpoint_words(const CostModel& model, const Configuration& c) {
  return volume_words(*checkpoint_volume(model, c)->volume);
}

// A row's configuration (with its checkpoint volume where the sweep compares several) and billing
// mode in words, and its index.
void name_row(const CostModel& model, const Configuration& c, s::BillingMode billing, Row* row) {
  ResultRow words = configuration_row(c);
  if (checkpoint_axis(model))
    words[result_column("checkpoint_storage")] = checkpoint_words(model, c);
  words[result_column("billing")] = s::BillingMode_Name(billing);
  row->configuration = describe_configuration(words);
  row->index = c.index;
  row->billing = s::BillingMode_Name(billing);
}

// The cells of cost_table's columns up to the billing mode.
std::vector<Cell> configuration_cells(const CostModel& model, const Configuration& c,
                                      s::BillingMode billing, const ShardingColumns& sharding) {
  std::vector<Cell> cells = layout_cells(c);
  sharding.add_cells(c, &cells);
  cells.push_back(recompute_label(c.parallelism));
  if (checkpoint_axis(model)) cells.push_back(checkpoint_words(model, c));
  cells.push_back(s::BillingMode_Name(billing));
  return cells;
}

Cell hours(double seconds) { return seconds > 0 ? Cell(seconds / 3600) : Cell(); }

// "; unverified" or "; user" after a price's source (an instance's or a storage tier's) where it
// is not one read in its cited source: `confidence` is price_book.h's reading of it
// (price_confidence, catalog_price_confidence).
std::string confidence_note(const std::string& confidence) {
  return confidence == "read" ? "" : "; " + confidence;
}

// Why a run with a checkpoint volume writes no checkpoint at its interval, and what it writes
// instead: a final save only (then its volume is not billed while it trains), or saves in its
// preemptions' notices as well; "" where it checkpoints during the run.
std::string no_checkpoint_note(const CostModel& model, const CheckpointPlan& plan,
                               const RunCost& r) {
  if (!plan.enabled || r.checkpoint.periodic) return "";
  const auto h = [](double s) { return format_fixed(s / 3600, 2) + " h"; };
  const std::string why =
      r.checkpoint.interval_s > 0
          ? std::string(model.settings->checkpoint().has_interval_s() ? "the interval "
                                                                      : "the optimal interval ") +
                h(r.checkpoint.interval_s) + " exceeds the run's " + h(r.work_s) + " of training"
          : "nothing that loses training interrupts it";
  return r.writes_during_run
             ? "no periodic checkpoint (" + why +
                   "): saves in preemption notices and a final save only"
             : "no checkpoint during the run (" + why +
                   "): a final save only, its volume not billed while the run trains";
}

// "catalog", "catalog, us-east-2", "s.textproto:12": where a price was written and its region.
std::string price_origin(const UsedPrice& price) {
  return price.origin + (price.region.empty() ? "" : ", " + price.region);
}

// Whether a checkpoint volume of the scenario is of a priced tier (cost_table's storage columns).
bool storage_priced(const CostModel& model) {
  for (const CheckpointVolumeSet& set : model.checkpoint_volumes) {
    for (const auto& [provider, volume] : set) {
      if (volume.tier->has_price()) return true;
    }
  }
  return false;
}

Row cost_row(const CostModel& model, const Configuration& c, const ShardingColumns& sharding,
             const StepResult& step, const CheckpointPlan& plan, const RunCost& r) {
  Row row{.time = r.time.p50_s,
          .time_p95 = r.time.p95_s,
          .cells = configuration_cells(model, c, r.billing, sharding),
          .no_checkpoint = no_checkpoint_note(model, plan, r)};
  name_row(model, c, r.billing, &row);
  const bool priced = r.price.has_value();
  if (priced) row.cost = r.cost_p50;
  const auto money = [&](double value) { return priced ? Cell(value) : Cell(); };
  row.cells.insert(row.cells.end(),
                   {true, step.step_s, r.time.p50_s / 3600, r.time.p95_s / 3600, r.instance_hours,
                    money(r.per_instance_hour), money(r.cost_p50), money(r.cost_p95)});
  if (storage_priced(model)) {
    // A run on a volume of an unpriced tier says so: its cost counts no storage.
    const bool storage = priced && r.storage_per_hour.has_value();
    row.cells.insert(row.cells.end(), {storage  ? Cell(*r.storage_per_hour)
                                       : priced ? Cell(std::string("not priced"))
                                                : Cell(),
                                       storage ? Cell(r.storage_cost_p50) : Cell()});
  }
  row.cells.insert(row.cells.end(),
                   {r.tokens > 0 ? money(r.cost_per_million_tokens) : Cell(),
                    r.cost_per_epoch > 0 ? Cell(r.cost_per_epoch) : Cell(),
                    r.billed_periods > 0 ? Cell(r.billed_periods) : Cell(),
                    !plan.enabled           ? Cell()
                    : r.checkpoint.periodic ? hours(r.checkpoint.interval_s)
                                            : Cell(std::string("none")),
                    hours(r.checkpoint.young_daly_s),
                    plan.enabled ? Cell(plan.cost.write_s) : Cell(), r.time.mean_interruptions});
  // Only spot runs are preempted: faults give no notice.
  if (model.settings->checkpoint().save_on_preemption_notice()) {
    const bool notified = r.billing == s::SPOT && plan.notice_save.enabled;
    row.cells.emplace_back();
    if (notified) row.cells.back() = describe(plan.notice_save);
  }
  row.cells.emplace_back(priced
                             ? price_origin(*r.price) + confidence_note(price_confidence(*r.price))
                             : "no " + s::BillingMode_Name(r.billing) + " price");
  // Shown, not ranked, where the scenario's sweep.constraints rule the run out (as a sweep does).
  if (const char* outside = constraint_status(model, c, r)) {
    row.cost = row.time = row.time_p95 = kUnranked;
    row.note = outside;
  }
  return row;
}

// A row without a run: `fits` in the fits column, `note` as its mark.
Row unranked_row(const CostModel& model, const Configuration& c, s::BillingMode billing,
                 const ShardingColumns& sharding, size_t columns, Cell fits, std::string note) {
  Row row{.cells = configuration_cells(model, c, billing, sharding), .note = std::move(note)};
  name_row(model, c, billing, &row);
  const size_t fits_column = row.cells.size();
  row.cells.resize(columns - kRankColumns);
  row.cells[fits_column] = std::move(fits);
  return row;
}

Row oom_row(const CostModel& model, const Configuration& c, const Evaluation& e,
            s::BillingMode billing, const ShardingColumns& sharding, size_t columns) {
  const auto missing = static_cast<int64_t>(e.memory.missing_bytes() / kBytesPerGibibyte + 0.5);
  return unranked_row(model, c, billing, sharding, columns,
                      "no (OOM by " + std::to_string(missing) + " GiB)", "");
}

// Sorts by cost (then time), ranks by time (then p95), fills the ranks and marks the cheapest and
// the fastest.
void rank_rows(std::vector<Row>* rows) {
  std::stable_sort(rows->begin(), rows->end(), [](const Row& a, const Row& b) {
    return a.cost != b.cost ? a.cost < b.cost : a.time < b.time;
  });
  std::vector<size_t> by_time(rows->size());
  for (size_t i = 0; i < by_time.size(); ++i) by_time[i] = i;
  std::stable_sort(by_time.begin(), by_time.end(), [&](size_t a, size_t b) {
    const Row &x = (*rows)[a], &y = (*rows)[b];
    return x.time != y.time ? x.time < y.time : x.time_p95 < y.time_p95;
  });
  std::vector<Cell> time_rank(rows->size());
  for (size_t rank = 0; rank < by_time.size(); ++rank) {
    if ((*rows)[by_time[rank]].time < kUnranked) {
      time_rank[by_time[rank]] = static_cast<double>(rank + 1);
    }
  }
  for (size_t i = 0; i < rows->size(); ++i) {
    Row& row = (*rows)[i];
    const bool cheapest = i == 0 && row.cost < kUnranked;
    const bool fastest = !by_time.empty() && by_time[0] == i && row.time < kUnranked;
    const std::string mark = cheapest && fastest ? "cheapest, fastest"
                             : cheapest          ? "cheapest"
                             : fastest           ? "fastest"
                                                 : row.note;
    row.cells.push_back(row.cost < kUnranked ? Cell(static_cast<double>(i + 1)) : Cell());
    row.cells.push_back(time_rank[i]);
    row.cells.push_back(mark);
  }
}

// The cheapest and the fastest row with their runners-up, in the orders rank_rows ranks by: cost
// then time, time then its 95th percentile. Requires: `rows` ranked by rank_rows (an earlier row
// wins a tie of both figures, as rank_rows' stable sorts have it).
struct Leaders {
  RankingLeaders<const Row*> cheapest, fastest;
};

Leaders leaders(const std::vector<Row>& rows) {
  Leaders l;
  for (const Row& r : rows) {
    if (r.cost != kUnranked) l.cheapest.offer({r.cost, r.time}, r.index, &r);
    if (r.time != kUnranked) l.fastest.offer({r.time, r.time_p95}, r.index, &r);
  }
  return l;
}

// The tie notes (accuracy_notes.h) of the cheapest and the fastest row, each against its
// runner-up.
TieNotes rank_ties(const Leaders& l, const AccuracyEvidence* evidence, const AccuracyKeys& keys) {
  const auto contender = [](double Row::*figure) {
    return [figure](const Row* r) {
      return TieContender{static_cast<double>(r->index), r->billing,
                          std::get<std::string>(r->cells.front()), r->*figure, r->configuration};
    };
  };
  TieNotes ties;
  add_ranking_tie(evidence, keys, "the cheapest", l.cheapest, contender(&Row::cost), &ties);
  add_ranking_tie(evidence, keys, "the fastest", l.fastest, contender(&Row::time), &ties);
  return ties;
}

// Under the table: the cheapest and the fastest row, then each one's tie note, then the first
// row (in the table's order) that writes no checkpoint at its interval, and how many more do.
void print_summary(const std::vector<Row>& rows, const Leaders& l, const TieNotes& ties) {
  std::cout << "\n";
  if (l.cheapest.best()) std::cout << "cheapest    " << (*l.cheapest.best())->configuration << "\n";
  if (l.fastest.best()) std::cout << "fastest     " << (*l.fastest.best())->configuration << "\n";
  print_ties(std::cout, ties);
  const auto none = [](const Row& r) { return !r.no_checkpoint.empty(); };
  const auto first = std::find_if(rows.begin(), rows.end(), none);
  if (first == rows.end()) return;
  const auto more = std::count_if(first + 1, rows.end(), none);
  std::cout << first->configuration << ": " << first->no_checkpoint;
  if (more > 0)
    std::cout << " (and " << more << " more row" << (more > 1 ? "s" : "") << " likewise)";
  std::cout << "\n";
}

// A checkpoint volume's line: its price a month (one per job for a shared file system, one per
// node for a block volume) and its source, or that its tier is not priced.
std::string storage_price_line(const CheckpointVolume& volume) {
  const s::StorageTier& tier = *volume.tier;
  const std::string line = "  checkpoint volume " + volume_words(*volume.volume);
  if (!tier.has_price()) {
    return line + ": not priced (no catalog price for the tier: costs count no storage)\n";
  }
  const s::StoragePrice& price = tier.price();
  return line + ": " +
         format_number(std::round(volume_price_per_month(tier, *volume.volume) * 1e4) / 1e4) + " " +
         s::Currency_Name(price.currency()) + "/month " +
         (tier.shared_across_nodes() ? "per job" : "per node") + ", catalog" +
         (price.region().empty() ? "" : ", " + price.region()) + " (" + price.source().citation() +
         confidence_note(catalog_price_confidence(price.source().confidence())) + ")\n";
}

// One line per checkpoint volume (storage_price_line), once where several values of
// sweep.checkpoint_storage share it.
void print_storage_prices(const CostModel& model) {
  std::set<std::string> printed;
  for (const CheckpointVolumeSet& set : model.checkpoint_volumes) {
    for (const auto& [provider, volume] : set) {
      const std::string line = storage_price_line(volume);
      if (printed.insert(line).second) std::cout << line;
    }
  }
}

// One line per price used: where it came from and, converted, what it is worth.
void print_prices(const CostModel& model, const std::vector<const s::InstanceType*>& instances) {
  std::cout << "\ncosts in " << s::Currency_Name(model.currency) << "; prices used:\n";
  for (const s::InstanceType* instance : instances) {
    for (s::BillingMode billing : model.billing_modes) {
      const auto price = model.prices.price(*instance, billing);
      std::cout << "  " << instance->name() << " " << s::BillingMode_Name(billing) << ": ";
      if (!price) {
        std::cout << "none (give one in cost.prices or --prices)\n";
        continue;
      }
      std::cout << format_number(std::round(price->per_hour * 1e4) / 1e4) << " "
                << s::Currency_Name(price->currency) << "/h";
      if (price->currency != model.currency) {
        std::cout << " x "
                  << format_number(*model.prices.exchange_rate(price->currency, model.currency));
      }
      std::cout << ", " << price_origin(*price);
      if (!price->basis.empty()) std::cout << ", " << price->basis;
      std::cout << " (" << price->source << confidence_note(price_confidence(*price)) << ")\n";
    }
  }
  print_storage_prices(model);
}

}  // namespace

int cost_command(const std::vector<std::string>& args) {
  std::string prices_path;
  int trials = 0;
  std::optional<std::string> seed_text;  // --seed as typed; absent: the scenario's
  po::options_description own("cost");
  own.add_options()("prices", po::value(&prices_path), "file of price overrides (a PriceFile)")(
      "trials", po::value(&trials)->default_value(0),
      "simulated runs per spot configuration (0: the scenario's cost.trials, else 400)")(
      "seed",
      po::value<std::string>()->notifier([&seed_text](const std::string& t) { seed_text = t; }),
      "seed of the first trial, 0 to 2^64 - 1 as cost.seed (default: the scenario's cost.seed, "
      "else 1)");
  int exit_code = kExitOk;
  auto inputs =
      load_scenario_command(args, "cost", "configurations to cost (0: all)", &exit_code, &own);
  if (!inputs) return exit_code;
  if (trials < 0 || trials > kMaxTrials) {
    command_error("cost") << "--trials must be in [0, " << kMaxTrials
                          << "] (0: the scenario's), got " << trials << "\n";
    return kExitUsage;
  }
  // Read as text, not an int64_t: cost.seed is a uint64, and seeds from 2^63 were refused.
  uint64_t seed = 0;
  if (seed_text) {
    const char* end = seed_text->data() + seed_text->size();
    const auto [stop, error] = std::from_chars(seed_text->data(), end, seed);
    if (seed_text->empty() || error != std::errc() || stop != end) {
      command_error("cost") << "--seed must be a whole number from 0 to "
                            << std::numeric_limits<uint64_t>::max() << " (as cost.seed), got \""
                            << *seed_text << "\"\n";
      return kExitUsage;
    }
  }
  std::optional<CostInputs> cost = load_cost_inputs(*inputs, prices_path);
  if (!cost) return kExitInputError;
  bool evidence_failed = false;
  const auto evidence = load_accuracy_evidence(inputs->root, *inputs->catalog, &evidence_failed);
  if (evidence_failed) return kExitInputError;
  AccuracyKeys keys = training_accuracy_keys(*inputs->catalog, *inputs->scenario);
  CostModel* model = cost->model.get();
  if (trials > 0) model->trials = trials;
  if (seed_text) model->seed = seed;

  const ExpandedConfigurations space = expand_configurations(*inputs->scenario);
  const Runnability runnable = check_scenario_runs(*inputs);
  if (runnable.valid == 0) return kExitInputError;
  const ShardingColumns sharding(space.valid);
  Table table = cost_table(sharding, checkpoint_axis(*model), storage_priced(*model),
                           model->settings->checkpoint().save_on_preemption_notice());
  std::vector<Row> rows;
  size_t unsimulated = 0;  // rows too long to simulate
  size_t simulated = 0;
  size_t over_volume = 0;                // rows whose checkpoint does not fit its volume
  std::string too_long;                  // why the first such row was
  bool too_long_never_finishes = false;  // and whether it is not expected to finish (RunCost's)
  std::string too_big;                   // why the first checkpoint over its volume was
  const std::optional<size_t> shown =
      evaluate_each(*inputs, space, [&](const Configuration& c, const Evaluation& e) {
        if (e.step) keys.note(cluster_label(c));
        if (!e.step) {
          for (s::BillingMode billing : model->billing_modes) {
            rows.push_back(oom_row(*model, c, e, billing, sharding, table.column_count()));
          }
          return;
        }
        const CheckpointPlan plan = plan_checkpoints(*model, c, e.memory, *e.step);
        for (s::BillingMode billing : model->billing_modes) {
          if (!plan.over_volume.empty()) {
            if (over_volume++ == 0) too_big = plan.over_volume;
            rows.push_back(
                unranked_row(*model, c, billing, sharding, table.column_count(), "yes",
                             std::string(kStatusCheckpointOverVolume) + ": " + plan.over_volume));
            continue;
          }
          const RunCost run = run_cost(*model, c, plan, billing);
          if (!run.unsimulated.empty()) {
            rows.push_back(unranked_row(*model, c, billing, sharding, table.column_count(), "yes",
                                        std::string(kStatusTooLong) + ": " + run.unsimulated));
            if (unsimulated++ == 0) {
              too_long = run.unsimulated;
              too_long_never_finishes = run.never_finishes;
            }
            continue;
          }
          rows.push_back(cost_row(*model, c, sharding, *e.step, plan, run));
          ++simulated;
        }
      });
  if (!shown) return kExitInputError;
  rank_rows(&rows);
  const Leaders ranked = leaders(rows);
  const TieNotes ties = rank_ties(ranked, evidence.get(), keys);
  const bool json_accuracy = inputs->format == OutputFormat::kJson && evidence;
  if (json_accuracy) {
    for (const std::string& key : accuracy_keys()) table.add_columns({{key, ""}});
  }
  for (const Row& row : rows) {
    std::vector<Cell> cells = row.cells;
    if (json_accuracy) {
      const std::vector<Cell> accuracy =
          accuracy_key_cells(*evidence, keys, ties, std::get<std::string>(row.cells.front()),
                             static_cast<double>(row.index), row.billing);
      cells.insert(cells.end(), accuracy.begin(), accuracy.end());
    }
    table.add_row(std::move(cells));
  }
  table.print(std::cout, inputs->format);
  if (inputs->format == OutputFormat::kTable) {
    print_summary(rows, ranked, ties);
    print_accuracy(std::cout, evidence.get(), keys);
    print_prices(*model, inputs->scenario->instances);
    if (*shown < space.valid.size()) {
      std::cout << "... " << space.valid.size() - *shown << " more configurations (--limit 0)\n";
    }
  }
  if (!runnable.runs) return kExitInputError;
  // No row got a time: say why (each reason that held a row), as an input error.
  if (simulated == 0 && unsimulated > 0)
    report_unsimulated_runs(*inputs, too_long, too_long_never_finishes);
  if (simulated == 0 && over_volume > 0) report_checkpoint_over_volume(*inputs, too_big);
  if (simulated == 0 && unsimulated + over_volume > 0) return kExitInputError;
  return kExitOk;
}

}  // namespace clustersim::cli
