// The device memory of one GPU: as labelled, and what a program can allocate.
#include "sim/hw/device_memory.h"

#include <algorithm>

#include "sim/util/units.h"

namespace clustersim {

double labelled_gpu_bytes(const schema::InstanceType& instance, const schema::Gpu& gpu) {
  return (instance.has_gpu_memory_gib() ? instance.gpu_memory_gib() : gpu.memory_gib()) *
         kBytesPerGibibyte;
}

double allocatable_gpu_bytes(const schema::InstanceType& instance, const schema::Gpu& gpu) {
  const double label = labelled_gpu_bytes(instance, gpu);
  if (!gpu.has_cuda_total_memory_gib()) return label;
  return std::min(label, gpu.cuda_total_memory_gib() * kBytesPerGibibyte);
}

}  // namespace clustersim
