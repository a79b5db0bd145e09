// The device memory of one GPU a program can allocate.
#include "sim/hw/device_memory.h"

#include <algorithm>

#include "sim/util/units.h"

namespace clustersim {

double allocatable_gpu_bytes(const schema::InstanceType& instance, const schema::Gpu& gpu) {
  const double label_gib =
      instance.has_gpu_memory_gib() ? instance.gpu_memory_gib() : gpu.memory_gib();
  const double gib = gpu.has_cuda_total_memory_gib()
                         ? std::min(label_gib, gpu.cuda_total_memory_gib())
                         : label_gib;
  return gib * kBytesPerGibibyte;
}

}  // namespace clustersim
