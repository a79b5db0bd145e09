// The checks of a scenario's cluster: instance types and pools resolved, each candidate GPU
// against the job's precision, MXFP8, NVLink domains and host link, and the candidate clusters'
// GPU counts against kMaxConfigurationGpus.
#include "sim/io/cluster_checks.h"

#include <algorithm>
#include <string>

#include "sim/io/catalog_reference.h"
#include "sim/parallel/activation_offload.h"

namespace clustersim {
namespace {

namespace s = schema;

// Every candidate's GPU must support the job's precision.
void check_precision(const FieldChecker& owner, const char* field, int index,
                     const s::InstanceType& instance, const Catalog& catalog,
                     s::Precision precision) {
  const s::PeakTflops& peak = catalog.gpu_of(instance).peak_tflops();
  const bool supported = precision == s::FP32   ? peak.has_fp32()
                         : precision == s::TF32 ? peak.has_tf32()
                         : precision == s::FP16 ? peak.has_fp16()
                         : precision == s::BF16 ? peak.has_bf16()
                         : precision == s::FP8  ? peak.has_fp8()
                         : precision == s::FP4  ? peak.has_fp4()
                         : precision == s::INT8 ? peak.has_int8_tops()
                                                : false;
  if (!supported) {
    owner.error(field,
                "GPU \"" + instance.gpu() + "\" of \"" + instance.name() + "\" has no " +
                    s::Precision_Name(precision) + " support (job.precision)",
                index);
  }
}

// MXFP8's 32-element block scales are in the tensor cores of Blackwell and later, which also
// brought FP4: a GPU with an FP4 peak has them.
void check_fp8_recipe(const FieldChecker& root, const s::InstanceType& instance,
                      const Catalog& catalog, const s::TrainingJob& job) {
  const s::Gpu& gpu = catalog.gpu_of(instance);
  if (job.precision() == s::FP8 && job.fp8_recipe() == s::MXFP8 && !gpu.peak_tflops().has_fp4()) {
    root.child("job").error("fp8_recipe",
                            "MXFP8 needs block-scaled FP8 tensor cores (Blackwell or later); GPU \"" +
                                gpu.name() + "\" (" + gpu.architecture() + ") of \"" +
                                instance.name() + "\" has none (use CURRENT_SCALING, "
                                "DELAYED_SCALING or BLOCKWISE)");
  }
  // MXFP8 GEMMs inside an FP4 step run at the GPU's FP8 rate.
  if (job.precision() == s::FP4 && job.fp4_overrides().mxfp8_modules_size() > 0 &&
      !gpu.peak_tflops().has_fp8()) {
    root.child("job").child("fp4_overrides").error(
        "mxfp8_modules", "GPU \"" + gpu.name() + "\" of \"" + instance.name() +
                             "\" has no FP8 peak for the MXFP8 GEMMs");
  }
}

// cluster.nvlink_domain_nodes needs an instance whose NVLink domain spans that many nodes. A sweep
// over several instance types applies it to those whose domains span nodes (the NVL72 racks
// beside DGX servers) and needs one such instance at least: `several_spanning` says that there
// is one, so that a server's one-node domain is left as it is.
void check_nvlink_domain_nodes(const FieldChecker& root, const s::Cluster& cluster,
                               const s::InstanceType& instance, bool several_spanning) {
  if (!cluster.has_nvlink_domain_nodes() || cluster.nvlink_domain_nodes() < 1) return;
  const int domain_nodes = nvlink_domain_nodes(instance);
  if (domain_nodes == 1 && several_spanning) return;
  if (cluster.nvlink_domain_nodes() > domain_nodes) {
    root.child("cluster").error(
        "nvlink_domain_nodes",
        std::to_string(cluster.nvlink_domain_nodes()) + " is more than the " +
            std::to_string(domain_nodes) + " node(s) of an NVLink domain of \"" + instance.name() +
            "\"" + (instance.has_nvlink_domain_gpus() ? "" : " (it has no nvlink_domain_gpus)"));
  }
}

// A candidate on a GPU whose efficiencies are priors (efficiencies_are_priors) gets a warning: its
// times, and the costs made of them, are unverified.
void warn_prior_efficiencies(const FieldChecker& owner, int index, const s::InstanceType& instance,
                             const Catalog& catalog) {
  const s::Gpu& gpu = catalog.gpu_of(instance);
  if (!efficiencies_are_priors(gpu)) return;
  const bool second_hand = gpu.source().confidence() == s::UNVERIFIED;
  owner.warning("instance",
                "\"" + instance.name() + "\" runs on \"" + gpu.name() +
                    "\", whose efficiencies are priors, not fitted" +
                    (second_hand ? ", and whose peaks are second-hand" : "") + " (" +
                    gpu.efficiency_source().citation() +
                    "): its times and costs are unverified (rows marked calibrated: no)",
                index);
}

// The fields of a cluster of one instance type cannot describe pools.
void check_pools_alone(const FieldChecker& root, const s::Scenario& m) {
  const FieldChecker cluster = root.child("cluster");
  for (const char* field : {"instance", "nodes", "gpus_per_node", "nvlink_domain_nodes"}) {
    if (cluster.has(field)) {
      cluster.error(field, "cannot be given beside pools (a pool names its instance and nodes)");
    }
  }
  const FieldChecker sweep = root.child("sweep");
  for (const char* field : {"instance", "nodes"}) {
    if (sweep.has(field)) {
      sweep.error(field, "cannot be swept beside sweep.pool (its nodes are the axis)");
    }
  }
  if (m.sweep().pool_size() > 0 && m.cluster().pool_size() > 0) {
    sweep.error("pool", "replaces cluster.pool: give one of them");
  }
  if (m.parallelism().has_data_parallel()) {
    root.child("parallelism").error("data_parallel", "is derived per pool in a mix: remove it");
  }
  if (m.has_model() && m.job().has_dataloader()) {
    root.child("job").error("dataloader", "is not simulated on a cluster of pools yet");
  }
}

void check_inter_pool(const FieldChecker& cluster, const s::Cluster& m) {
  if (!m.has_inter_pool()) return;
  const FieldChecker network = cluster.child("inter_pool");
  const bool stated = m.inter_pool().kind() == s::InterPoolNetwork::STATED;
  if (stated) {
    network.require_rate("bandwidth_gbit_per_s");
  } else if (network.has("bandwidth_gbit_per_s")) {
    network.error("bandwidth_gbit_per_s", "applies to kind STATED");
  }
  if (!stated && network.has("latency_us")) network.error("latency_us", "applies to kind STATED");
  network.latency_us("latency_us");
}

// A pool's instance, node counts and owned nodes (cluster.pool[i] or sweep.pool[i]).
void check_pool(const FieldChecker& pool, const std::string& name, const Catalog& catalog,
                const s::Scenario& m, bool swept, LoadedScenario* loaded) {
  pool.at_least("owned_nodes", 0);
  if (swept) pool.at_least("nodes", 0) && pool.distinct_lists();  // a size twice: its rows twice
  const int owned = static_cast<int>(pool.has("owned_nodes") ? pool.number("owned_nodes") : 0);
  if (swept) {
    if (pool.require("nodes")) {
      for (int i = 0; i < pool.size("nodes"); ++i) {
        if (pool.number("nodes", i) < owned) {
          pool.error("nodes", "is below owned_nodes (" + std::to_string(owned) + ")", i);
        }
      }
    }
  } else if (pool.require("nodes") && pool.at_least("nodes", 1) && pool.number("nodes") < owned) {
    pool.error("owned_nodes", "exceeds the pool's nodes");
  }
  if (!pool.require("instance")) return;
  const s::InstanceType* instance =
      resolve_gpu_instance(pool, "instance", -1, name, catalog, "a pool needs GPUs to train");
  if (instance == nullptr) return;
  if (m.job().has_precision() && m.job().precision() != s::PRECISION_UNSPECIFIED) {
    check_precision(pool, "instance", -1, *instance, catalog, m.job().precision());
  }
  loaded->pool_instances.push_back(instance);
  warn_prior_efficiencies(pool, -1, *instance, catalog);
}

// Pools: every pool's instance has GPUs, at most one pool list, no field of a one-type cluster.
void check_pools(const FieldChecker& root, const Catalog& catalog, LoadedScenario* loaded) {
  const s::Scenario& m = loaded->scenario();
  check_pools_alone(root, m);
  check_inter_pool(root.child("cluster"), m.cluster());
  const bool swept = m.sweep().pool_size() > 0;
  const FieldChecker owner = swept ? root.child("sweep") : root.child("cluster");
  const int count = swept ? m.sweep().pool_size() : m.cluster().pool_size();
  for (int i = 0; i < count; ++i) {
    const std::string& name = swept ? m.sweep().pool(i).instance() : m.cluster().pool(i).instance();
    check_pool(owner.child("pool", i), name, catalog, m, swept, loaded);
  }
  // A swept pool's 0 leaves it out of a combination: where every value is 0, no combination
  // holds a node and the sweep would have no configuration to say why about.
  bool any_nodes = !swept;
  for (int i = 0; i < count && !any_nodes; ++i) {
    for (int nodes : m.sweep().pool(i).nodes()) any_nodes |= nodes > 0;
  }
  if (!any_nodes && count > 0) {
    owner.child("pool", count - 1)
        .error("nodes", "every pool's nodes are 0, so no combination holds a node (a 0 leaves "
                        "its pool out): give one pool a count above 0");
  }
  if (static_cast<int>(loaded->pool_instances.size()) != count) loaded->pool_instances.clear();
  loaded->instances = loaded->pool_instances;
  if (is_transformer(loaded->model) || loaded->model == nullptr) return;
  root.error("model", "\"" + m.model() + "\": a cluster of pools trains transformers only");
}

// Activation offload copies over the GPU's link to host memory, which the catalog must give.
void check_host_link(const FieldChecker& root, const s::InstanceType& instance,
                     const Catalog& catalog) {
  const s::Parallelism& p = static_cast<const s::Scenario&>(root.message()).parallelism();
  if (p.activation_offload_layers() <= 0 && p.activation_offload_modules_size() == 0) return;
  const s::Gpu& gpu = catalog.gpu_of(instance);
  if (host_link_bytes_per_s(gpu) > 0) return;
  root.child("parallelism")
      .error(p.activation_offload_layers() > 0 ? "activation_offload_layers"
                                               : "activation_offload_modules",
             "needs a link to host memory: \"" + gpu.name() + "\" of \"" + instance.name() +
                 "\" has neither host_link nor pcie in the catalog");
}

void resolve_instances(const FieldChecker& root, const Catalog& catalog, LoadedScenario* loaded) {
  const s::Scenario& m = loaded->scenario();
  const bool swept = m.has_sweep() && m.sweep().instance_size() > 0;
  const FieldChecker owner = swept ? root.child("sweep") : root.child("cluster");
  const int count = swept ? m.sweep().instance_size() : 1;
  bool several_spanning = false;  // a sweep over several types, one with multi-node domains
  for (int i = 0; swept && count > 1 && i < count; ++i) {
    const auto* entry = catalog.instances().find(m.sweep().instance(i));
    several_spanning |= entry != nullptr && nvlink_domain_nodes(*entry->value) > 1;
  }
  for (int i = 0; i < count; ++i) {
    const int index = swept ? i : -1;
    const std::string& name = swept ? m.sweep().instance(i) : m.cluster().instance();
    const s::InstanceType* instance =
        resolve_gpu_instance(owner, "instance", index, name, catalog, "it cannot train");
    if (instance == nullptr) continue;
    loaded->instances.push_back(instance);
    warn_prior_efficiencies(owner, index, *instance, catalog);
    if (m.cluster().has_gpus_per_node() && m.cluster().gpus_per_node() > instance->gpu_count()) {
      root.child("cluster").error("gpus_per_node", std::to_string(m.cluster().gpus_per_node()) +
                                                       " is more than the " +
                                                       std::to_string(instance->gpu_count()) +
                                                       " GPUs of \"" + instance->name() + "\"");
    }
    if (m.job().has_precision() && m.job().precision() != s::PRECISION_UNSPECIFIED) {
      check_precision(owner, "instance", index, *instance, catalog, m.job().precision());
      check_fp8_recipe(root, *instance, catalog, m.job());
    }
    check_nvlink_domain_nodes(root, m.cluster(), *instance, several_spanning);
    check_host_link(root, *instance, catalog);
  }
}

// Every mix must have at most kMaxConfigurationGpus GPUs: the largest pools together.
void check_pools_size(const FieldChecker& root, const LoadedScenario& loaded) {
  const s::Scenario& m = loaded.scenario();
  const bool swept = m.sweep().pool_size() > 0;
  int64_t gpus = 0;
  for (size_t i = 0; i < loaded.pool_instances.size(); ++i) {
    int64_t nodes = 0;
    if (swept) {
      for (int n : m.sweep().pool(static_cast<int>(i)).nodes()) nodes = std::max<int64_t>(nodes, n);
    } else {
      nodes = m.cluster().pool(static_cast<int>(i)).nodes();
    }
    gpus += nodes * loaded.pool_instances[i]->gpu_count();
  }
  if (gpus <= kMaxConfigurationGpus) return;
  (swept ? root.child("sweep") : root.child("cluster"))
      .error("pool", "the largest mix has " + std::to_string(gpus) + " GPUs, more than the " +
                         std::to_string(kMaxConfigurationGpus) + " a configuration may have");
}

}  // namespace

void check_cluster_size(const FieldChecker& root, const LoadedScenario& loaded) {
  const s::Scenario& m = loaded.scenario();
  if (!loaded.pool_instances.empty()) return check_pools_size(root, loaded);
  const bool swept = m.has_sweep() && m.sweep().nodes_size() > 0;
  const FieldChecker owner = swept ? root.child("sweep") : root.child("cluster");
  const int count = swept ? m.sweep().nodes_size() : 1;
  for (const s::InstanceType* instance : loaded.instances) {
    const int64_t per_node = loaded.gpus_per_node(*instance);
    for (int i = 0; i < count; ++i) {
      const int64_t nodes = swept ? m.sweep().nodes(i) : m.cluster().nodes();
      if (nodes * per_node <= kMaxConfigurationGpus) continue;
      owner.error("nodes",
                  std::to_string(nodes) + " nodes of \"" + instance->name() + "\" are " +
                      std::to_string(nodes * per_node) + " GPUs, more than the " +
                      std::to_string(kMaxConfigurationGpus) +
                      " a configuration may have (at most " +
                      std::to_string(kMaxConfigurationGpus / std::max<int64_t>(per_node, 1)) +
                      " nodes)",
                  swept ? i : -1);
      return;
    }
  }
}

void check_cluster(const FieldChecker& root, const Catalog& catalog, LoadedScenario* loaded) {
  const s::Scenario& m = loaded->scenario();
  if (m.cluster().pool_size() > 0 || m.sweep().pool_size() > 0) {
    if (m.cluster().has_fabric()) {
      loaded->fabric = resolve_reference(root.child("cluster"), "fabric", -1, m.cluster().fabric(),
                                         catalog.fabrics(), "fabric");
    }
    return check_pools(root, catalog, loaded);
  }
  if (m.cluster().has_inter_pool()) {
    root.child("cluster").error("inter_pool", "applies to a cluster of pools");
  }
  const bool swept_instances = m.has_sweep() && m.sweep().instance_size() > 0;
  const bool swept_nodes = m.has_sweep() && m.sweep().nodes_size() > 0;
  if (!m.has_cluster()) {
    if (!swept_instances || !swept_nodes) root.error("cluster", "is required");
  } else {
    const FieldChecker cluster = root.child("cluster");
    if (!swept_instances) cluster.require("instance");
    if (!swept_nodes) cluster.require("nodes");
    cluster.at_least("nodes", 1);
    cluster.at_least("gpus_per_node", 1);
    cluster.at_least("nvlink_domain_nodes", 1);
    if (m.cluster().has_fabric()) {
      loaded->fabric = resolve_reference(cluster, "fabric", -1, m.cluster().fabric(),
                                         catalog.fabrics(), "fabric");
    }
  }
  if (swept_instances || (m.has_cluster() && m.cluster().has_instance())) {
    resolve_instances(root, catalog, loaded);
  }
  // The instance the axis replaces is still a name to resolve: "nope" beside it loaded unread.
  if (swept_instances && m.cluster().has_instance()) {
    resolve_gpu_instance(root.child("cluster"), "instance", -1, m.cluster().instance(), catalog,
                         "it cannot train");
  }
}

}  // namespace clustersim
