// Indexing of sweep candidates (ConfigurationSpace): the option axes, the listed layouts or each
// group's auto layouts (auto_layouts.cpp), the mixes of pools, and any index decoded to its
// configuration; why a candidate cannot run is configuration_checks.h's.
#include "sim/sweep/configuration_space.h"

#include <algorithm>
#include <memory>
#include <numeric>
#include <set>
#include <tuple>
#include <utility>

#include "sim/net/topology_builder.h"
#include "sim/sweep/axis_values.h"
#include "sim/sweep/configuration_checks.h"
#include "sim/util/check.h"

namespace clustersim {
namespace {

namespace s = schema;

// What makes two pools the same: instance, nodes, owned nodes and their price.
using PoolKey = std::tuple<std::string, int, int, bool>;

// Base parallelism with the documented defaults filled in.
s::Parallelism base_parallelism(const s::Scenario& scenario) {
  s::Parallelism p = scenario.parallelism();
  if (!p.has_tensor_parallel()) p.set_tensor_parallel(1);
  if (!p.has_pipeline_parallel()) p.set_pipeline_parallel(1);
  if (!p.has_micro_batch_size()) p.set_micro_batch_size(1);
  if (!p.has_schedule() || p.schedule() == s::PIPELINE_SCHEDULE_UNSPECIFIED) {
    p.set_schedule(s::ONE_F_ONE_B);
  }
  if (!p.has_virtual_stages()) p.set_virtual_stages(1);
  if (!p.has_context_parallel()) p.set_context_parallel(1);
  if (!p.has_context_parallel_comm() || p.context_parallel_comm() == s::CONTEXT_PARALLEL_COMM_UNSPECIFIED) {
    p.set_context_parallel_comm(s::P2P);
  }
  if (!p.has_rank_order() || p.rank_order() == s::RANK_ORDER_UNSPECIFIED) {
    p.set_rank_order(s::TP_PP_DP);
  }
  if (!p.has_zero_stage()) p.set_zero_stage(0);
  if (!p.has_sequence_parallel()) p.set_sequence_parallel(false);
  if (!p.has_distributed_optimizer()) p.set_distributed_optimizer(false);
  // DeepSpeed's pipeline engine overlaps none of them (deepspeed_pipeline.h).
  const bool overlap = !p.deepspeed_pipeline_engine();
  if (!p.has_overlap_gradient_reduce()) p.set_overlap_gradient_reduce(overlap);
  if (!p.has_overlap_parameter_gather()) p.set_overlap_parameter_gather(overlap);
  if (!p.has_overlap_pipeline_communication()) p.set_overlap_pipeline_communication(overlap);
  if (!p.has_recompute() || p.recompute() == s::RECOMPUTE_UNSPECIFIED) {
    p.set_recompute(s::RECOMPUTE_NONE);
  }
  if (!p.has_pool_placement() || p.pool_placement() == s::POOL_PLACEMENT_UNSPECIFIED) {
    p.set_pool_placement(s::DATA_PARALLEL_POOLS);
  }
  return p;
}

}  // namespace

bool Configuration::has_owned_nodes() const {
  if (!pools) return false;
  return std::any_of(pools->begin(), pools->end(),
                     [](const PoolShare& pool) { return pool.owned_nodes > 0; });
}

int Configuration::rented_nodes() const {
  if (!pools) return nodes;
  int rented = 0;
  for (const PoolShare& pool : *pools) rented += pool.nodes - pool.owned_nodes;
  return rented;
}

std::string cluster_label(const Configuration& c) {
  if (!c.is_mix()) return c.instance->name();
  std::string text;
  for (const PoolShare& pool : *c.pools) {
    text +=
        (text.empty() ? "" : " + ") + pool.instance->name() + " x " + std::to_string(pool.nodes);
  }
  return text;
}

std::optional<int> pool_replicas(const PoolShare& pool, const s::Parallelism& p) {
  const int model_parallel = p.tensor_parallel() * p.context_parallel() * p.pipeline_parallel();
  if (pool.gpus() % model_parallel != 0) return std::nullopt;
  return pool.gpus() / model_parallel;
}

int Configuration::stage_gpus() const {
  return parallelism.tensor_parallel() * parallelism.context_parallel() *
         parallelism.data_parallel();
}

std::vector<const PoolShare*> Configuration::stage_pools() const {
  std::vector<const PoolShare*> of;
  for (const PoolShare& pool : *pools) of.insert(of.end(), pool.gpus() / stage_gpus(), &pool);
  return of;
}

int Configuration::gpus() const {
  if (!pools) return nodes * gpus_per_node;
  int total = 0;
  for (const PoolShare& pool : *pools) total += pool.gpus();
  return total;
}

ConfigurationSpace::ConfigurationSpace(const LoadedScenario& scenario)
    : scenario_(scenario), base_(base_parallelism(scenario.scenario())) {
  const s::Scenario& sc = scenario.scenario();
  const s::Sweep& sw = sc.sweep();
  const bool loads = sc.job().has_dataloader();
  std::vector<const s::StorageVolume*> volumes;
  for (const s::StorageVolume& volume : sw.dataset_storage()) volumes.push_back(&volume);
  if (volumes.empty()) volumes.push_back(loads ? &sc.job().dataset().storage() : nullptr);
  const std::vector<int> workers = axis_values<int>(
      sw.dataloader_workers_per_gpu(), loads ? sc.job().dataloader().workers_per_gpu() : 0);
  const int checkpoint_sets = std::max(1, sw.checkpoint_storage_size());
  for (int zero : axis_values<int>(sw.zero_stage(), base_.zero_stage())) {
    for (int shard : axis_values<int>(sw.data_parallel_shard(), base_.data_parallel_shard())) {
      for (int recompute : axis_values<int>(sw.recompute(), base_.recompute())) {
        for (bool sp : axis_values<bool>(sw.sequence_parallel(), base_.sequence_parallel())) {
          for (const s::StorageVolume* volume : volumes) {
            for (int w : workers) {
              for (int checkpoints = 0; checkpoints < checkpoint_sets; ++checkpoints) {
                options_.push_back({zero, shard, static_cast<s::Recompute>(recompute), sp, volume,
                                    w, checkpoints});
              }
            }
          }
        }
      }
    }
  }
  // Listed layouts are the same for every group: one list they all share.
  std::vector<Layout> listed;
  if (!sw.has_auto_parallelism()) {
    for (int tp : axis_values<int>(sw.tensor_parallel(), base_.tensor_parallel())) {
      for (int cp : axis_values<int>(sw.context_parallel(), base_.context_parallel())) {
        // 0: the scenario's expert_parallel (Layout).
        for (int ep : axis_values<int>(sw.expert_parallel(), 0)) {
          for (int pp : axis_values<int>(sw.pipeline_parallel(), base_.pipeline_parallel())) {
            for (int mbs : axis_values<int>(sw.micro_batch_size(), base_.micro_batch_size())) {
              for (int schedule : axis_values<int>(sw.schedule(), base_.schedule())) {
                for (int vs : axis_values<int>(sw.virtual_stages(), base_.virtual_stages())) {
                  for (int placement :
                       axis_values<int>(sw.pool_placement(), base_.pool_placement())) {
                    listed.push_back({tp, pp, mbs, vs, static_cast<s::PipelineSchedule>(schedule),
                                      cp, false, ep, static_cast<s::PoolPlacement>(placement)});
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  const auto shared_listed = std::make_shared<const std::vector<Layout>>(std::move(listed));
  if (sc.cluster().pool_size() > 0 || sw.pool_size() > 0) {
    std::set<std::vector<PoolKey>> in_order, in_any_order;  // the mixes before
    for (PoolMix& mix : mixes()) {
      std::vector<PoolKey> key;
      for (const PoolShare& pool : mix) {
        key.push_back(
            {pool.instance->name(), pool.nodes, pool.owned_nodes, pool.owned_at_own_rate});
      }
      const bool repeated = !in_order.insert(key).second;
      std::sort(key.begin(), key.end());
      const bool reordered = !in_any_order.insert(key).second;
      const Configuration::PoolsSeen seen = repeated    ? Configuration::PoolsSeen::kSameOrder
                                            : reordered ? Configuration::PoolsSeen::kOtherOrder
                                                        : Configuration::PoolsSeen::kFirst;
      Shape mixed{0, 0, 0, mix.size() > 1};
      int nodes = 0;
      for (const PoolShare& pool : mix) {
        const Shape one = shape(*pool.instance, pool.nodes);
        mixed.span_gpus = std::gcd(mixed.span_gpus, one.span_gpus);
        mixed.divided_gpus = std::gcd(mixed.divided_gpus, one.divided_gpus);
        mixed.total_gpus += one.total_gpus;
        mixed.node_gpus = std::gcd(mixed.node_gpus, one.node_gpus);
        nodes += pool.nodes;
      }
      const s::InstanceType* first = mix.front().instance;
      add_group(first, nodes, mixed, shared_listed,
                std::make_shared<const PoolMix>(std::move(mix)), seen);
    }
    return;
  }
  for (const s::InstanceType* instance : scenario.instances) {
    for (int nodes : axis_values<int>(sw.nodes(), sc.cluster().nodes())) {
      add_group(instance, nodes, shape(*instance, nodes), shared_listed, nullptr);
    }
  }
}

void ConfigurationSpace::add_group(const s::InstanceType* instance, int nodes, const Shape& shape,
                                   const std::shared_ptr<const std::vector<Layout>>& listed,
                                   std::shared_ptr<const PoolMix> pools,
                                   Configuration::PoolsSeen pools_seen) {
  Group group{instance, nodes, size_,
              scenario_.scenario().sweep().has_auto_parallelism()
                  ? std::make_shared<const std::vector<Layout>>(auto_layouts(shape))
                  : listed,
              std::move(pools), pools_seen};
  size_ += static_cast<int64_t>(group.layouts->size() * options_.size());
  groups_.push_back(std::move(group));
}

ConfigurationSpace::Shape ConfigurationSpace::shape(const s::InstanceType& instance,
                                                    int nodes) const {
  const int per_node = scenario_.gpus_per_node(instance);
  const int gpus = nodes * per_node;
  return {nvlink_domain_span_gpus(nodes, per_node, nvlink_domain_nodes_used(instance)), gpus, gpus,
          false, per_node};
}

// Pools of the scenario's order; sweep.pool's node counts combined with the last pool's fastest.
std::vector<PoolMix> ConfigurationSpace::mixes() const {
  const s::Scenario& sc = scenario_.scenario();
  const auto share = [&](int i, int nodes, int owned, s::OwnedPrice price) {
    const s::InstanceType* instance = scenario_.pool_instances[i];
    return PoolShare{instance,
                     nodes,
                     owned,
                     price == s::OWNED_AT_OWN_RATE,
                     instance->gpu_count(),
                     nvlink_domain_nodes(*instance)};
  };
  if (sc.sweep().pool_size() == 0) {
    PoolMix mix;
    for (int i = 0; i < sc.cluster().pool_size(); ++i) {
      const s::Pool& pool = sc.cluster().pool(i);
      mix.push_back(share(i, pool.nodes(), pool.owned_nodes(), pool.owned_price()));
    }
    return {mix};
  }
  std::vector<PoolMix> result;
  const int pools = sc.sweep().pool_size();
  std::vector<int> at(pools, 0);  // position in each pool's node list
  while (true) {
    PoolMix mix;
    for (int i = 0; i < pools; ++i) {
      const s::PoolAxis& axis = sc.sweep().pool(i);
      if (axis.nodes(at[i]) > 0) {
        mix.push_back(share(i, axis.nodes(at[i]), axis.owned_nodes(), axis.owned_price()));
      }
    }
    if (!mix.empty()) result.push_back(std::move(mix));
    int i = pools - 1;
    while (i >= 0 && ++at[i] == sc.sweep().pool(i).nodes_size()) at[i--] = 0;
    if (i < 0) return result;
  }
}

int ConfigurationSpace::nvlink_domain_nodes_used(const s::InstanceType& instance) const {
  const s::Cluster& cluster = scenario_.scenario().cluster();
  const int whole = nvlink_domain_nodes(instance);
  // A server's one-node domain stays whole: the field is for domains spanning nodes (the scenario
  // checks allow it beside servers only in a sweep over several instance types).
  return cluster.has_nvlink_domain_nodes() && whole > 1 ? cluster.nvlink_domain_nodes() : whole;
}

Configuration ConfigurationSpace::at(int64_t index) const {
  CLUSTERSIM_CHECK(index >= 0 && index < size_, "configuration index out of range");
  const auto group =
      std::prev(std::upper_bound(groups_.begin(), groups_.end(), index,
                                 [](int64_t i, const Group& g) { return i < g.first; }));
  const int64_t within = index - group->first;
  const Layout& layout = (*group->layouts)[within / static_cast<int64_t>(options_.size())];
  const Options& options = options_[within % static_cast<int64_t>(options_.size())];
  Configuration c{index,
                  group->instance,
                  group->nodes,
                  base_,
                  options.dataset_storage,
                  options.dataloader_workers_per_gpu,
                  scenario_.gpus_per_node(*group->instance),
                  nvlink_domain_nodes_used(*group->instance),
                  group->pools,
                  group->pools_seen,
                  options.checkpoint_storage};
  s::Parallelism& p = c.parallelism;
  p.set_tensor_parallel(layout.tensor_parallel);
  p.set_pipeline_parallel(layout.pipeline_parallel);
  p.set_micro_batch_size(layout.micro_batch_size);
  p.set_schedule(layout.schedule);
  p.set_virtual_stages(layout.virtual_stages);
  p.set_context_parallel(layout.context_parallel);
  if (layout.expert_parallel > 0) p.set_expert_parallel(layout.expert_parallel);
  p.set_pool_placement(layout.pool_placement);
  if (layout.embedding_and_loss_in_split) {
    p.set_embedding_in_pipeline_split(true);
    p.set_loss_in_pipeline_split(true);
  }
  p.set_zero_stage(options.zero_stage);
  const int shard =
      layout.data_parallel_shard > 0 ? layout.data_parallel_shard : options.data_parallel_shard;
  if (shard > 0) p.set_data_parallel_shard(shard);
  p.set_recompute(options.recompute);
  p.set_sequence_parallel(options.sequence_parallel);
  if (!base_.has_data_parallel()) {
    p.set_data_parallel(c.gpus() / (layout.tensor_parallel * layout.context_parallel *
                                    layout.pipeline_parallel));
  }
  return c;
}

ExpandedConfigurations expand_configurations(const LoadedScenario& scenario) {
  const ConfigurationSpace space(scenario);
  ExpandedConfigurations expanded;
  expanded.total = space.size();
  for (int64_t i = 0; i < space.size(); ++i) {
    Configuration c = space.at(i);
    ConfigurationProblem problem = configuration_problem(c, scenario);
    if (problem.empty()) {
      expanded.valid.push_back(std::move(c));
    } else {
      ++expanded.pruned[problem.reason];
    }
  }
  return expanded;
}

}  // namespace clustersim
