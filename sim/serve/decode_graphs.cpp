// Captured decode CUDA-graph batch sizes and padding to them.
#include "sim/serve/decode_graphs.h"

#include <algorithm>

#include "sim/util/check.h"

namespace clustersim {

std::vector<int32_t> captured_decode_batches(const schema::DecodeGraphs& graphs, int32_t max_batch,
                                             int64_t max_tokens) {
  CLUSTERSIM_CHECK(max_batch >= 1 && max_tokens >= 1, "a scheduler without room for a sequence");
  const auto largest = static_cast<int32_t>(std::min<int64_t>(max_batch, max_tokens));
  std::vector<int32_t> sizes;
  for (const int32_t b : graphs.batch_sizes()) {
    if (b <= largest) sizes.push_back(b);
  }
  if (graphs.has_doubling_from()) {
    for (int64_t p = graphs.doubling_from(); 2 * p <= largest; p *= 2) {
      sizes.push_back(static_cast<int32_t>(p));
    }
  }
  if (sizes.empty() || sizes.back() != largest) sizes.push_back(largest);
  return sizes;
}

int32_t padded_decode_batch(const std::vector<int32_t>& captured, int32_t batch) {
  const auto it = std::lower_bound(captured.begin(), captured.end(), batch);
  return it == captured.end() ? batch : *it;
}

}  // namespace clustersim
