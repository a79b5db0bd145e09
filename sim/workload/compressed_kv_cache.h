// DeepSeek V4's KV cache in serving (schema CompressedSparseAttention): what a sequence of s tokens
// holds in each layer of compress ratio r, one copy on every tensor-parallel rank (the model has
// one key-value head, whose keys are its values):
//   every layer: its window's last min(s, window_tokens) tokens' entries;
//   r = 4 or 128: the floor(s / r) compressed entries;
//   r = 4: as many indexer keys (the lightning indexer's compressed keys, index_head_dim wide).
// An entry is stored as vLLM's FlashMLA sparse cache stores it under an FP8 KV cache (vllm-project/
// vllm@0a291a2e1074b13971361df76245548a4ea4a77d vllm/model_executor/layers/deepseek_v4_attention.py,
// DeepseekV4MultiHeadLatentAttentionWrapper's head_bytes): the head_dim - qk_rope_head_dim non-
// rotary elements in FP8, the rotary ones in BF16, one scale byte per 64 FP8 elements and one pad
// byte (584 bytes at head_dim 512, rope 64); under a 16-bit cache, head_dim 16-bit elements. An
// indexer key is FP8 whatever the cache's format, with an FP32 scale per 128 elements (the same
// file, DeepseekV4Indexer: "128 fp8 + 4 fp32 scale = 132").
// The compressors' partial pools of the tokens since a sequence's last compressed entry are not
// counted (at most 2 x 4 or 128 tokens a layer, the same for every context length).
#pragma once

#include <cstdint>

#include "sim/io/schema/common.pb.h"
#include "sim/io/schema/model.pb.h"

namespace clustersim {

// Requires (for all functions): a transformer with compressed_sparse_attention that passed the
// catalog checks.

// Bytes of one window or compressed entry in a cache of format `kv_cache`.
double compressed_entry_bytes(const schema::Transformer& t, schema::Precision kv_cache);

// Bytes of one indexer key.
double indexer_key_bytes(const schema::Transformer& t);

// Bytes one layer of compress ratio `ratio` holds for a sequence of `tokens` tokens.
double compressed_kv_layer_bytes(const schema::Transformer& t, int ratio, int64_t tokens,
                                 schema::Precision kv_cache);

// What a sequence holds in layers [first, first + count) (one pipeline stage; the MTP layers not
// included) as a linear function of its length: bytes_per_token x tokens (the compressed entries
// and indexer keys, entry bytes / ratio a token, the floor ignored: under one entry a layer) plus
// bytes_per_sequence (the windows, once a sequence is at least window_tokens long).
struct CompressedKvCache {
  double bytes_per_token = 0;
  double bytes_per_sequence = 0;
};
CompressedKvCache compressed_kv_cache(const schema::Transformer& t, int first, int count,
                                      schema::Precision kv_cache);

// Sum over the queries at positions past + 1 .. past + chunk (a query at position p sees p tokens)
// of the compressed entries a ratio-4 layer's indexer selects for it, min(index_topk, floor(p / 4))
// (compressed_keys_attended); chunk 1 is one decoding token.
double indexer_selections(int64_t index_topk, int64_t past, int64_t chunk);

}  // namespace clustersim
