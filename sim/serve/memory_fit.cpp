// GPU memory of a serving replica.
#include "sim/serve/memory_fit.h"

#include <algorithm>
#include <cmath>

#include "sim/util/units.h"

namespace clustersim {

double runtime_bytes(const schema::ServingRuntime& runtime, const schema::ServingGpuFit& fit,
                     int tensor_parallel) {
  const double base = fit.has_memory_overhead_gib() ? fit.memory_overhead_gib()
                                                    : runtime.memory_overhead_gib();
  const double per_rank = fit.has_tensor_parallel_memory_gib() ? fit.tensor_parallel_memory_gib()
                                                               : runtime.tensor_parallel_memory_gib();
  return (base + per_rank * (tensor_parallel - 1)) * kBytesPerGibibyte;
}

ServingMemory serving_memory(const InferenceShape& shape, double runtime_bytes,
                             double capacity_bytes, int64_t iteration_tokens) {
  ServingMemory m;
  m.capacity_bytes = capacity_bytes;
  m.weight_bytes = shape.weight_bytes;
  m.runtime_bytes = runtime_bytes;
  m.activation_bytes = static_cast<double>(iteration_tokens) * shape.activation_bytes_per_token;
  m.kv_bytes_per_token = shape.kv_bytes_per_token;
  return m;
}

int64_t kv_cache_blocks(const ServingMemory& memory, double fraction, int block_tokens) {
  const double pool = memory.free_bytes() * fraction;
  if (pool <= 0) return 0;
  return static_cast<int64_t>(std::floor(pool / (memory.kv_bytes_per_token * block_tokens)));
}

double static_batch_peak_bytes(const InferenceShape& shape, double runtime_bytes, int64_t batch,
                               int64_t input, int64_t output, int beams) {
  const ServingMemory m = serving_memory(shape, runtime_bytes, 0, batch * input);
  // A layer attending within a window holds that window's tokens at most (the cache is cyclic).
  const int64_t context = input + output;
  const int64_t windowed_context =
      shape.windowed_layers > 0 ? std::min<int64_t>(context, shape.window_tokens) : context;
  const double layer_tokens =
      static_cast<double>(context) * (shape.layers - shape.windowed_layers) +
      static_cast<double>(windowed_context) * shape.windowed_layers;
  return m.used_bytes() + static_cast<double>(batch * beams) * layer_tokens / shape.layers *
                              m.kv_bytes_per_token;
}

}  // namespace clustersim
