// Does a serving replica fit its GPUs, and how much KV cache does it get? Per GPU of the stage
// with the most weights:
//   used = weights + runtime (memory_overhead + tensor_parallel_memory x (tp - 1), per GPU fit)
//          + activation workspace (tokens of the largest iteration x bytes per token)
//   KV-cache pool = (capacity - used) x kv_cache_memory_fraction, in blocks of kv_block_tokens
// A static batch instead holds its whole KV cache, batch x beams x (input + output) tokens,
// contiguous (TensorRT-LLM's gptSession), so its peak is used + that; a layer attending within a
// sliding window holds at most the window's tokens (the cache reserved is batch x 2 x KV heads x
// maxAttentionWindow x head size a layer: RuntimeBuffers::reshape, NVIDIA/TensorRT-LLM
// cpp/tensorrt_llm/runtime/runtimeBuffers.cpp @5955b8af).
#pragma once

#include <cstdint>

#include "sim/io/schema/runtime.pb.h"
#include "sim/workload/inference_shape.h"

namespace clustersim {

struct ServingMemory {
  double capacity_bytes = 0;   // of one GPU
  double weight_bytes = 0;
  double runtime_bytes = 0;
  double activation_bytes = 0;  // workspace for the largest iteration
  double kv_bytes_per_token = 0;
  double used_bytes() const { return weight_bytes + runtime_bytes + activation_bytes; }
  // Bytes left for the KV cache (negative: the weights alone do not fit).
  double free_bytes() const { return capacity_bytes - used_bytes(); }
};

// The runtime's own memory per GPU at `tensor_parallel`: the GPU's fit where it gives one, else
// the runtime's: memory_overhead + tensor_parallel_memory x (tp - 1).
double runtime_bytes(const schema::ServingRuntime& runtime, const schema::ServingGpuFit& fit,
                     int tensor_parallel);

// `iteration_tokens`: the most tokens one iteration processes (the token budget, or a static
// batch's prompt tokens). Requires: shape of the stage with the most weights.
ServingMemory serving_memory(const InferenceShape& shape, double runtime_bytes,
                             double capacity_bytes, int64_t iteration_tokens);

// KV-cache blocks of `block_tokens` the pool holds at `fraction` of the free memory (0 when none).
int64_t kv_cache_blocks(const ServingMemory& memory, double fraction, int block_tokens);

// Peak bytes per GPU of a static batch of `batch` requests of `input` + `output` tokens, each
// request's KV cache copied to its `beams` beams.
double static_batch_peak_bytes(const InferenceShape& shape, double runtime_bytes, int64_t batch,
                               int64_t input, int64_t output, int beams = 1);

}  // namespace clustersim
