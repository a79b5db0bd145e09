// Bytes of PyTorch's context-parallel ring's FP32 sums, step by step.
#include "sim/parallel/torch_ring_sums.h"

#include "sim/util/check.h"

namespace clustersim {

TorchRingSums torch_ring_sums(const AttentionKernel& kernel, double local, int step, int steps) {
  CLUSTERSIM_CHECK(steps >= 2 && step >= 0 && step < steps, "a ring step out of its ring");
  const double row = static_cast<double>(kernel.batch_heads) * kernel.head_dim;
  const double queries = row * static_cast<double>(kernel.queries);
  const double keys = row * static_cast<double>(kernel.keys);
  const bool last = step == steps - 1;
  TorchRingSums b;
  // The step's 16-bit gradients read: its queries' and both key blocks'.
  const double gradients = 2 * (queries + 2 * keys);
  if (step == 0) {
    // The output is step 0's own; the three gradient sums start as its gradients in FP32.
    b.backward_bytes = gradients + 3 * 4 * local;
    return b;
  }
  const double output_read = step == 1 ? 2 : 4;
  const double output_write = last ? 2 : 4;
  b.forward_bytes = (output_read + output_write) * local + 2 * queries;
  const double query_sum_write = last ? 2 : 4;
  b.backward_bytes = 3 * 4 * local + gradients + (2 * 4 + query_sum_write) * local;
  // The key and value gradients back from the last pass, cast: read 4, write 2 each.
  if (last) b.backward_bytes += 2 * 6 * local;
  return b;
}

}  // namespace clustersim
