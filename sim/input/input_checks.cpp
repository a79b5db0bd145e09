// Input-pipeline checks of a scenario.
#include "sim/input/input_checks.h"

#include <algorithm>
#include <vector>

#include "sim/hw/storage_model.h"
#include "sim/input/dataloading_cost.h"
#include "sim/input/input_model.h"
#include "sim/io/catalog_reference.h"
#include "sim/util/number_format.h"
#include "sim/util/units.h"

namespace clustersim {
namespace {

namespace s = schema;

// The dataset's format must suit the model: images for a CNN, token sequences for a transformer.
void check_format(const FieldChecker& dataset, const s::Model* model) {
  if (!dataset.require_enum("format") || model == nullptr) return;
  const auto format = static_cast<const s::Dataset&>(dataset.message()).format();
  if (model->has_cnn() && format != s::JPEG_IMAGE) {
    dataset.error("format", "a CNN reads images: use JPEG_IMAGE");
  } else if (!model->has_cnn() && format == s::JPEG_IMAGE) {
    dataset.error("format", "a transformer reads token sequences: use PRETOKENIZED or RAW_TEXT");
  }
}

// A volume the dataset may be read from (job.dataset.storage or an element of
// sweep.dataset_storage) and its tier, null when unknown.
struct DatasetVolume {
  FieldChecker volume;
  const s::StorageTier* tier;
};

// The volume exists, holds the dataset `d` and gives the limits its layout depends on. Returns
// its tier (nullptr when unknown).
const s::StorageTier* check_volume(const FieldChecker& volume, const s::Dataset& d,
                                   const Catalog& catalog) {
  const s::StorageTier* tier = resolve_storage_volume(volume, catalog);
  if (tier == nullptr) return nullptr;
  if (tier->shared_across_nodes() && !tier->has_throughput_mb_per_s()) {
    volume.error("tier", "shared file system \"" + tier->name() +
                             "\" has no throughput_mb_per_s: its throughput, shared by every "
                             "node, must be given in its catalog entry");
  }
  if (!tier->has_iops() && d.layout() == s::FILE_PER_SAMPLE) {
    volume.warning("tier", "\"" + tier->name() +
                               "\" gives no IOPS limit: reads of small files are bound only by "
                               "latency and throughput");
  }
  // The tier's formulas at this capacity must give a rate: base 0 and per_gib 0 crashed `input`
  // (a read that never ended), a tiny volume of a per-GiB tier read once in months.
  const StoragePerformance at =
      volume_performance(*tier, static_cast<const s::StorageVolume&>(volume.message()), nullptr);
  const double mb_per_s = at.throughput_bytes_per_s / 1e6;
  if (std::min(mb_per_s, at.iops) < FieldChecker::kMinRate) {
    volume.error("capacity_gib", "\"" + tier->name() + "\" gives " +
                                     format_significant(mb_per_s, 3) + " MB/s and " +
                                     format_significant(at.iops, 3) + " IOPS at " +
                                     format_number(volume.number("capacity_gib")) +
                                     " GiB: each must be at least " +
                                     format_number(FieldChecker::kMinRate));
  }
  const double dataset_gib =
      static_cast<double>(d.num_samples()) * d.mean_sample_bytes() / kBytesPerGibibyte;
  if (d.has_num_samples() && d.has_mean_sample_bytes() &&
      dataset_gib > volume.number("capacity_gib")) {
    volume.error("capacity_gib", "the dataset (" + format_fixed(dataset_gib, 1) +
                                     " GiB) does not fit in " +
                                     format_number(volume.number("capacity_gib")) + " GiB");
  }
  return tier;
}

// The volumes the configurations read from: the sweep's when it lists any, else the job's.
std::vector<DatasetVolume> check_volumes(const FieldChecker& root, const FieldChecker& dataset,
                                         const Catalog& catalog) {
  const auto& m = static_cast<const s::Scenario&>(root.message());
  const auto& d = static_cast<const s::Dataset&>(dataset.message());
  std::vector<DatasetVolume> volumes;
  if (m.sweep().dataset_storage_size() > 0) {
    const FieldChecker sweep = root.child("sweep");
    for (int i = 0; i < m.sweep().dataset_storage_size(); ++i) {
      volumes.push_back({sweep.child("dataset_storage", i), nullptr});
    }
    // The job's volume, which the axis replaces, is checked all the same: an unknown tier beside
    // the axis loaded unread.
    if (dataset.has("storage")) check_volume(dataset.child("storage"), d, catalog);
  } else if (dataset.require("storage")) {
    volumes.push_back({dataset.child("storage"), nullptr});
  }
  for (DatasetVolume& v : volumes) v.tier = check_volume(v.volume, d, catalog);
  return volumes;
}

// The most batches a GPU's loader keeps ahead (workers_per_gpu x prefetch_factor): each is
// simulated through warm-up and measurement, 3 x 1000 taking 12 s (2e9 workers exhausted memory,
// a prefetch factor of 2e9 hung), and PyTorch's defaults keep a few dozen.
constexpr int64_t kMaxBatchesAhead = 1024;

// Workers per GPU (the job's, or a sweep's element `index`) times the prefetch factor within
// kMaxBatchesAhead.
void check_batches_ahead(const FieldChecker& owner, const char* field, int index, int workers,
                         int prefetch) {
  const int64_t ahead = int64_t{workers} * prefetch;
  if (workers < 1 || prefetch < 1 || ahead <= kMaxBatchesAhead) return;
  owner.error(field,
              std::to_string(workers) + " workers x prefetch_factor " + std::to_string(prefetch) +
                  " keep " + std::to_string(ahead) + " batches ahead per GPU, more than the " +
                  std::to_string(kMaxBatchesAhead) + " the input pipeline simulates",
              index);
}

// `swept`: the sweep lists the workers (dataloader_workers_per_gpu), which replace the job's.
void check_dataloader(const FieldChecker& dataloader, bool swept) {
  const auto& m = static_cast<const s::DataLoader&>(dataloader.message());
  if (!swept) dataloader.require("workers_per_gpu");
  if (dataloader.has("workers_per_gpu") && m.workers_per_gpu() < 1) {
    dataloader.error("workers_per_gpu",
                     "must be >= 1, got " + std::to_string(m.workers_per_gpu()) +
                         " (0 loads in the training process between steps, which is not "
                         "modelled)");
  }
  if (dataloader.has("prefetch_factor") && m.prefetch_factor() < 1) {
    dataloader.error("prefetch_factor", "must be >= 1, got " + std::to_string(m.prefetch_factor()) +
                                            " (batches each worker loads ahead)");
  }
  dataloader.at_least("cpu_limit_vcpus", 1);
  if (!swept) {
    const bool prefetch_larger =
        m.has_prefetch_factor() && m.prefetch_factor() > m.workers_per_gpu();
    check_batches_ahead(dataloader, prefetch_larger ? "prefetch_factor" : "workers_per_gpu", -1,
                        m.workers_per_gpu(), prefetch_factor(m));
  }
}

// What each candidate instance needs: a dataloading cost for its CPU, enough vCPUs, host RAM.
// Problems of the instance itself are reported where it is named (cluster or sweep). `workers`:
// the job's workers per GPU, 0 when swept (each sweep row shows its own CPU contention).
void check_instance(const FieldChecker& dataloader, const FieldChecker& owner, int index,
                    const s::InstanceType& instance, const Catalog& catalog,
                    const std::vector<DatasetVolume>& volumes, int workers) {
  const auto& m = static_cast<const s::DataLoader&>(dataloader.message());
  const std::string name = "instance " + instance.name();
  // A cloud disk or file system is reachable only from its own provider's instances.
  for (const auto& [volume, tier] : volumes) {
    if (tier != nullptr && tier->provider() != instance.provider()) {
      volume.error("tier", "\"" + tier->name() + "\" belongs to " +
                               s::Provider_Name(tier->provider()) + "; " + name + " (" +
                               s::Provider_Name(instance.provider()) + ") cannot mount it");
    }
  }
  if (find_dataloading_cost(catalog, instance) == nullptr) {
    owner.error("instance",
                "no dataloading_cost entry matches the CPU \"" + instance.cpu().model() + "\" of " +
                    instance.name() + ", which the input pipeline needs",
                index);
  }
  const int vcpus = m.has_cpu_limit_vcpus() ? m.cpu_limit_vcpus() : instance.vcpus();
  if (vcpus < 1) {
    // Reported at the field (at least 1): "0 vCPUs leave none for workers" repeated it.
  } else if (m.has_cpu_limit_vcpus() && vcpus > instance.vcpus()) {
    dataloader.error("cpu_limit_vcpus",
                     "exceeds the " + std::to_string(instance.vcpus()) + " vCPUs of " + name);
  } else if (vcpus <= instance.gpu_count()) {
    dataloader.error(m.has_cpu_limit_vcpus() ? "cpu_limit_vcpus" : "workers_per_gpu",
                     name + ": " + std::to_string(vcpus) +
                         " vCPUs leave none for workers beside its " +
                         std::to_string(instance.gpu_count()) + " training processes");
  } else if (workers >= 1 && (workers + 1) * instance.gpu_count() > vcpus) {
    dataloader.warning("workers_per_gpu",
                       name + ": " + std::to_string(workers * instance.gpu_count()) +
                           " workers and " + std::to_string(instance.gpu_count()) +
                           " training processes share " + std::to_string(vcpus) + " vCPUs");
  }
  const double gpu_gib = instance.gpu_count() * (instance.has_gpu_memory_gib()
                                                     ? instance.gpu_memory_gib()
                                                     : catalog.gpu_of(instance).memory_gib());
  if (instance.host_memory_gib() < kHostToGpuMemoryRule * gpu_gib) {
    owner.warning("instance",
                  name + " has " + format_number(instance.host_memory_gib()) +
                      " GiB of host memory, below 1.5x its GPUs' " + format_number(gpu_gib) +
                      " GiB: little is left to cache the dataset and stage batches",
                  index);
  }
}

void check_instances(const FieldChecker& root, const FieldChecker& dataloader,
                     const Catalog& catalog, const std::vector<DatasetVolume>& volumes,
                     int workers) {
  const auto& m = static_cast<const s::Scenario&>(root.message());
  const bool swept = m.has_sweep() && m.sweep().instance_size() > 0;
  if (!swept && !m.cluster().has_instance()) return;
  const FieldChecker owner = swept ? root.child("sweep") : root.child("cluster");
  const int count = swept ? m.sweep().instance_size() : 1;
  for (int i = 0; i < count; ++i) {
    const std::string& name = swept ? m.sweep().instance(i) : m.cluster().instance();
    const CatalogEntry<s::InstanceType>* entry = catalog.instances().find(name);
    if (entry == nullptr) continue;
    check_instance(dataloader, owner, swept ? i : -1, *entry->value, catalog, volumes, workers);
  }
}

}  // namespace

void check_input(const FieldChecker& root, const Catalog& catalog, const LoadedScenario& loaded) {
  const s::Scenario& m = loaded.scenario();
  const bool swept_workers = m.sweep().dataloader_workers_per_gpu_size() > 0;
  if (!m.job().has_dataloader()) {
    for (const char* axis : {"dataset_storage", "dataloader_workers_per_gpu"}) {
      if (m.has_sweep() && root.child("sweep").has(axis)) {
        root.child("sweep").error(axis, "sweeps the input pipeline, which needs job.dataloader");
      }
    }
    return;
  }
  if (swept_workers) {
    const FieldChecker sweep = root.child("sweep");
    sweep.at_least("dataloader_workers_per_gpu", 1);
    for (int i = 0; i < m.sweep().dataloader_workers_per_gpu_size(); ++i) {
      check_batches_ahead(sweep, "dataloader_workers_per_gpu", i,
                          m.sweep().dataloader_workers_per_gpu(i),
                          prefetch_factor(m.job().dataloader()));
    }
  }
  const FieldChecker job = root.child("job");
  if (!job.require("dataset")) return;
  const FieldChecker dataset = job.child("dataset");
  dataset.require("num_samples");
  dataset.require_positive("mean_sample_bytes");
  dataset.require_enum("layout");
  check_format(dataset, loaded.model);
  const std::vector<DatasetVolume> volumes = check_volumes(root, dataset, catalog);
  const FieldChecker dataloader = job.child("dataloader");
  check_dataloader(dataloader, swept_workers);
  check_instances(root, dataloader, catalog, volumes,
                  swept_workers ? 0 : m.job().dataloader().workers_per_gpu());
}

}  // namespace clustersim
