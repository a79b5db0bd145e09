// The input pipeline of one node, simulated on the discrete-event engine: storage reads -> a pool
// of CPU worker processes -> one bounded prefetch queue per data loader (prefetch factor x
// workers batches) -> the main process's pinned-memory copy -> the host-to-device copy over PCIe
// -> the GPUs' synchronous step. Reports the steady-state data stall per step (the time the GPUs
// wait for their batches) and which stage limits. Knows nothing of catalogs: plain numbers in.
#pragma once

#include <string>

namespace clustersim {

struct InputPipelineSpec {
  int loaders = 1;              // data loaders on the node (one per data-parallel GPU)
  int workers_per_loader = 1;   // >= 1
  int prefetch_factor = 2;      // >= 1
  int worker_vcpus = 1;         // vCPUs all workers of the node share (>= 1)
  int batch_samples = 1;        // samples per loader per step (>= 1)
  double cpu_s_per_sample = 0;  // one worker on one vCPU: decode, augment, tokenize, collate
  bool from_storage = true;     // false: every sample is in the page cache
  double read_requests_per_sample = 1;  // storage requests one sample costs
  double read_bytes_per_sample = 0;
  double storage_bytes_per_s = 0;        // this node's share; +inf: no throughput limit
  double storage_iops = 0;               // this node's share; +inf: no IOPS limit
  double read_latency_s = 0;             // per request, in the reading worker's path
  double pin_s_per_batch = 0;            // main process: copy of a batch into pinned memory
  double copy_s_per_batch = 0;           // host-to-device copy of a batch over the GPU's PCIe link
  double gpu_step_s = 0;                 // the simulated training step without input (> 0)
  std::string cpu_stage = "CPU decode";  // how the workers' CPU stage is reported
};

// Steady state after the warm-up, measured over whole cycles of the workers.
struct InputPipelineRun {
  double step_period_s = 0;     // time between step ends: gpu_step_s + stall_per_step_s
  double stall_per_step_s = 0;  // time the GPUs waited for their batches, per step
  // Busy fraction of each stage over the measured steps (0..1).
  double storage_utilisation = 0;
  double cpu_utilisation = 0;     // of worker_vcpus
  double worker_utilisation = 0;  // workers not blocked on a full prefetch queue
  double pin_utilisation = 0;
  double pcie_utilisation = 0;
  bool storage_iops_bound = false;  // the IOPS term of a read outweighs its transfer time
  // The stage that limits the loader when it stalls the GPU ("" when it does not): "storage
  // IOPS", "storage throughput", cpu_stage, "dataloader workers", "pinned-memory copy",
  // "PCIe host-to-device".
  std::string limiting;
  int simulated_steps = 0;
};

// Requires: the constraints above.
InputPipelineRun simulate_input_pipeline(const InputPipelineSpec& spec);

}  // namespace clustersim
