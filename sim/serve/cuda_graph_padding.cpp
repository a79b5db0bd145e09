// CUDA graphs with padding: the graph a decode-only batch replays and its dummy sequences.
#include "sim/serve/cuda_graph_padding.h"

#include <algorithm>
#include <utility>

#include "sim/util/check.h"

namespace clustersim {

CudaGraphPadding::CudaGraphPadding(std::vector<int64_t> sizes) : sizes_(std::move(sizes)) {
  CLUSTERSIM_CHECK(std::is_sorted(sizes_.begin(), sizes_.end()),
                   "CUDA-graph batch sizes out of order");
}

int64_t CudaGraphPadding::graph_batch(int64_t batch) const {
  const auto size = std::lower_bound(sizes_.begin(), sizes_.end(), batch);
  return size == sizes_.end() ? 0 : *size;
}

IterationWork CudaGraphPadding::padded(IterationWork work, int64_t batch) {
  CLUSTERSIM_CHECK(batch >= work.tokens, "a graph smaller than its batch");
  const int64_t padding = batch - work.tokens;
  work.tokens += padding;
  work.logits += padding;
  work.decode_context += static_cast<double>(padding);
  work.window_decode_context += static_cast<double>(padding);
  return work;
}

IterationWork CudaGraphPadding::run(const IterationWork& work) const {
  if (sizes_.empty() || !decode_only(work)) return work;
  const int64_t graph = graph_batch(work.tokens);
  return graph == 0 ? work : padded(work, graph);
}

}  // namespace clustersim
