// What would remove a configuration's data stall: the vCPUs and workers the CPU stage needs, the
// storage throughput and IOPS the GPUs consume and the capacity (of this tier, or of another of
// the provider's tiers) that delivers them, packing small files into shards, and the host-memory
// rule of thumb. Each remedy is re-simulated on the input pipeline, not just computed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/input/input_model.h"

namespace clustersim {

struct StorageOption {
  std::string tier;
  double capacity_gib = 0;  // smallest capacity that holds the dataset and feeds the GPUs
  // Performance bought above the capacity's baseline (StorageVolume.provisioned_*), 0 for none:
  // only where capacity alone cannot feed the GPUs.
  double provisioned_throughput_mb_per_s = 0;
  double provisioned_iops = 0;
};

struct InputAdvice {
  // CPU: vCPUs on a node (workers + one per training process) and workers per GPU that keep up
  // with the GPUs, and the stall per step with them (page-cache epochs when the dataset fits).
  int vcpus_needed = 0;
  int workers_per_gpu_needed = 0;
  double stall_with_cpu_advice_s = 0;
  // The search starts from a lower bound (a step's CPU seconds and one worker's seconds per
  // batch, over the step) and simulates only when that bound's vCPUs and worker processes fit the
  // catalog's largest instance (a simulation's cost grows with its workers). Beyond it nothing is
  // simulated: the two fields above hold the lower bound and the stall is not known.
  bool cpu_beyond_catalog = false;
  int largest_catalog_vcpus = 0;
  std::string largest_catalog_instance;
  // The most workers per GPU the job's own vCPUs run at once (one each, beside the training
  // processes), and the stall per step with them.
  int workers_per_gpu_within_vcpus = 0;
  double stall_within_vcpus_s = 0;
  // Storage: what the GPUs consume from one volume (a shared file system: all nodes together),
  // and how many nodes read it (the nodes for a shared file system, else 1).
  int volume_readers = 1;
  double read_bytes_per_s_needed = 0;
  double read_iops_needed = 0;
  double read_bytes_per_s_available = 0;
  double read_iops_available = 0;
  std::optional<StorageOption> volume_needed;  // of the scenario's tier; absent: it cannot
  bool volume_enough = false;                  // the scenario's volume, as provisioned, does
  // Of the same provider, that can, when the scenario's volume does not; each sized for the nodes
  // that read one volume of it (all of them from a shared file system, one from a block volume).
  std::vector<StorageOption> other_tiers;
  // Packing one-file-per-sample data into shards, re-simulated: absent for shards already, and
  // where packing lowers the stall by less than 1% of the GPU step (no per-file overhead to
  // remove: the stall is the storage's throughput, the CPU or the workers, which packing leaves).
  std::optional<double> stall_with_shards_s;
  // Host memory below 1.5x the GPUs' total (cloud guides' rule of thumb).
  bool host_memory_low = false;
  double host_memory_gib = 0;
  double gpu_memory_gib = 0;
};

// Requires: `estimate` was made for `configuration` of `scenario`.
InputAdvice advise_input(const Catalog& catalog, const LoadedScenario& scenario,
                         const Configuration& configuration, const InputEstimate& estimate);

}  // namespace clustersim
