// Loads a scenario file, checks it and resolves its references against the catalog.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/io/catalog.h"
#include "sim/io/schema/scenario.pb.h"
#include "sim/io/text_file.h"

namespace clustersim {

// A checked scenario with its references resolved. Pointers point into the catalog (or into
// trained_model), which must outlive this object. Immutable; safe to share between threads.
struct LoadedScenario {
  std::unique_ptr<TextFile<schema::Scenario>> file;
  // The model as the job trains it: the catalog's, or trained_model where the job changes it.
  const schema::Model* model = nullptr;
  // The catalog's model with the job's multi_token_prediction_layers; null when the job keeps the
  // model's.
  std::unique_ptr<schema::Model> trained_model;
  // The candidate instance types: sweep.instance if given, else cluster.instance; with pools,
  // the pools' instances (pool_instances).
  std::vector<const schema::InstanceType*> instances;
  // The instance of each pool, in the order of sweep.pool if given, else of cluster.pool.
  std::vector<const schema::InstanceType*> pool_instances;
  const schema::Fabric* fabric = nullptr;  // null: a single non-blocking switch

  const schema::Scenario& scenario() const { return file->message; }
  // The job's GPUs on each node of `instance`: cluster.gpus_per_node if given, else all of them.
  int gpus_per_node(const schema::InstanceType& instance) const {
    const schema::Cluster& cluster = scenario().cluster();
    return cluster.has_gpus_per_node() ? cluster.gpus_per_node() : instance.gpu_count();
  }
};

// The most GPUs a configuration may have: the work of simulating a step grows a little faster
// than the GPU count (a data-parallel collective spans every GPU), and 2^17 GPUs take tens of
// seconds; larger clusters are refused when the scenario is loaded.
inline constexpr int64_t kMaxConfigurationGpus = int64_t{1} << 17;
// The largest global batch: a step's simulation holds every micro-batch of every pipeline stage's
// schedule, about 0.1-0.3 KB each (2^24 micro-batches on 4 stages took 14 s and 2.9 GB; 2^31 did
// not finish); 2^20 is 12 times the largest published batch (81,920 images, Yamazaki et al. 2019,
// arXiv:1903.12650), and its step takes 0.5 s in one stage, 8 s in 40.
inline constexpr int64_t kMaxGlobalBatch = int64_t{1} << 20;
// The most optimizer steps a budget may ask for: counts of steps are exact integers up to 2^53.
inline constexpr double kMaxBudgetSteps = 9007199254740992.0;  // 2^53

// Reads, checks and resolves the scenario at `path`. Every problem goes to `diagnostics` with its
// file, line, field path and, for unknown names, the closest catalog name. Returns nullptr when
// there was any error.
std::unique_ptr<LoadedScenario> load_scenario(const std::string& path, const Catalog& catalog,
                                              Diagnostics* diagnostics);

}  // namespace clustersim
