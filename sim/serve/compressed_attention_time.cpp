// A compressed sparse attention layer's kernels in a serving iteration.
#include "sim/serve/compressed_attention_time.h"

#include <algorithm>

namespace clustersim {
namespace {

constexpr double kScoreBytes = 4;  // the indexer's head-weighted scores, FP32

}  // namespace

CompressedAttentionWork compressed_attention_work(const InferenceShape& shape,
                                                  const IterationWork& work, int ratio) {
  const double f = shape.decode_attention_flops_per_pair;
  CompressedAttentionWork w;
  // The window's prompt pairs in the causal kernel; at ratio 128 with all the compressed entries.
  double pairs = work.window_attention_pairs, per_key = work.window_attention_pairs_per_key;
  double read = work.window_decode_context;  // entries the decoding tokens read
  if (ratio == 128) {
    pairs += work.attention_pairs / ratio;
    per_key += work.attention_pairs_per_key / ratio;
    read += work.decode_context / ratio;
  } else if (ratio == 4) {
    read += work.selected_entries;  // the prompt queries' gathered by index as the tokens'
    const double scored = (work.attention_pairs + work.decode_context) / ratio;
    w.indexer_bytes =
        work.decode_context / ratio * shape.indexer_key_bytes + kScoreBytes * scored;
    w.indexer_flops = 2.0 * shape.index_heads * shape.index_head_dim * scored;
  }
  w.prompt_flops = pairs * f;
  w.prompt_flops_per_key = per_key * f;
  w.read_bytes = read * shape.compressed_entry_bytes;
  w.read_flops = read * f;
  return w;
}

Picoseconds compressed_attention_time(const ComputeModel& compute, const InferenceShape& shape,
                                      const IterationWork& work, int ratio) {
  const CompressedAttentionWork w = compressed_attention_work(shape, work, ratio);
  Picoseconds t;
  if (w.prompt_flops > 0) {
    t += compute.prompt_attention(w.prompt_flops, w.prompt_flops_per_key, shape.head_dim);
  }
  if (w.read_bytes > 0) {
    t += std::max(compute.memory_bound(w.read_bytes), compute.fused_attention(w.read_flops));
  }
  if (w.indexer_flops > 0) {
    t += std::max(compute.memory_bound(w.indexer_bytes), compute.fused_attention(w.indexer_flops));
  }
  return t;
}

}  // namespace clustersim
