// Megatron-Bridge's FLOPs count of DeepSeek V4's hybrid attention: the formula whose figures its
// 26.08 performance table prints for DeepSeek V4 Flash (NVIDIA-NeMo/Megatron-Bridge@067f987d
// src/megatron/bridge/training/utils/flop_utils.py, transformer_flops' multi-latent-attention
// branch with experimental_attention_variant "dsv4_hybrid", and the totals after it).
#pragma once

#include "sim/io/schema/model.pb.h"
#include "sim/workload/transformer_flops.h"

namespace clustersim {

// Per token at sequence length `seq` and `tensor_parallel` ranks, forward (x 3 for the model
// FLOPs, as model_per_token() counts), over the num_layers layers and the multi-token-prediction
// modules' layers (L in all; each module's layer window-only, ratio 0), with h hidden, a heads of
// head_dim v (qk_rope_head_dim of it rotary), q and o the query and output ranks, G o_groups, w
// window_tokens, n_r the layers of compress ratio r, indexer heads i of dim e and top-k K:
//   projections   2 L (q (h + a v + 1) + h v + v + a v o + G o h)     (the norms as + 1, + v)
//   window        2 n_0 a w v 2 + 2 n_128 a w v 2
//   ratio 4       2 n_4 a (w + c) v 2,  c = k' (1 - 4 k' / (2 s)), k' = min(K, s / 4) (the mean
//                 causal count of selected entries: 384 at K 512 and s 4096)
//   compressors   2 (n_4 h 2 v 2 + n_128 h v 2)
//   indexer       2 n_4 (h 2 e 2 + q i e + h i)
//   quadratic     2 s (n_128 a v / 128 + n_4 i e / 4)  (ratio-128 attention, the indexer's scores)
//   experts       2 h f x (3 gated | 2) x (top-k + shared) in every layer, the modules' too
//   modules       2 x modules (3 h + 2 h^2)  (their norms and projection)
//   logits        2 h V' x (1 + modules), V' the vocabulary padded to 128 x tensor_parallel
// Hyper-connections, the Sinkhorn iterations and the routers are not counted. Per-layer figures are
// the mean over num_layers, with the modules' layers folded into them; the quadratic terms are
// attention_forward_per_token's part.
// Requires: a transformer with compressed_sparse_attention and moe that passed the catalog checks
// (every layer with experts); seq >= 1; tensor_parallel >= 1.
TransformerFlops bridge_dsv4_flops(const schema::Transformer& t, int seq, int tensor_parallel);

}  // namespace clustersim
