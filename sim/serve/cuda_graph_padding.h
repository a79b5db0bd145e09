// CUDA graphs with padding (scheduler.cuda_graph_batch_sizes): which captured graph a decode-only
// iteration replays, and the dummy sequences that fill it. TensorRT-LLM's PyTorch backend with
// cuda_graph_config enable_padding (NVIDIA/TensorRT-LLM tensorrt_llm/_torch/pyexecutor
// _get_padded_batch, in model_engine.py and later cuda_graph_runner.py alike): a batch of
// generation requests alone is topped up with dummy generation requests to the smallest captured
// batch size holding it, none above the scheduler's max_batch_size; a batch with a context
// (prompt) request, or above the largest captured size, runs eagerly, unpadded. The dummy request
// has one cached token and runs every matmul row, all-reduce byte, logit and expert token a real
// decoding sequence does. Shared by a tensor/pipeline-parallel replica (Replica::try_start) and
// an attention-data-parallel one (AttentionDataParallelModel, which first pads every GPU to the
// largest GPU's batch).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/serve/iteration_model.h"

namespace clustersim {

class CudaGraphPadding {
 public:
  CudaGraphPadding() = default;  // no graphs: nothing is padded
  // `sizes`: the captured batch sizes, increasing, none above the replica's (GPU's) max_batch.
  explicit CudaGraphPadding(std::vector<int64_t> sizes);

  bool captured() const { return !sizes_.empty(); }
  // Whether `work` holds decoding sequences alone (no prompt chunk, nor a prompt's tokens beyond
  // its one logit), which a graph can replay; an empty iteration counts as one.
  static bool decode_only(const IterationWork& work) {
    return work.attention_pairs == 0 && work.tokens == work.logits;
  }
  // The smallest captured size at least `batch`; 0 when none is.
  int64_t graph_batch(int64_t batch) const;
  // `work` topped up to `batch` sequences with dummy sequences of one cached token each.
  // Requires: batch >= work.tokens.
  static IterationWork padded(IterationWork work, int64_t batch);
  // What a replica's GPUs run for `work`: padded to its graph when it only decodes and a captured
  // size holds it, else `work` itself.
  IterationWork run(const IterationWork& work) const;

 private:
  std::vector<int64_t> sizes_;  // increasing
};

}  // namespace clustersim
