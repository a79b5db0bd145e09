// The input pipeline of one configuration of a scenario: builds the node's pipeline (input_
// pipeline.h) from the job's dataset and data loader, the instance's CPU, memory and PCIe, the
// dataset's storage volume and the simulated GPU step, runs it for a first epoch read from storage
// and, when the dataset fits in the spare host memory, for later epochs read from the page cache,
// and folds the resulting data stall into the step.
#pragma once

#include <optional>
#include <string>

#include "sim/engine/timeline.h"
#include "sim/input/input_pipeline.h"
#include "sim/io/catalog.h"
#include "sim/io/scenario_loader.h"
#include "sim/parallel/step_model.h"
#include "sim/sweep/configuration_space.h"

namespace clustersim {

// Linux's default readahead window (the block layer's read_ahead_kb = 128): a file read in full
// costs one request per window; shards stream sequentially in requests of this size.
inline constexpr double kReadRequestBytes = 128 * 1024;
// Host memory below this multiple of the GPUs' total is flagged: the rule of thumb of cloud
// guides for staging data into GPU memory is 1.5-2x (the lower end is used).
inline constexpr double kHostToGpuMemoryRule = 1.5;

// Memory of all GPUs of `instance` in GiB (the provider's figure when the catalog has one).
double total_gpu_memory_gib(const Catalog& catalog, const schema::InstanceType& instance);

// Batches each worker loads ahead: the loader's prefetch_factor, PyTorch's 2 when absent.
int prefetch_factor(const schema::DataLoader& loader);

// What the node's pipeline is built from, kept for the advice of `clustersim input`.
struct InputSetup {
  InputPipelineSpec spec;       // reading from storage
  double dataset_bytes = 0;     // stored bytes of one epoch
  double page_cache_bytes = 0;  // host memory left for the page cache
  bool cached_after_first_epoch = false;
  double epochs = 0;   // passes over the dataset the job makes
  int node_vcpus = 0;  // vCPUs the job may use on a node
  double tensor_bytes_per_sample = 0;
};

struct InputEstimate {
  InputSetup setup;
  InputPipelineRun from_storage;           // an epoch read from storage
  std::optional<InputPipelineRun> cached;  // later epochs from the page cache, when it fits
  double data_stall_s = 0;                 // per step, averaged over the job's epochs
  std::string limiting;                    // the stage behind the larger stall ("" when none)
};

// Requires: the scenario loaded without errors and its job has a dataloader; `gpu_step_s` > 0.
InputSetup input_setup(const Catalog& catalog, const LoadedScenario& scenario,
                       const Configuration& configuration, double gpu_step_s);
InputEstimate estimate_input(const InputSetup& setup);

// Adds the estimate's stall to the step: step time, throughput, MFU/HFU and, when the stall is at
// least 1% of the step, the limiting stage. With `timeline` (the step's, recorded from 0), draws
// the stall where the step waits for its batches, before its first forward: every span later by
// the stall, and the stall from 0 on the track "data loader" of the group "input pipeline (every
// node alike)", named by the stage that limits the loader.
void add_data_stall(const InputEstimate& estimate, StepResult* step, Timeline* timeline = nullptr);

}  // namespace clustersim
