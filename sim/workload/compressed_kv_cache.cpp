// Bytes of DeepSeek V4's window, compressed and indexer caches per sequence.
#include "sim/workload/compressed_kv_cache.h"

#include <algorithm>

#include "sim/workload/compressed_sparse_attention.h"
#include "sim/workload/element_size.h"

namespace clustersim {
namespace {

constexpr double kFp8ElementsPerScaleByte = 64;    // the entry's FP8 part: one scale byte per 64
constexpr double kEntryPadBytes = 1;                // pads 584 = 448 + 128 + 7 + 1
constexpr double kIndexerElementsPerScale = 128;    // the indexer key's FP32 scale block
constexpr double kScaleBytes = 4;                   // FP32

// Sum over p = 1 .. n of floor(p / 4): 2 q (q - 1) + q (n mod 4 + 1), q = floor(n / 4).
double quarter_floor_sum(int64_t n) {
  if (n <= 0) return 0;
  const double q = static_cast<double>(n / 4), r = static_cast<double>(n % 4);
  return 2 * q * (q - 1) + q * (r + 1);
}

// Sum over p = 1 .. n of min(topk, floor(p / 4)).
double selected_prefix(int64_t topk, int64_t n) {
  const int64_t full = 4 * topk;  // from here on, floor(p / 4) >= topk
  if (n < full) return quarter_floor_sum(n);
  return quarter_floor_sum(full - 1) + static_cast<double>(n - full + 1) * topk;
}

}  // namespace

double compressed_entry_bytes(const schema::Transformer& t, schema::Precision kv_cache) {
  const schema::CompressedSparseAttention& c = t.compressed_sparse_attention();
  if (kv_cache != schema::FP8) return c.head_dim() * bytes_per_element(kv_cache);
  const double nope = c.head_dim() - c.qk_rope_head_dim();
  return nope + 2.0 * c.qk_rope_head_dim() + nope / kFp8ElementsPerScaleByte + kEntryPadBytes;
}

double indexer_key_bytes(const schema::Transformer& t) {
  const double dim = t.compressed_sparse_attention().index_head_dim();
  return dim + dim / kIndexerElementsPerScale * kScaleBytes;
}

double compressed_kv_layer_bytes(const schema::Transformer& t, int ratio, int64_t tokens,
                                 schema::Precision kv_cache) {
  const schema::CompressedSparseAttention& c = t.compressed_sparse_attention();
  const double entry = compressed_entry_bytes(t, kv_cache);
  double bytes = static_cast<double>(std::min<int64_t>(tokens, c.window_tokens())) * entry;
  if (ratio > 0) bytes += static_cast<double>(tokens / ratio) * entry;
  if (ratio == 4) bytes += static_cast<double>(tokens / ratio) * indexer_key_bytes(t);
  return bytes;
}

CompressedKvCache compressed_kv_cache(const schema::Transformer& t, int first, int count,
                                      schema::Precision kv_cache) {
  const double entry = compressed_entry_bytes(t, kv_cache);
  CompressedKvCache cache;
  for (int layer = first; layer < first + count; ++layer) {
    const int ratio = compress_ratio(t, layer);
    cache.bytes_per_sequence += t.compressed_sparse_attention().window_tokens() * entry;
    if (ratio > 0) cache.bytes_per_token += entry / ratio;
    if (ratio == 4) cache.bytes_per_token += indexer_key_bytes(t) / ratio;
  }
  return cache;
}

double indexer_selections(int64_t index_topk, int64_t past, int64_t chunk) {
  return selected_prefix(index_topk, past + chunk) - selected_prefix(index_topk, past);
}

}  // namespace clustersim
