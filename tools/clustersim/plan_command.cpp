// `clustersim plan SCENARIO`: checks a scenario and prints what it asks - the model, the job, the
// candidate instances and every configuration of its sweep (pruned ones counted by reason).
#include <algorithm>
#include <iostream>

#include "sim/cost/price_book.h"
#include "sim/cost/training_budget.h"
#include "sim/io/scenario_loader.h"
#include "sim/parallel/memory_model.h"
#include "sim/sweep/configuration_space.h"
#include "sim/sweep/result_row.h"
#include "sim/util/number_format.h"
#include "sim/workload/parameter_count.h"
#include "sim/workload/transformer_dimensions.h"
#include "tools/clustersim/command_line.h"
#include "tools/clustersim/commands.h"

namespace clustersim::cli {
namespace {

namespace s = schema;
using Cell = Table::Cell;

std::string model_summary(const s::Model& m) {
  const std::string params =
      format_fixed(static_cast<double>(parameter_count(m)) / 1e9, 3) + " B parameters";
  if (!m.has_transformer()) {
    return m.name() + ": CNN, " + std::to_string(m.cnn().layer_size()) + " layers, " + params;
  }
  const s::Transformer& t = m.transformer();
  return m.name() + ": " + (t.kind() == s::DECODER ? "decoder" : "encoder") + " transformer, " +
         std::to_string(t.num_layers()) + " layers, hidden " + std::to_string(t.hidden_size()) +
         ", " + std::to_string(t.num_attention_heads()) + " heads (" + std::to_string(kv_heads(t)) +
         " kv), ffn " + std::to_string(t.ffn_hidden_size()) + " " +
         s::MlpActivation_Name(t.mlp_activation()) + ", vocab " + std::to_string(t.vocab_size()) +
         (t.has_moe() ? ", " + std::to_string(t.moe().num_experts()) + " experts top-" +
                            std::to_string(t.moe().experts_per_token())
                      : "") +
         "; " + params;
}

std::string job_summary(const s::TrainingJob& job, bool transformer) {
  std::string text = "global batch " + std::to_string(job.global_batch_size());
  if (transformer) {
    text += " x " + std::to_string(job.sequence_length()) + " tokens";
  }
  text += ", " + s::Precision_Name(job.precision()) + ", " + s::Optimizer_Name(job.optimizer());
  switch (job.budget_case()) {
    case s::TrainingJob::kTokenBudget:
      text += "; " + format_number(job.token_budget()) + " tokens";
      break;
    case s::TrainingJob::kEpochs:
      text += "; " + format_number(job.epochs()) + " epochs";
      break;
    default:
      break;
  }
  return text + " = " + format_number(budget_steps(job)) + " steps";
}

// The catalog's on-demand price of every node of `c` together (every pool's, owned nodes
// included), in the one currency they share; nullopt when a node has none or they differ.
std::optional<UsedPrice> cluster_on_demand(const Configuration& c) {
  if (!c.pools) {
    std::optional<UsedPrice> price = catalog_price(*c.instance, s::ON_DEMAND);
    if (price) price->per_hour *= c.nodes;
    return price;
  }
  std::optional<UsedPrice> total;
  for (const PoolShare& pool : *c.pools) {
    const std::optional<UsedPrice> price = catalog_price(*pool.instance, s::ON_DEMAND);
    if (!price || (total && total->currency != price->currency)) return std::nullopt;
    if (!total)
      total = UsedPrice{0, price->currency, "catalog", "", "", s::CONFIDENCE_UNSPECIFIED, ""};
    total->per_hour += price->per_hour * pool.nodes;
  }
  return total;
}

// The first `limit` valid configurations (all when limit is 0).
Table configuration_table(const ExpandedConfigurations& space, size_t limit) {
  const ShardingColumns sharding(space.valid);
  Table t = layout_table();
  t.add_columns({{"gpus", "GPUs", 0}, {"virtual_stages", "vstages", 0}});
  sharding.add_to(&t);
  t.add_columns({{"sequence_parallel", "SP", 0},
                 {"recompute", "recompute", 0},
                 {"schedule", "schedule", 0},
                 {"cluster_on_demand_per_hour", "cluster/h", 2},
                 {"currency", "cur", 0}});
  const size_t shown = limit == 0 ? space.valid.size() : std::min(limit, space.valid.size());
  for (size_t i = 0; i < shown; ++i) {
    const Configuration& c = space.valid[i];
    const s::Parallelism& p = c.parallelism;
    const std::optional<UsedPrice> price = cluster_on_demand(c);
    std::vector<Cell> cells = layout_cells(c);
    cells.insert(cells.end(),
                 {static_cast<double>(c.gpus()), static_cast<double>(p.virtual_stages())});
    sharding.add_cells(c, &cells);
    cells.insert(cells.end(),
                 {p.sequence_parallel(), recompute_label(p), s::PipelineSchedule_Name(p.schedule()),
                  price ? Cell(price->per_hour) : Cell(),
                  price ? Cell(s::Currency_Name(price->currency)) : Cell()});
    t.add_row(std::move(cells));
  }
  return t;
}

void print_header(const LoadedScenario& loaded, const ExpandedConfigurations& space) {
  const s::Scenario& sc = loaded.scenario();
  std::cout << "scenario   " << sc.name() << "  (" << loaded.file->path << ")\n";
  if (sc.has_description()) std::cout << "question   " << sc.description() << "\n";
  std::cout << "model      " << model_summary(*loaded.model) << "\n"
            << "job        " << job_summary(sc.job(), loaded.model->has_transformer()) << "\n"
            << "fabric     "
            << (loaded.fabric ? loaded.fabric->name() : "single non-blocking switch") << "\n"
            << "sweep      " << space.total << " configurations, " << space.valid.size()
            << " valid\n";
  for (const auto& [reason, count] : space.pruned) {
    std::cout << "  pruned   " << count << ": " << reason << "\n";
  }
  std::cout << "\n";
}

}  // namespace

int plan_command(const std::vector<std::string>& args) {
  int exit_code = kExitOk;
  auto inputs = load_scenario_command(
      args, "plan", "configurations to list in table format (0: all; csv and json list all)",
      &exit_code);
  if (!inputs) return exit_code;
  const LoadedScenario* loaded = inputs->scenario.get();
  const size_t limit = inputs->limit;
  const ExpandedConfigurations space = expand_configurations(*loaded);
  const bool table = inputs->format == OutputFormat::kTable;
  if (table) print_header(*loaded, space);
  configuration_table(space, table ? limit : 0).print(std::cout, inputs->format);
  if (table && limit != 0 && space.valid.size() > limit) {
    std::cout << "... " << space.valid.size() - limit << " more (--limit 0 lists all)\n";
  }
  return check_scenario_runs(*inputs).runs ? kExitOk : kExitInputError;
}

}  // namespace clustersim::cli
