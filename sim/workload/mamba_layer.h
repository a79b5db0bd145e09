// A hybrid model's layers (Megatron-Core's hybrid_layer_pattern) and the Mamba-2 mixer of its 'M'
// layers: its dimensions with their defaults, its parameters, and the kernels of its SSD chunked
// scan (Dao and Gu, "Transformers are SSMs", arXiv:2405.21060, section 6).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/io/schema/model.pb.h"
#include "sim/workload/layer_ops.h"

namespace clustersim {

// Requires (for all functions): a transformer that passed the catalog checks.

// What one layer of a hybrid pattern is.
enum class HybridBlock { kMamba, kAttention, kMlp, kExperts };

// The block a pattern letter names (one of M * - E).
HybridBlock hybrid_block_of(char letter);

// Block of 0-based layer `layer` of a model with hybrid_layer_pattern.
HybridBlock hybrid_block(const schema::Transformer& t, int layer);

// The blocks of one multi-token-prediction module of a model with hybrid_layer_pattern
// (multi_token_prediction_pattern's letters, in order; none without the pattern).
std::vector<HybridBlock> multi_token_prediction_blocks(const schema::Transformer& t);

// Of the `count` layers from `first`, those of `block`.
int hybrid_blocks_in(const schema::Transformer& t, int first, int count, HybridBlock block);

// The mixer's widths: d_inner = heads x head_dim, and the conv1d's channels d_inner + 2 g N
// (x, B and C).
int64_t mamba_inner(const schema::Transformer& t);
int64_t mamba_conv_channels(const schema::Transformer& t);
int64_t mamba_conv_kernel(const schema::Transformer& t);  // conv_kernel, else 4
int64_t mamba_chunk_size(const schema::Transformer& t);   // chunk_size, else 128

// Parameters of one Mamba-2 mixer (its layer's pre-norm apart): see Mamba2 in model.proto.
int64_t mamba_mixer_parameters(const schema::Transformer& t);

// The SSD scan of `batch` sequences of `sequence` tokens on `heads` of the mixer's heads and their
// share of the groups (Dao and Gu, section 6, the chunked algorithm; chunks of Q tokens, state N,
// head dim P), as the batched 16-bit matmuls the kernels run and their memory traffic: per chunk
// and group the Q x Q x N product C B^T; per chunk and head the masked Q x Q x P product with X,
// the chunk's state B^T X (N x P x Q) and the state's output C h (Q x N x P); the passing of the
// N x P states from chunk to chunk is elementwise, with the kernels' reads of x (heads P), B and C
// (2 G' N) and dt (fp32) and write of y (heads P), and the chunks' fp32 states written and read
// back (2 x 4 heads N P a chunk). FLOPs: tokens (2 Q N G' + heads (2 Q P + 4 N P)), G' = the
// groups of those heads.
std::vector<LayerOp> ssd_scan_ops(const schema::Transformer& t, int64_t batch, int64_t sequence,
                                  int64_t heads);

}  // namespace clustersim
