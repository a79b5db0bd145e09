// The kernels of one transformer layer's forward pass on one tensor-parallel rank, for one
// micro-batch, with their shapes: what the compute model times. Backward and recomputation are
// derived from these by the step model (stage_costs.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/io/schema/model.pb.h"

namespace clustersim {

struct LayerOp {
  enum class Kind {
    kMatmul,
    kAttention,
    kMemory,
    kTensorAllReduce,
    kTensorAllGather,
    kTensorReduceScatter
  };
  Kind kind;
  std::string name;
  int64_t m = 0, n = 0, k = 0;  // matmul (m x k) . (k x n), `count` times
  int64_t count = 1;
  double flops = 0;  // attention
  double bytes = 0;  // memory-bound traffic, or the collective's buffer (per GPU)
};

struct LayerShape {
  int sequence_length = 0;
  int micro_batch_size = 0;
  int tensor_parallel = 1;
  bool sequence_parallel = false;
  bool flash_attention = true;
};

// Forward kernels of one layer, in order. 16-bit activations. Tensor-parallel communication is
// one all-reduce after the attention and one after the MLP (reduce-scatter, with an all-gather
// before each block, under sequence parallelism).
std::vector<LayerOp> layer_forward_ops(const schema::Transformer& t, const LayerShape& shape);

// Forward kernels of the output layer on the last stage: logits and the cross-entropy.
std::vector<LayerOp> output_forward_ops(const schema::Transformer& t, const LayerShape& shape);

}  // namespace clustersim
