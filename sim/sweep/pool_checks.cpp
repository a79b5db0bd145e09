// Tensor parallelism against the pools' NVLink domains; memory of a fixed mix per pool.
#include "sim/sweep/pool_checks.h"

#include "sim/net/topology_builder.h"
#include "sim/sweep/configuration_checks.h"
#include "sim/sweep/configuration_space.h"
#include "sim/sweep/evaluation.h"
#include "sim/util/number_format.h"
#include "sim/util/units.h"

namespace clustersim {
namespace {

namespace s = schema;

// GPUs of one NVLink domain of a pool of `nodes` (0: as many as the instance's domain has).
int domain_gpus(const s::InstanceType& instance, int nodes) {
  const int domain_nodes = nvlink_domain_nodes(instance);
  return nvlink_domain_span_gpus(nodes > 0 ? nodes : domain_nodes, instance.gpu_count(),
                                 domain_nodes);
}

void check_tensor_parallel(const FieldChecker& owner, int index, int tp,
                           const LoadedScenario& loaded) {
  const s::Scenario& m = loaded.scenario();
  for (size_t i = 0; i < loaded.pool_instances.size(); ++i) {
    const s::InstanceType& instance = *loaded.pool_instances[i];
    const int nodes = m.sweep().pool_size() > 0 ? 0 : m.cluster().pool(static_cast<int>(i)).nodes();
    const int span = domain_gpus(instance, nodes);
    if (span % tp == 0) continue;
    owner.error("tensor_parallel",
                std::to_string(tp) + " would span pools: pool " + std::to_string(i + 1) + " (\"" +
                    instance.name() + "\") has NVLink domains of " + std::to_string(span) +
                    " GPUs, and a tensor-parallel group stays inside one pool's NVLink domain",
                index);
    return;
  }
}

// No sweep axis changes the layout or the pools: the scenario is one configuration per billing.
bool fixed_layout(const s::Scenario& m) {
  const s::Sweep& w = m.sweep();
  return w.pool_size() == 0 && !w.has_auto_parallelism() && w.tensor_parallel_size() == 0 &&
         w.pipeline_parallel_size() == 0 && w.context_parallel_size() == 0 &&
         w.micro_batch_size_size() == 0 && w.zero_stage_size() == 0 && w.recompute_size() == 0 &&
         w.sequence_parallel_size() == 0 && w.virtual_stages_size() == 0 &&
         w.schedule_size() == 0 && w.pool_placement_size() == 0;
}

std::string layout_words(const s::Parallelism& p) {
  return "TP " + std::to_string(p.tensor_parallel()) + " CP " +
         std::to_string(p.context_parallel()) + " PP " + std::to_string(p.pipeline_parallel()) +
         " mbs " + std::to_string(p.micro_batch_size()) + ", ZeRO " +
         std::to_string(p.zero_stage()) + ", recompute " + s::Recompute_Name(p.recompute());
}

// The stages of a fixed pipeline across pools that do not fit their pool's GPU: at
// parallelism.stage_layers[stage] when the layers are given, else at pool_placement (no split by
// speed fits the model in the stages' memories).
void report_stage_memory(const FieldChecker& root, const Configuration& c,
                         const std::vector<MemoryEstimate>& memory, const LoadedScenario& loaded) {
  const bool listed = loaded.scenario().parallelism().stage_layers_size() > 0;
  const std::vector<const PoolShare*> pools = c.stage_pools();
  for (size_t stage = 0; stage < pools.size(); ++stage) {
    const MemoryEstimate& m = memory[stage];
    if (m.fits()) continue;
    const s::InstanceType& instance = *pools[stage]->instance;
    const std::string words =
        "stage " + std::to_string(stage + 1) + "'s " + std::to_string(m.layers) +
        " layers do not fit in the memory of \"" + instance.name() + "\"'s " + instance.gpu() +
        ": they need " + format_significant(m.total_bytes() / kBytesPerGibibyte, 3) +
        " GiB per GPU of the " + format_significant(m.capacity_bytes / kBytesPerGibibyte, 3) +
        " GiB it has";
    if (listed) {
      root.child("parallelism").error("stage_layers", words, static_cast<int>(stage));
    } else {
      root.child("parallelism")
          .error("pool_placement",
                 "no split of the layers by speed fits the stages' GPU memories (an even "
                 "split: " +
                     words + ")");
      return;
    }
  }
}

void check_pool_memory(const FieldChecker& root, const Catalog& catalog,
                       const LoadedScenario& loaded) {
  const ConfigurationSpace space(loaded);
  if (space.size() != 1) return;
  const Configuration c = space.at(0);
  if (!c.is_mix() || !configuration_problem(c, loaded).empty()) return;
  Evaluator evaluator(catalog, loaded);
  const std::vector<MemoryEstimate> memory = evaluator.pool_memory(c);
  if (c.parallelism.pool_placement() == s::PIPELINE_ACROSS_POOLS) {
    report_stage_memory(root, c, memory, loaded);
    return;
  }
  for (size_t i = 0; i < memory.size(); ++i) {
    if (memory[i].fits()) continue;
    const s::InstanceType& instance = *(*c.pools)[i].instance;
    root.child("cluster")
        .child("pool", static_cast<int>(i))
        .error("instance", "the model does not fit in the memory of \"" + instance.name() +
                               "\"'s " + instance.gpu() + " under " + layout_words(c.parallelism) +
                               ": it needs " +
                               format_significant(memory[i].total_bytes() / kBytesPerGibibyte, 3) +
                               " GiB per GPU of the " +
                               format_significant(memory[i].capacity_bytes / kBytesPerGibibyte, 3) +
                               " GiB it has (every pool's GPU holds the whole layout)");
  }
}

}  // namespace

void check_pool_layout(const FieldChecker& root, const Catalog& catalog,
                       const LoadedScenario& loaded) {
  const s::Scenario& m = loaded.scenario();
  const int errors_before = root.diagnostics()->error_count();
  if (m.sweep().tensor_parallel_size() > 0) {
    for (int i = 0; i < m.sweep().tensor_parallel_size(); ++i) {
      check_tensor_parallel(root.child("sweep"), i, m.sweep().tensor_parallel(i), loaded);
    }
  } else if (m.parallelism().has_tensor_parallel()) {
    check_tensor_parallel(root.child("parallelism"), -1, m.parallelism().tensor_parallel(), loaded);
  }
  if (root.diagnostics()->error_count() == errors_before && fixed_layout(m)) {
    check_pool_memory(root, catalog, loaded);
  }
}

}  // namespace clustersim
