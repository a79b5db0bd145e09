// From a scenario configuration to the node's input pipeline, and from its runs to the step.
#include "sim/input/input_model.h"

#include <algorithm>
#include <cmath>

#include "sim/hw/storage_model.h"
#include "sim/input/dataloading_cost.h"
#include "sim/util/units.h"

namespace clustersim {
namespace {

namespace s = schema;

constexpr double kFloat32Bytes = 4;  // torchvision's ToTensor + Normalize output
constexpr double kTokenIdBytes = 8;  // int64 token ids (PyTorch's default index type)
constexpr double kPcieBytesPerGb = 1e9;

// Bytes of the tensor one sample becomes on the GPU.
double tensor_bytes(const s::Model& model, const s::TrainingJob& job) {
  if (model.has_cnn()) {
    const s::Cnn& cnn = model.cnn();
    return kFloat32Bytes * cnn.input_channels() * cnn.input_height() * cnn.input_width();
  }
  return kTokenIdBytes * job.sequence_length();
}

// Passes over the dataset the job's budget makes.
double job_epochs(const s::TrainingJob& job) {
  const double samples = static_cast<double>(job.dataset().num_samples());
  switch (job.budget_case()) {
    case s::TrainingJob::kEpochs:
      return job.epochs();
    case s::TrainingJob::kSteps:
      return static_cast<double>(job.steps()) * job.global_batch_size() / samples;
    case s::TrainingJob::kTokenBudget:
      return job.token_budget() / (samples * job.sequence_length());
    default:
      return 1;
  }
}

}  // namespace

double total_gpu_memory_gib(const Catalog& catalog, const s::InstanceType& instance) {
  return instance.gpu_count() * (instance.has_gpu_memory_gib()
                                     ? instance.gpu_memory_gib()
                                     : catalog.gpu_of(instance).memory_gib());
}

int prefetch_factor(const s::DataLoader& loader) {
  return loader.has_prefetch_factor() ? loader.prefetch_factor() : 2;
}

InputSetup input_setup(const Catalog& catalog, const LoadedScenario& scenario,
                       const Configuration& c, double gpu_step_s) {
  const s::TrainingJob& job = scenario.scenario().job();
  const s::Dataset& dataset = job.dataset();
  const s::DataLoader& loader = job.dataloader();
  const s::InstanceType& instance = *c.instance;
  const s::Gpu& gpu = catalog.gpu_of(instance);
  const s::DataloadingCost& cost = *find_dataloading_cost(catalog, instance);
  const s::Parallelism& p = c.parallelism;

  InputSetup setup;
  setup.tensor_bytes_per_sample = tensor_bytes(*scenario.model, job);
  setup.epochs = job_epochs(job);
  setup.node_vcpus = loader.has_cpu_limit_vcpus() ? loader.cpu_limit_vcpus() : instance.vcpus();
  InputPipelineSpec& spec = setup.spec;
  // One loader per data-parallel rank on the node; model-parallel ranks share their rank's data.
  spec.loaders = std::max(1, c.gpus_per_node / (p.tensor_parallel() * p.pipeline_parallel()));
  spec.batch_samples = job.global_batch_size() / p.data_parallel();
  spec.workers_per_loader = c.dataloader_workers_per_gpu;
  spec.prefetch_factor = prefetch_factor(loader);
  // Each training (main) process keeps one vCPU busy launching kernels and pinning batches.
  spec.worker_vcpus = std::max(1, setup.node_vcpus - spec.loaders);
  const SampleCpuCost cpu = sample_cpu_cost(cost, instance, dataset, setup.tensor_bytes_per_sample);
  spec.cpu_s_per_sample = cpu.worker_s;
  spec.cpu_stage = cpu.stage;
  const double batch_bytes = spec.batch_samples * setup.tensor_bytes_per_sample;
  spec.pin_s_per_batch = host_copy_s(cost, instance, batch_bytes);
  spec.copy_s_per_batch =
      gpu.has_pcie() ? batch_bytes / (gpu.pcie().per_direction_gb_per_s() * kPcieBytesPerGb) : 0;
  spec.gpu_step_s = gpu_step_s;

  const double bytes = dataset.mean_sample_bytes();
  spec.read_bytes_per_sample = bytes;
  const s::StorageVolume& volume = *c.dataset_storage;
  const s::StorageTier& tier = *catalog.storage().find(volume.tier())->value;
  StoragePerformance storage = volume_performance(tier, volume, &instance);
  if (storage.shared_across_nodes) {  // every node reads its share through the same file system
    storage.throughput_bytes_per_s /= c.nodes;
    storage.iops /= c.nodes;
  }
  spec.storage_bytes_per_s = storage.throughput_bytes_per_s;
  spec.storage_iops = storage.iops;
  if (dataset.layout() == s::PACKED_SHARDS) {
    // Sequential streaming: readahead keeps requests in flight, hiding their latency.
    spec.read_requests_per_sample = bytes / kReadRequestBytes;
    spec.read_latency_s = 0;
  } else {
    spec.read_requests_per_sample = std::max(1.0, std::ceil(bytes / kReadRequestBytes));
    spec.read_latency_s = storage.latency_s;
  }

  // Page cache: host memory beyond the GPUs' total, which the 1.5-2x rule of thumb of cloud
  // guides leaves for staging; with shuffling every node reads all of the dataset over epochs.
  setup.page_cache_bytes =
      std::max(0.0, (instance.host_memory_gib() - total_gpu_memory_gib(catalog, instance)) *
                        kBytesPerGibibyte);
  setup.dataset_bytes = static_cast<double>(dataset.num_samples()) * bytes;
  const bool shuffled = !dataset.has_shuffle() || dataset.shuffle();
  const double node_bytes = shuffled ? setup.dataset_bytes : setup.dataset_bytes / c.nodes;
  setup.cached_after_first_epoch = node_bytes <= setup.page_cache_bytes;
  return setup;
}

InputEstimate estimate_input(const InputSetup& setup) {
  InputEstimate e;
  e.setup = setup;
  e.from_storage = simulate_input_pipeline(setup.spec);
  e.data_stall_s = e.from_storage.stall_per_step_s;
  e.limiting = e.from_storage.limiting;
  if (setup.cached_after_first_epoch && setup.epochs > 1) {
    InputPipelineSpec cached = setup.spec;
    cached.from_storage = false;
    e.cached = simulate_input_pipeline(cached);
    const double first = 1 / setup.epochs;
    e.data_stall_s =
        first * e.from_storage.stall_per_step_s + (1 - first) * e.cached->stall_per_step_s;
    if (e.cached->stall_per_step_s > 0 &&
        (1 - first) * e.cached->stall_per_step_s >= first * e.from_storage.stall_per_step_s) {
      e.limiting = e.cached->limiting;
    }
  }
  return e;
}

void add_data_stall(const InputEstimate& estimate, StepResult* step, Timeline* timeline) {
  const double stall = estimate.data_stall_s;
  if (stall <= 0) return;
  if (timeline) {
    timeline->begin_with_wait(
        "input pipeline (every node alike)", "data loader",
        "data stall: waiting for the batches" +
            (estimate.limiting.empty() ? "" : " (" + estimate.limiting + " limits)"),
        Picoseconds::from_seconds(stall));
  }
  const double scale = step->step_s / (step->step_s + stall);
  step->step_s += stall;
  step->data_stall_s = stall;
  step->tokens_per_s *= scale;
  step->samples_per_s *= scale;
  step->mfu *= scale;
  step->hfu *= scale;
  if (stall >= 0.01 * step->step_s && !estimate.limiting.empty())
    step->limiting = estimate.limiting;
}

}  // namespace clustersim
