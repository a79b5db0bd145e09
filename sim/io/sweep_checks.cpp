// The checks of a scenario's sweep: auto_parallelism beside the listed axes, hybrid sharding's
// groups, the availability caps and the constraints; the warnings for a value an axis replaces
// or auto_parallelism never reaches.
#include "sim/io/sweep_checks.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "sim/io/axis_override.h"
#include "sim/io/catalog_reference.h"
#include "sim/io/degree_checks.h"
#include "sim/sweep/axis_values.h"
#include "sim/sweep/configuration_space.h"

namespace clustersim {
namespace {

namespace s = schema;

// "1, 2, 4": integers as a message lists them.
template <class Integers>
std::string comma_list(const Integers& values) {
  std::string text;
  for (const auto value : values) text += (text.empty() ? "" : ", ") + std::to_string(value);
  return text;
}

// A micro-batch is a part of one optimizer step's batch: one larger than job.global_batch_size
// fits no layout, and the sweep pruned every configuration of it ("micro-batch x data parallel
// does not divide the global batch") without naming the line that listed it. Of `owner`'s
// micro_batch_size list (the sweep axis or auto_parallelism's candidates).
void check_micro_batches_within_batch(const FieldChecker& owner, const s::TrainingJob& job) {
  if (job.global_batch_size() < 1) return;  // reported by the job's checks
  check_degree_values(owner, "micro_batch_size", [&](int micro_batch) {
    if (micro_batch <= job.global_batch_size()) return std::string();
    return std::to_string(micro_batch) + " is above job.global_batch_size (" +
           std::to_string(job.global_batch_size()) + "): a micro-batch is part of one step's batch";
  });
}

void check_auto_parallelism(const FieldChecker& sweep, const s::Scenario& scenario,
                            const s::Model* model) {
  for (const char* listed : {"tensor_parallel", "pipeline_parallel", "context_parallel",
                             "expert_parallel", "micro_batch_size", "virtual_stages", "schedule"}) {
    if (sweep.has(listed)) sweep.error(listed, "cannot be listed beside auto_parallelism");
  }
  if (scenario.parallelism().has_data_parallel()) {
    sweep.error("auto_parallelism", "derives data parallelism: remove parallelism.data_parallel");
  }
  const FieldChecker automatic = sweep.child("auto_parallelism");
  automatic.at_least("micro_batch_size", 1);
  automatic.distinct_lists();  // a candidate listed twice gave each of its layouts twice
  check_micro_batches_within_batch(automatic, scenario.job());
  automatic.at_least("max_pipeline_parallel", 1);
  automatic.at_least("max_virtual_stages", 1);
  // Each chunk holds a layer: more chunks than layers give no layout, and 2^31 - 1 of them took
  // the enumeration 2^31 tries a layout.
  check_degree_values(automatic, "max_virtual_stages",
                      [&](int vs) { return virtual_stages_problem(vs, model); });
  automatic.at_least("max_context_parallel", 1);
  if (scenario.sweep().auto_parallelism().hybrid_sharding() && sweep.has("data_parallel_shard")) {
    sweep.error("data_parallel_shard",
                "cannot be listed beside auto_parallelism.hybrid_sharding (which chooses it)");
  }
}

// Hybrid sharding swept (its axis or auto_parallelism.hybrid_sharding) needs ZeRO-3 among the
// sweep's stages.
void check_hybrid_sharding_stage(const FieldChecker& sweep, const s::Scenario& scenario) {
  const s::Sweep& w = scenario.sweep();
  const std::vector<int> stages =
      axis_values<int>(w.zero_stage(), scenario.parallelism().zero_stage());
  if (std::find(stages.begin(), stages.end(), 3) != stages.end()) return;
  const std::string why =
      "hybrid sharding needs zero_stage 3 among the sweep's ZeRO stages "
      "(parallelism.zero_stage or sweep.zero_stage), which are " +
      comma_list(stages);
  if (w.data_parallel_shard_size() > 0) sweep.error("data_parallel_shard", why);
  if (w.auto_parallelism().hybrid_sharding()) {
    sweep.child("auto_parallelism").error("hybrid_sharding", why);
  }
}

// Caps on the nodes to be had of an instance type ("at most 2 p5 on spot").
void check_availability(const FieldChecker& constraints, const Catalog& catalog) {
  const auto& m = static_cast<const s::Constraints&>(constraints.message());
  for (int i = 0; i < m.availability_size(); ++i) {
    const FieldChecker cap = constraints.child("availability", i);
    cap.require("max_nodes") && cap.at_least("max_nodes", 0);
    if (cap.require("instance")) {
      resolve_reference(cap, "instance", -1, m.availability(i).instance(), catalog.instances(),
                        "instance type");
    }
  }
}

void check_constraints(const FieldChecker& constraints) {
  const auto& m = static_cast<const s::Constraints&>(constraints.message());
  constraints.at_least("min_gpus", 1);
  constraints.at_least("max_gpus", 1);
  constraints.positive("max_time_to_train_hours");
  constraints.positive("max_cost");
  if (m.has_min_gpus() && m.has_max_gpus() && m.min_gpus() > m.max_gpus()) {
    constraints.error("max_gpus", "is below min_gpus (" + std::to_string(m.min_gpus()) +
                                      "): no configuration can satisfy both");
  }
  if (m.has_max_cost()) constraints.require_enum("currency");
  if (m.has_currency() && !m.has_max_cost()) {
    constraints.error("currency", "applies to max_cost, which is not given");
  }
}

}  // namespace

void check_sweep(const FieldChecker& sweep, const s::Scenario& scenario, const s::Model* model,
                 const Catalog& catalog) {
  sweep.distinct_lists(s::AxisRange::descriptor());  // ranges add to the axes checked here
  if (scenario.sweep().has_constraints()) check_availability(sweep.child("constraints"), catalog);
  check_parallelism_fields(sweep, model);
  check_micro_batches_within_batch(sweep, scenario.job());
  sweep.at_least("nodes", 1);
  if (scenario.sweep().has_auto_parallelism()) check_auto_parallelism(sweep, scenario, model);
  if (scenario.sweep().data_parallel_shard_size() > 0 ||
      scenario.sweep().auto_parallelism().hybrid_sharding()) {
    check_hybrid_sharding_stage(sweep, scenario);
  }
  if (scenario.sweep().has_constraints()) check_constraints(sweep.child("constraints"));
}

void warn_replaced_by_axes(const FieldChecker& root) {
  const FieldChecker sweep = root.child("sweep");
  const FieldChecker cluster = root.child("cluster");
  for (const char* field : {"instance", "nodes"})
    warn_if_replaced_by_axis(cluster, field, sweep, field);
  const FieldChecker parallelism = root.child("parallelism");
  for (const char* field : {"tensor_parallel", "pipeline_parallel", "context_parallel",
                            "expert_parallel", "micro_batch_size", "virtual_stages", "schedule",
                            "zero_stage",
                            "recompute", "sequence_parallel", "data_parallel_shard"}) {
    warn_if_replaced_by_axis(parallelism, field, sweep, field);
  }
  const FieldChecker job = root.child("job");
  warn_if_replaced_by_axis(job.child("dataset"), "storage", sweep, "dataset_storage");
  warn_if_replaced_by_axis(job.child("dataloader"), "workers_per_gpu", sweep,
                           "dataloader_workers_per_gpu");
}

void warn_outside_auto_parallelism(const FieldChecker& root, const s::Scenario& scenario) {
  if (!scenario.sweep().has_auto_parallelism()) return;
  const s::AutoParallelism& automatic = scenario.sweep().auto_parallelism();
  const s::Parallelism& p = scenario.parallelism();
  const FieldChecker parallelism = root.child("parallelism");
  const auto never = [&](std::string_view field, const std::string& value, const std::string& why) {
    parallelism.warning(field, value + " is never simulated: sweep.auto_parallelism " + why);
  };
  const std::vector<int> candidates = auto_micro_batch_sizes(automatic);
  if (p.has_micro_batch_size() && std::find(candidates.begin(), candidates.end(),
                                            p.micro_batch_size()) == candidates.end()) {
    never("micro_batch_size", std::to_string(p.micro_batch_size()),
          "tries micro-batches of " + comma_list(candidates) + " (its micro_batch_size)");
  }
  if (p.has_pipeline_parallel() && automatic.has_max_pipeline_parallel() &&
      p.pipeline_parallel() > automatic.max_pipeline_parallel()) {
    never("pipeline_parallel", std::to_string(p.pipeline_parallel()),
          "tries stages up to its max_pipeline_parallel, " +
              std::to_string(automatic.max_pipeline_parallel()));
  }
  const int max_vs = auto_max_virtual_stages(automatic);
  if (p.has_virtual_stages() && p.virtual_stages() > max_vs) {
    never("virtual_stages", std::to_string(p.virtual_stages()),
          "tries model chunks up to its max_virtual_stages, " + std::to_string(max_vs) +
              (automatic.has_max_virtual_stages() ? "" : " when absent"));
  }
  const int max_cp = auto_max_context_parallel(automatic);
  if (p.has_context_parallel() && p.context_parallel() > max_cp) {
    never("context_parallel", std::to_string(p.context_parallel()),
          "tries context-parallel degrees up to its max_context_parallel, " +
              std::to_string(max_cp) + (automatic.has_max_context_parallel() ? "" : " when absent"));
  }
  const std::string schedule = s::PipelineSchedule_Name(p.schedule());
  if (p.schedule() == s::INTERLEAVED_ONE_F_ONE_B && max_vs == 1) {
    never("schedule", schedule, "interleaves only with its max_virtual_stages above 1");
  } else if (p.schedule() == s::DUALPIPE && !automatic.dualpipe()) {
    never("schedule", schedule, "tries DualPipe only with its dualpipe");
  } else if (p.schedule() == s::DUALPIPE_V) {
    never("schedule", schedule, "tries 1F1B, GPipe, interleaving and DualPipe only");
  }
}

void check_shard_axis(const FieldChecker& root, const LoadedScenario& loaded) {
  const s::Scenario& m = loaded.scenario();
  const s::Sweep& w = m.sweep();
  if (w.data_parallel_shard_size() == 0 || !loaded.pool_instances.empty()) return;
  const s::Parallelism& p = m.parallelism();
  std::set<int64_t> degrees;  // data-parallel degrees, or under auto_parallelism the GPU counts
  for (const s::InstanceType* instance : loaded.instances) {
    const int64_t per_node = loaded.gpus_per_node(*instance);
    for (int nodes : axis_values<int>(w.nodes(), m.cluster().nodes())) {
      const int64_t gpus = nodes * per_node;
      if (p.has_data_parallel() || w.has_auto_parallelism()) {
        if (gpus > 0) degrees.insert(p.has_data_parallel() ? p.data_parallel() : gpus);
        continue;
      }
      for (int tp : axis_values<int>(w.tensor_parallel(), std::max(p.tensor_parallel(), 1))) {
        for (int cp : axis_values<int>(w.context_parallel(), std::max(p.context_parallel(), 1))) {
          for (int pp :
               axis_values<int>(w.pipeline_parallel(), std::max(p.pipeline_parallel(), 1))) {
            const int64_t model_parallel = int64_t{tp} * cp * pp;
            if (gpus > 0 && gpus % model_parallel == 0) degrees.insert(gpus / model_parallel);
          }
        }
      }
    }
  }
  if (degrees.empty()) return;  // no layout divides the GPUs: each configuration says why
  const std::string listed = comma_list(degrees);
  const FieldChecker sweep = root.child("sweep");
  for (int i = 0; i < w.data_parallel_shard_size(); ++i) {
    const int shard = w.data_parallel_shard(i);
    if (shard < 1 ||
        std::any_of(degrees.begin(), degrees.end(), [&](int64_t d) { return d % shard == 0; })) {
      continue;
    }
    sweep.error("data_parallel_shard",
                std::to_string(shard) + " divides none of the sweep's " +
                    (w.has_auto_parallelism() && !p.has_data_parallel()
                         ? "GPU counts (" + listed + "), so no data-parallel degree"
                         : "data-parallel degrees (" + listed + ")"),
                i);
  }
}

}  // namespace clustersim
