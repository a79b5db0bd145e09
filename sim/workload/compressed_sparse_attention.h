// DeepSeek V4's attention block in a training step (schema CompressedSparseAttention): the kernels
// of its query bottleneck, its one key-value head, the compressors and the lightning indexer of
// the layers that attend to compressed keys, the attention over the window and those keys, and
// the grouped low-rank output projection; and the hyper-connections' passes around each block.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/io/schema/model.pb.h"
#include "sim/workload/layer_ops.h"

namespace clustersim {

// Requires (for all functions): a transformer that passed the catalog checks.

// Layer `layer`'s (0-based) compress ratio: 0 (window only), 4 or 128; 0 without compressed
// sparse attention, and for a multi-token-prediction layer (layer >= num_layers).
int compress_ratio(const schema::Transformer& t, int layer);

// The compressed keys each query of a sequence of `s` tokens attends to besides its window:
// 0 at ratio 0; at ratio 4 the indexer's min(index_topk, s / 4) picks (the kernel's padded
// top-k list, whatever of it the causal mask leaves empty); at ratio 128 all s / 128 entries.
int64_t compressed_keys_attended(const schema::CompressedSparseAttention& c, int64_t s, int ratio);

// The attention block's kernels of a layer of compress ratio `ratio` on one tensor-parallel rank
// (heads and output groups split over it; the key-value head, the compressors and the indexer
// replicated), after the block's norm and all-gather, before its all-reduce:
//   q down (h -> q_lora_rank), its RMSNorm, q up (-> heads x head_dim); kv (h -> head_dim), its
//   RMSNorm;
//   ratio > 0: the compressor's wkv and wgate (h -> 2 c head_dim, c = 2 at ratio 4, else 1) and
//   its pooling (a memory pass reading both outputs, writing the s / ratio entries and their
//   RMSNorm);
//   ratio 4: the indexer's query (q_lora_rank -> index heads x index_head_dim) and head weights
//   (h -> index heads), its own compressor at index_head_dim, the scoring of every query against
//   all s / 4 compressed keys in each index head (a batched 16-bit GEMM: 2 x heads x dim x s x
//   s / 4 FLOPs a sequence; its backward, the sparse loss's, a data and a key gradient) and the
//   top-k (a memory pass reading the fp32 head-weighted scores, writing the picks' indices;
//   backward, the scores' gradient written and read);
//   the attention: ratio 0 a causal 128-token window (LayerOp::window); else every query against
//   window_tokens + compressed_keys_attended keys in one kernel;
//   the grouped output: o_groups GEMMs of (heads / o_groups) head_dim -> o_lora_rank, then
//   o_groups o_lora_rank -> h.
// Requires: t has compressed_sparse_attention, tensor_parallel divides o_groups, no context
// parallelism.
void compressed_sparse_attention_ops(const schema::Transformer& t, const LayerShape& shape,
                                     int ratio, std::vector<LayerOp>* ops);

// What mixes a block's input out of the `streams`-wide residual (schema HyperConnections), on
// `tokens` tokens: the FP32 projection of the flattened streams to streams^2 + 2 streams weights
// (a GEMM, timed at the 16-bit rate), and one memory pass reading the streams and writing the
// block's input, 2 (streams + 1) h bytes a token. The Sinkhorn iterations on streams x streams a
// token are not counted.
void hyper_connection_mix_ops(const schema::Transformer& t, int64_t tokens,
                              std::vector<LayerOp>* ops);

// What replaces a block's residual add under hyper-connections: a memory pass reading the
// streams and the block's output and writing the streams, 2 (2 streams + 1) h bytes a token.
LayerOp hyper_connection_update_op(const schema::Transformer& t, int64_t tokens);

}  // namespace clustersim
