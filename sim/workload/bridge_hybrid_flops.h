// Megatron-Bridge's FLOPs count of a hybrid Mamba-Transformer model: the formula whose figures
// its performance tables print for Nemotron-H and Nemotron 3 (src/megatron/bridge/training/utils/
// flop_utils.py, num_floating_point_operations' is_hybrid_model branch, hybrid_flops, the same in
// v0.4.0 to v0.6.0 for a model without a sliding window or Gated DeltaNet layers).
#pragma once

#include "sim/io/schema/model.pb.h"
#include "sim/workload/transformer_flops.h"

namespace clustersim {

// Per token at sequence length `seq` and `tensor_parallel` ranks, forward (x 3 for the model
// FLOPs, as model_per_token() counts), every block of the pattern and of its multi-token-
// prediction modules (multi_token_prediction_pattern x multi_token_prediction_layers) counted:
//   attention   4 a d h + 4 k d h projections, 2 a d s scores and values (s/2 keys a query)
//   Mamba-2     d_in = 2 h whatever the heads' width: in_proj 2 h (2 d_in + 2 G N + heads),
//               the scan 7 d_in N, out_proj 2 d_in h (no conv1d)
//   MLP ('-')   2 h f x (3 gated | 2)
//   MoE ('E')   routed experts 2 h f x (3 | 2) x top-k (LatentMoE: at the latent width l, plus
//               2 x 2 h l projections), shared experts alike; no router
//   logits      2 h V' x (1 + multi_token_prediction_layers), V' the vocabulary padded to a
//               multiple of 128 x tensor_parallel (make_vocab_size_divisible_by's default)
// No norms, embedding or multi-token-prediction projections. Per-layer figures are the mean over
// num_layers, with the modules' blocks folded into them.
// Requires: a transformer with hybrid_layer_pattern and no sliding window that passed the catalog
// checks; seq >= 1; tensor_parallel >= 1.
TransformerFlops bridge_hybrid_flops(const schema::Transformer& t, int seq, int tensor_parallel);

}  // namespace clustersim
