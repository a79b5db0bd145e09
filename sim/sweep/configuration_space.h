// The configurations a scenario asks about, indexed without being stored: for each candidate
// instance and node count, the parallel layouts (listed axes, or every valid one with
// auto_parallelism) times the remaining option axes. A sweep of millions of candidates costs
// memory for its layouts only; any index decodes to its configuration in O(log groups).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/io/catalog.h"
#include "sim/io/scenario_loader.h"

namespace clustersim {

// One pool of a cluster made of several instance types (a mix), resolved.
struct PoolShare {
  const schema::InstanceType* instance = nullptr;
  int nodes = 0;
  int owned_nodes = 0;             // of `nodes`, those the user already has
  bool owned_at_own_rate = false;  // owned nodes priced like the added ones (else at zero)
  int gpus_per_node = 0;           // all of the instance's
  int nvlink_domain_nodes = 1;     // the instance's
  int gpus() const { return nodes * gpus_per_node; }
};
using PoolMix = std::vector<PoolShare>;

// The data-parallel replicas of `parallelism`'s tensor x context x pipeline layout that `pool`'s
// GPUs hold when the pools run data-parallel replicas (each pool whole replicas of the same
// layout); nullopt when that model-parallel size does not divide them (configuration_checks.h
// reports it at parallelism.pipeline_parallel). The one place a pool's replica count is derived.
std::optional<int> pool_replicas(const PoolShare& pool, const schema::Parallelism& parallelism);

// One point of the sweep with every degree resolved.
struct Configuration {
  int64_t index = 0;  // position in the scenario's ConfigurationSpace
  const schema::InstanceType* instance = nullptr;
  int nodes = 0;
  schema::Parallelism parallelism;  // every field set; data_parallel derived when not given
  // The input pipeline's choices: the job's dataset volume and workers or the sweep's values;
  // null and 0 when the job has no dataloader. Point into the scenario.
  const schema::StorageVolume* dataset_storage = nullptr;
  int dataloader_workers_per_gpu = 0;
  int gpus_per_node = 0;        // the job's GPUs on each node: the cluster's gpus_per_node or all
  int nvlink_domain_nodes = 1;  // nodes per NVLink domain used: the cluster's or the instance's
  // The pools when the scenario has some (cluster.pool or sweep.pool), in its order, pools of no
  // node left out; instance, gpus_per_node and nvlink_domain_nodes above are then the first
  // pool's and nodes the sum. Null: one instance type (a cluster's instance and nodes).
  std::shared_ptr<const PoolMix> pools = nullptr;
  // Two or more pools: simulated as a mix (sim/parallel/pool_step.h). One pool is the plain
  // cluster of its instance.
  bool is_mix() const { return pools && pools->size() > 1; }
  // Whether an earlier mix of the sweep has these pools (instance, nodes and owned nodes each):
  // in the same order (two sweep.pool of one instance type give it twice), or in another. Data-
  // parallel pools in another order, like the same order, are the same configuration
  // (configuration_checks.h prunes the repeat); a pipeline across pools in another order is not:
  // the first pool holds the first stages.
  enum class PoolsSeen { kFirst, kSameOrder, kOtherOrder };
  PoolsSeen pools_seen = PoolsSeen::kFirst;
  // Which set of checkpoint volumes the run writes to: the index of its value of
  // sweep.checkpoint_storage, 0 without that axis (cost.checkpoint.volume); CostModel resolves it.
  int checkpoint_storage = 0;
  // Some of its nodes are the user's already (priced by pool_price in run_cost).
  bool has_owned_nodes() const;
  // The nodes not owned (all of them without pools): those a billing mode rents, and so the only
  // ones spot preemptions take.
  int rented_nodes() const;
  int gpus() const;
  // GPUs of one pipeline stage: tensor x context x data parallel.
  int stage_gpus() const;
  // A pipeline across pools: the pool of each stage, in stage order (each pool holding whole
  // stages of stage_gpus()). Requires: pools.
  std::vector<const PoolShare*> stage_pools() const;
};

// The cluster in words: its instance's name, or a mix's pools ("aws.p5.48xlarge x 2 +
// aws.p4d.24xlarge x 4").
std::string cluster_label(const Configuration& configuration);

// What auto_parallelism tries: the micro-batch sizes it lists, or 1, 2, 4 and 8 when it lists
// none; model chunks per stage and context-parallel degrees up to its caps, 1 when absent.
std::vector<int> auto_micro_batch_sizes(const schema::AutoParallelism& automatic);
int auto_max_virtual_stages(const schema::AutoParallelism& automatic);
int auto_max_context_parallel(const schema::AutoParallelism& automatic);

class ConfigurationSpace {
 public:
  // Requires: a scenario that loaded without errors; it outlives the space.
  explicit ConfigurationSpace(const LoadedScenario& scenario);

  // Candidates, valid or not. Deterministic: the same scenario always gives the same order
  // (instance, nodes, tensor, context, pipeline, micro-batch, expert parallel (auto layouts of a
  // MoE model), schedule and virtual stages, pool placement (auto layouts: a mix's pipelines
  // across pools after all the others; auto hybrid-sharding groups), ZeRO stage, hybrid sharding's
  // group (sweep.data_parallel_shard), recomputation, sequence parallelism, dataset storage,
  // dataloader workers, checkpoint storage; the last fastest).
  int64_t size() const { return size_; }
  // Requires: 0 <= index < size().
  Configuration at(int64_t index) const;

 private:
  struct Layout {  // the parallel layout fields of one candidate
    int tensor_parallel, pipeline_parallel, micro_batch_size, virtual_stages;
    schema::PipelineSchedule schedule;
    int context_parallel = 1;
    // Embedding and loss counted as layers of the pipeline split (auto layouts that need it to
    // split evenly); false: as the scenario says.
    bool embedding_and_loss_in_split = false;
    int expert_parallel = 0;  // auto layouts of a MoE model; 0: as the scenario says
    schema::PoolPlacement pool_placement = schema::DATA_PARALLEL_POOLS;  // of a mix
    int data_parallel_shard = 0;  // auto hybrid_sharding's group; 0: as the options say
  };
  struct Options {  // the option axes of one candidate
    int zero_stage;
    int data_parallel_shard;  // 0: the scenario's (absent: all data-parallel ranks)
    schema::Recompute recompute;
    bool sequence_parallel;
    const schema::StorageVolume* dataset_storage;
    int dataloader_workers_per_gpu;
    int checkpoint_storage;
  };
  struct Group {  // one (instance, nodes) pair, or one mix of pools
    const schema::InstanceType* instance;
    int nodes;
    int64_t first;                                       // index of its first candidate
    std::shared_ptr<const std::vector<Layout>> layouts;  // shared when listed
    std::shared_ptr<const PoolMix> pools = nullptr;      // a scenario with pools
    Configuration::PoolsSeen pools_seen = Configuration::PoolsSeen::kFirst;
  };
  // The GPUs a layout splits: tensor parallel divides span_gpus (inside NVLink domains), context
  // x pipeline parallel the rest of `divided_gpus`, data parallel is total_gpus over the model
  // parallel degrees; a mix's micro-batches need not divide over its replicas evenly.
  struct Shape {
    int span_gpus, divided_gpus, total_gpus;
    bool mix;
    int node_gpus = 0;  // the job's GPUs on each node (pools: their greatest common divisor)
  };
  // Every valid layout of a cluster of this shape (auto_parallelism; auto_layouts.cpp).
  std::vector<Layout> auto_layouts(const Shape& shape) const;
  Shape shape(const schema::InstanceType& instance, int nodes) const;
  // The mixes of the scenario's pools (sweep.pool's combinations, or cluster.pool).
  std::vector<PoolMix> mixes() const;
  void add_group(const schema::InstanceType* instance, int nodes, const Shape& shape,
                 const std::shared_ptr<const std::vector<Layout>>& listed,
                 std::shared_ptr<const PoolMix> pools,
                 Configuration::PoolsSeen pools_seen = Configuration::PoolsSeen::kFirst);
  std::vector<int> auto_context_parallel(int tp, int gpus) const;
  // The expert-parallel degrees auto_parallelism tries on a stage of `stage_gpus` GPUs whose
  // tensor parallel is `tp`: divisors of the model's experts that fit beside the expert tensor
  // parallel; {0} (as the scenario says) for a model without experts.
  std::vector<int> auto_expert_parallel(int tp, int stage_gpus) const;
  void add_pipeline_layouts(Layout layout, std::vector<Layout>* out) const;
  // Each layout followed by its hybrid-sharding variants (auto_parallelism.hybrid_sharding): the
  // groups of data-parallel ranks, fewer than all, that divide them and fill whole nodes.
  std::vector<Layout> with_hybrid_sharding(const Shape& shape, std::vector<Layout> layouts) const;
  // A mix's layouts with the pipeline's stages across its pools: TP x CP x DP dividing every
  // pool's GPUs, the stages what the GPUs leave (pipeline_across_pools.h).
  void add_pipeline_across_pools(const Shape& shape, const std::vector<int>& mbs_values,
                                 std::vector<Layout>* out) const;
  // Nodes of each NVLink domain the job uses: the cluster's nvlink_domain_nodes or the instance's.
  int nvlink_domain_nodes_used(const schema::InstanceType& instance) const;

  const LoadedScenario& scenario_;
  schema::Parallelism base_;
  std::vector<Options> options_;
  std::vector<Group> groups_;
  int64_t size_ = 0;
};

// Every candidate of a small space, expanded: the valid ones in index order and why the others
// were pruned. For commands that list or simulate a handful of configurations.
struct ExpandedConfigurations {
  std::vector<Configuration> valid;
  int64_t total = 0;                      // valid + pruned
  std::map<std::string, int64_t> pruned;  // reason -> count
};
ExpandedConfigurations expand_configurations(const LoadedScenario& scenario);

}  // namespace clustersim
