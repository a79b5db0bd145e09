// How many tokens of KV cache a sequence holds in a runtime's paged pool when its model attends
// within a sliding window. A cyclic cache (TensorRT-LLM's, ServingRuntime.cyclic_kv_cache) gives
// each sequence at most the window's blocks, ceil(window / block) of them, and overwrites its
// oldest tokens past them (NVIDIA/TensorRT-LLM cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp
// @002ba6a7: getRemainingBlocksToCompletion counts ceil(min(prompt + max new tokens, window) /
// tokens per block) blocks, updateToken allocates no block past the window's token count). Its
// pool has one block size for every layer, sized by the largest window
// (docs/source/features/long-sequence.md @1ec63b44: "the memory allocation for the kv cache
// still relies on the buffer's maximum value"), so only a model whose every layer attends within
// the one window holds less; chunked attention is applied to context requests only (the same
// page), the cache keeping every token.
#pragma once

#include <algorithm>
#include <cstdint>

#include "sim/workload/inference_shape.h"

namespace clustersim {

// The tokens a sequence's KV cache holds at most: the window when the runtime's cache is cyclic
// and every layer of `shape` (the stage whose memory is fitted) attends within one band window;
// 0 (no cap, the whole context) otherwise.
int cyclic_kv_window_tokens(bool runtime_cyclic, const InferenceShape& shape);

// KV blocks of `block_tokens` one sequence of one beam holds at `tokens` tokens under a cap of
// `window_tokens` (0: none): ceil(min(tokens, window) / block). Inline: a replica asks it for
// every decoding sequence at every iteration.
inline int64_t sequence_kv_blocks(int64_t tokens, int block_tokens, int window_tokens) {
  const int64_t held = window_tokens > 0 ? std::min<int64_t>(tokens, window_tokens) : tokens;
  return (held + block_tokens - 1) / block_tokens;
}

}  // namespace clustersim
