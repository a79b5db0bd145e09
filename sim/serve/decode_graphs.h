// The batch sizes a serving runtime captures its decode CUDA graphs at, and the batch a decode
// iteration is padded to (runtime.proto DecodeGraphs).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/io/schema/runtime.pb.h"

namespace clustersim {

// The captured batch sizes, ascending, for a replica whose scheduler allows `max_batch`
// sequences and `max_tokens` tokens per iteration: the rule's batch_sizes, then each power of
// two p from doubling_from with 2 p <= L, then L = min(max_batch, max_tokens) itself, none above
// L. Requires: max_batch, max_tokens >= 1.
std::vector<int32_t> captured_decode_batches(const schema::DecodeGraphs& graphs, int32_t max_batch,
                                             int64_t max_tokens);

// The batch an iteration of `batch` decoding sequences alone runs at: the smallest captured size
// that holds it, or `batch` itself when none does (or none is captured).
int32_t padded_decode_batch(const std::vector<int32_t>& captured, int32_t batch);

}  // namespace clustersim
