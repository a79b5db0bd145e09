// The input pipeline's queueing against closed forms: a loader faster than the GPU never stalls
// it after the warm-up, a slower one sets the step to its own time per batch, a capped disk
// delivers exactly its cap, and the limiting stage is the saturated one.
#include "sim/input/input_pipeline.h"

#include <catch2/catch.hpp>
#include <limits>

namespace clustersim {
namespace {

constexpr double kUnlimited = std::numeric_limits<double>::infinity();

// Two loaders of 4 workers, batches of 8 samples at 10 ms of CPU each, from the page cache: each
// worker makes a batch in 80 ms, so each loader delivers one every 80 / 4 = 20 ms.
InputPipelineSpec cpu_pipeline(double gpu_step_s) {
  InputPipelineSpec spec;
  spec.loaders = 2;
  spec.workers_per_loader = 4;
  spec.prefetch_factor = 2;
  spec.worker_vcpus = 8;
  spec.batch_samples = 8;
  spec.cpu_s_per_sample = 0.010;
  spec.from_storage = false;
  spec.gpu_step_s = gpu_step_s;
  return spec;
}
constexpr double kLoaderBatchS = 0.020;

TEST_CASE("a loader faster than the GPU leaves no stall after the warm-up") {
  const InputPipelineRun run = simulate_input_pipeline(cpu_pipeline(1.5 * kLoaderBatchS));
  CHECK(run.stall_per_step_s == 0);
  CHECK(run.step_period_s == Approx(1.5 * kLoaderBatchS).epsilon(1e-9));
  CHECK(run.limiting.empty());
  CHECK(run.cpu_utilisation == Approx(1 / 1.5).epsilon(1e-3));
}

TEST_CASE("a loader slower by r sets the step to its time per batch (within 1%)") {
  for (const double r : {1.3, 2.0, 5.0}) {
    const InputPipelineRun run = simulate_input_pipeline(cpu_pipeline(kLoaderBatchS / r));
    INFO("r = " << r);
    CHECK(run.step_period_s == Approx(kLoaderBatchS).epsilon(0.01));
    CHECK(run.stall_per_step_s == Approx(kLoaderBatchS * (1 - 1 / r)).epsilon(0.01));
    CHECK(run.limiting == "CPU decode");  // 8 workers on 8 vCPUs: the CPUs are saturated
  }
}

TEST_CASE("workers fewer than the vCPUs limit as 'dataloader workers'") {
  InputPipelineSpec spec = cpu_pipeline(kLoaderBatchS / 2);
  spec.worker_vcpus = 32;
  const InputPipelineRun run = simulate_input_pipeline(spec);
  CHECK(run.step_period_s == Approx(kLoaderBatchS).epsilon(0.01));
  CHECK(run.cpu_utilisation == Approx(0.25).epsilon(0.01));
  CHECK(run.limiting == "dataloader workers");
}

TEST_CASE("vCPUs shared by more workers than they can run slow every worker down") {
  InputPipelineSpec spec = cpu_pipeline(kLoaderBatchS / 4);
  spec.worker_vcpus = 4;  // 8 workers on 4 vCPUs: half the loader's rate
  const InputPipelineRun run = simulate_input_pipeline(spec);
  CHECK(run.step_period_s == Approx(2 * kLoaderBatchS).epsilon(0.01));
  CHECK(run.limiting == "CPU decode");
}

// Reads of `sample_bytes` from a volume of `bytes_per_s` and `iops`, with CPU work negligible.
InputPipelineSpec storage_pipeline(double sample_bytes, double requests, double bytes_per_s,
                                   double iops) {
  InputPipelineSpec spec = cpu_pipeline(1e-3);
  spec.cpu_s_per_sample = 1e-6;
  spec.from_storage = true;
  spec.read_bytes_per_sample = sample_bytes;
  spec.read_requests_per_sample = requests;
  spec.storage_bytes_per_s = bytes_per_s;
  spec.storage_iops = iops;
  spec.read_latency_s = 0;
  return spec;
}

double samples_per_s(const InputPipelineSpec& spec, const InputPipelineRun& run) {
  return spec.loaders * spec.batch_samples / run.step_period_s;
}

TEST_CASE("a throughput-capped disk delivers exactly its cap") {
  const InputPipelineSpec spec = storage_pipeline(1e6, 1e6 / 131072, 200e6, kUnlimited);
  const InputPipelineRun run = simulate_input_pipeline(spec);
  CHECK(samples_per_s(spec, run) * 1e6 == Approx(200e6).epsilon(1e-6));
  CHECK(run.storage_utilisation == Approx(1).epsilon(1e-6));
  CHECK(run.limiting == "storage throughput");
}

TEST_CASE("small files on a disk with few IOPS are bound by its IOPS") {
  const InputPipelineSpec spec = storage_pipeline(10e3, 1, 1e9, 2000);
  const InputPipelineRun run = simulate_input_pipeline(spec);
  CHECK(samples_per_s(spec, run) == Approx(2000).epsilon(1e-6));
  CHECK(run.storage_iops_bound);
  CHECK(run.limiting == "storage IOPS");
}

TEST_CASE("read latency is paid by each worker, so few workers stall on a fast disk") {
  // 1 ms per read and 10 ms of CPU: a worker makes a batch in 8 x 11 ms = 88 ms, 22 ms per batch.
  InputPipelineSpec spec = storage_pipeline(10e3, 1, kUnlimited, kUnlimited);
  spec.cpu_s_per_sample = 0.010;
  spec.read_latency_s = 0.001;
  spec.worker_vcpus = 16;
  spec.gpu_step_s = 0.010;
  const InputPipelineRun run = simulate_input_pipeline(spec);
  CHECK(run.step_period_s == Approx(0.022).epsilon(0.01));
  CHECK(run.limiting == "dataloader workers");
}

TEST_CASE("a slow host-to-device copy limits as PCIe") {
  InputPipelineSpec spec = cpu_pipeline(0.005);
  spec.copy_s_per_batch = 0.030;
  const InputPipelineRun run = simulate_input_pipeline(spec);
  CHECK(run.step_period_s == Approx(0.030).epsilon(1e-6));
  CHECK(run.limiting == "PCIe host-to-device");
}

TEST_CASE("the pipeline simulation is deterministic") {
  InputPipelineSpec spec = storage_pipeline(110e3, 1, 300e6, 5000);
  spec.cpu_s_per_sample = 0.004;
  spec.read_latency_s = 2e-4;
  const InputPipelineRun a = simulate_input_pipeline(spec);
  const InputPipelineRun b = simulate_input_pipeline(spec);
  CHECK(a.step_period_s == b.step_period_s);
  CHECK(a.stall_per_step_s == b.stall_per_step_s);
  CHECK(a.limiting == b.limiting);
}

}  // namespace
}  // namespace clustersim
