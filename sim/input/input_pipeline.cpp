// The node's input pipeline as events: each worker reads and processes the samples of its batch
// one after another (a map-style dataset), then offers the batch to its loader's prefetch queue;
// each GPU takes its next batch as soon as the previous one is on the device (a side-stream
// prefetcher), and all GPUs start a step together (data-parallel steps are synchronous).
#include "sim/input/input_pipeline.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "sim/engine/bounded_queue.h"
#include "sim/engine/counted_resource.h"
#include "sim/engine/serial_resource.h"
#include "sim/engine/simulation.h"
#include "sim/util/check.h"

namespace clustersim {
namespace {

// A utilisation within this of 1 counts as saturated when naming the limiting stage.
constexpr double kSaturated = 0.97;

// The simulated node: resources, per-loader state and the measurement window.
class NodePipeline {
 public:
  explicit NodePipeline(const InputPipelineSpec& spec)
      : spec_(spec), storage_(&sim_), cpus_(&sim_, static_cast<uint64_t>(spec.worker_vcpus)) {
    const double transfer = std::isinf(spec.storage_bytes_per_s)
                                ? 0
                                : spec.read_bytes_per_sample / spec.storage_bytes_per_s;
    const double requests =
        std::isinf(spec.storage_iops) ? 0 : spec.read_requests_per_sample / spec.storage_iops;
    read_service_ = Picoseconds::from_seconds(std::max(transfer, requests));
    iops_bound_ = requests > transfer;
    read_latency_ = Picoseconds::from_seconds(spec.read_latency_s * spec.read_requests_per_sample);
    cpu_time_ = Picoseconds::from_seconds(spec.cpu_s_per_sample);
    for (int l = 0; l < spec.loaders; ++l) {
      loaders_.push_back(std::make_unique<Loader>(&sim_, spec));
    }
    const int workers = spec.workers_per_loader;
    warmup_steps_ = spec.prefetch_factor * workers + workers + 4;
    measured_steps_ = workers * std::max(2, (24 + workers - 1) / workers);
  }

  InputPipelineRun run() {
    for (int l = 0; l < spec_.loaders; ++l) {
      for (int w = 0; w < spec_.workers_per_loader; ++w) start_batch(l);
      fetch(l);
    }
    sim_.run();
    CLUSTERSIM_CHECK(steps_done_ == total_steps(), "the input pipeline deadlocked");
    InputPipelineRun r;
    r.simulated_steps = total_steps();
    const double window = (end_.at - start_.at).seconds();
    r.step_period_s = window / measured_steps_;
    r.stall_per_step_s = std::max(0.0, r.step_period_s - spec_.gpu_step_s);
    r.storage_utilisation = (end_.storage_busy - start_.storage_busy).seconds() / window;
    r.cpu_utilisation = (end_.cpu_busy - start_.cpu_busy).seconds() / (window * spec_.worker_vcpus);
    const double worker_time = window * spec_.workers_per_loader * spec_.loaders;
    r.worker_utilisation = 1 - (end_.blocked - start_.blocked).seconds() / worker_time;
    r.pin_utilisation = (end_.pin_busy - start_.pin_busy).seconds() / (window * spec_.loaders);
    r.pcie_utilisation = (end_.copy_busy - start_.copy_busy).seconds() / (window * spec_.loaders);
    r.storage_iops_bound = iops_bound_;
    // The data stall is a rounding error of the step (a picosecond per step) when the loader
    // keeps up.
    if (r.stall_per_step_s > 1e-9 * spec_.gpu_step_s) r.limiting = limiting_stage(r);
    return r;
  }

 private:
  struct Loader {
    Loader(Simulation* sim, const InputPipelineSpec& spec)
        : queue(sim, static_cast<uint64_t>(spec.prefetch_factor * spec.workers_per_loader)),
          pin(sim),
          copy(sim) {}
    BoundedQueue queue;
    SerialResource pin;   // the main process's pin-memory thread
    SerialResource copy;  // the GPU's host-to-device copy engine
  };
  struct Snapshot {
    Picoseconds at, storage_busy, cpu_busy, blocked, pin_busy, copy_busy;
  };

  int total_steps() const { return warmup_steps_ + measured_steps_; }

  // One worker produces one batch of `loader`, then the next, until the steps are done.
  void start_batch(int loader) {
    if (steps_done_ >= total_steps()) return;
    next_sample(loader, spec_.batch_samples);
  }
  void next_sample(int loader, int left) {
    if (left == 0) {
      loaders_[loader]->queue.put(0, [this, loader] { start_batch(loader); });
      return;
    }
    auto process = [this, loader, left] {
      cpus_.acquire([this, loader, left] {
        cpu_busy_ += cpu_time_;
        sim_.call_after(cpu_time_, [this, loader, left] {
          cpus_.release();
          next_sample(loader, left - 1);
        });
      });
    };
    if (!spec_.from_storage) {
      process();
      return;
    }
    storage_.submit(read_service_, [this, process] {
      if (read_latency_ == Picoseconds()) {
        process();
      } else {
        sim_.call_after(read_latency_, process);
      }
    });
  }

  // The GPU of `loader` takes its next batch: pinned copy, then PCIe copy, then it waits.
  void fetch(int loader) {
    Loader& l = *loaders_[loader];
    l.queue.get([this, loader](uint64_t) {
      Loader& l = *loaders_[loader];
      l.pin.submit(Picoseconds::from_seconds(spec_.pin_s_per_batch), [this, loader] {
        Loader& l = *loaders_[loader];
        l.copy.submit(Picoseconds::from_seconds(spec_.copy_s_per_batch), [this] {
          ++on_device_;
          try_step();
        });
      });
    });
  }

  void try_step() {
    if (gpu_busy_ || on_device_ < spec_.loaders || steps_done_ >= total_steps()) return;
    gpu_busy_ = true;
    on_device_ = 0;
    for (int l = 0; l < spec_.loaders; ++l) {
      if (steps_done_ + 1 < total_steps()) fetch(l);
    }
    sim_.call_after(Picoseconds::from_seconds(spec_.gpu_step_s), [this] {
      gpu_busy_ = false;
      ++steps_done_;
      if (steps_done_ == warmup_steps_) start_ = snapshot();
      if (steps_done_ == total_steps()) end_ = snapshot();
      try_step();
    });
  }

  Snapshot snapshot() const {
    Snapshot s{sim_.now(),    storage_.busy_time(), cpu_busy_,
               Picoseconds(), Picoseconds(),        Picoseconds()};
    for (const auto& l : loaders_) {
      s.blocked += l->queue.producer_block_time();
      s.pin_busy += l->pin.busy_time();
      s.copy_busy += l->copy.busy_time();
    }
    return s;
  }

  std::string limiting_stage(const InputPipelineRun& r) const {
    const struct {
      double utilisation;
      std::string name;
    } stages[] = {
        {spec_.from_storage ? r.storage_utilisation : 0,
         iops_bound_ ? "storage IOPS" : "storage throughput"},
        {r.cpu_utilisation, spec_.cpu_stage},
        {r.pin_utilisation, "pinned-memory copy"},
        {r.pcie_utilisation, "PCIe host-to-device"},
    };
    const auto* busiest = std::max_element(
        std::begin(stages), std::end(stages),
        [](const auto& a, const auto& b) { return a.utilisation < b.utilisation; });
    // No shared stage saturated: each worker is busy waiting on its own reads and work.
    if (busiest->utilisation < kSaturated) return "dataloader workers";
    return busiest->name;
  }

  const InputPipelineSpec spec_;
  Simulation sim_;
  SerialResource storage_;
  CountedResource cpus_;
  std::vector<std::unique_ptr<Loader>> loaders_;
  Picoseconds read_service_, read_latency_, cpu_time_, cpu_busy_;
  bool iops_bound_ = false;
  int warmup_steps_ = 0, measured_steps_ = 0, steps_done_ = 0, on_device_ = 0;
  bool gpu_busy_ = false;
  Snapshot start_, end_;
};

}  // namespace

InputPipelineRun simulate_input_pipeline(const InputPipelineSpec& spec) {
  CLUSTERSIM_CHECK(spec.loaders >= 1 && spec.workers_per_loader >= 1 && spec.prefetch_factor >= 1,
                   "an input pipeline needs loaders, workers and a prefetch queue");
  CLUSTERSIM_CHECK(spec.worker_vcpus >= 1 && spec.batch_samples >= 1 && spec.gpu_step_s > 0,
                   "an input pipeline needs vCPUs, samples and a step");
  return NodePipeline(spec).run();
}

}  // namespace clustersim
