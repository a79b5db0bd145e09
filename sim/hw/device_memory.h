// The device memory of one GPU: its label, and what a program can allocate, the capacity the
// training memory checks (`clustersim memory`, sweeps, the pipeline across pools) compare a need
// against.
#pragma once

#include "sim/io/schema/gpu.pb.h"
#include "sim/io/schema/instance.pb.h"

namespace clustersim {

// Bytes of one of `instance`'s GPUs (`gpu`, its catalog entry) as labelled: the instance's
// gpu_memory_gib where given (the provider's figure), else the GPU's memory_gib. Serving compares
// against it: at the CUDA total three published TensorRT-LLM runs that ran would be refused, the
// predicted need being a few tenths of a GB high (results/memory_peaks.md).
double labelled_gpu_bytes(const schema::InstanceType& instance, const schema::Gpu& gpu);

// What a program can allocate of it: the label capped by the memory the driver exposes to CUDA
// (gpu.cuda_total_memory_gib) where the catalog has it. The providers' figures are labels or
// nvidia-smi totals, both above what CUDA allocates on the chip.
double allocatable_gpu_bytes(const schema::InstanceType& instance, const schema::Gpu& gpu);

}  // namespace clustersim
