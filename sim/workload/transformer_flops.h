// Floating-point operations of a transformer per token, derived from its shape, counting a
// multiply-add as 2 FLOPs and only the matrix multiplications (as the Megatron-LM papers do).
#pragma once

#include "sim/io/schema/model.pb.h"

namespace clustersim {

struct TransformerFlops {
  double layer_forward_per_token = 0;  // one layer: projections, MLP (routed experts), attention
  double attention_forward_per_token = 0;  // the part of layer_forward_per_token that grows with s
  double logits_forward_per_token = 0;     // the output projection onto the vocabulary
  int num_layers = 0;
  // LoRA (lora.h): the base weights frozen, and per layer the adapters' forward.
  bool frozen_base = false;
  double adapter_forward_per_token = 0;

  // Forward + backward (backward = 2x forward) per token: model FLOPs, the MFU numerator. A
  // frozen base's weight GEMMs run forward and data gradient only (2x forward), its attention
  // (no weights) and the adapters the whole backward (Megatron-Bridge v0.5.0
  // src/megatron/bridge/training/utils/flop_utils.py counts LoRA runs so: the weight terms x 2/3,
  // the attention whole; it leaves the adapters out).
  double model_per_token() const {
    const double weights = num_layers * (layer_forward_per_token - attention_forward_per_token) +
                           logits_forward_per_token;
    const double trained = num_layers * (attention_forward_per_token + adapter_forward_per_token);
    return frozen_base ? 2 * weights + 3 * trained
                       : 3 * (num_layers * layer_forward_per_token + logits_forward_per_token);
  }
  // With full activation recomputation every layer's forward runs twice: hardware FLOPs (HFU).
  double with_full_recompute_per_token() const {
    return model_per_token() + num_layers * (layer_forward_per_token + adapter_forward_per_token);
  }
};

// How the attention scores and their weighted sum are counted.
enum class AttentionCount {
  // A decoder's causal mask: each query attends to the keys up to its own, (s + 1) / 2 of them
  // on average (the half of the s x s square plus its diagonal; within a sliding window of w,
  // at most w) - what a causal fused kernel
  // computes; an encoder's queries see all s.
  kCausal,
  // The whole s x s product (2 x 2 x s x heads x head_dim per token), as Narayanan et al. SC'21
  // and Megatron-LM's README tables count, so that for a GPT shape model_per_token() x tokens
  // equals their 72 B s l h^2 (1 + s/6h + V/12lh).
  kFullSquare,
};

// Whose formula counts: the shapes as they run, or a publication's formula that leaves parts out.
enum class FlopsFormula {
  kExact,
  // Megatron-Bridge v0.3.x-v0.4.x (src/megatron/bridge/training/utils/flop_utils.py
  // num_floating_point_operations, whose figures the 26.02-26.04.01 performance tables print):
  // every layer's attention over s/2 keys, a sliding window not counted; a gated MLP as three
  // matrices only when its gate is SiLU (its gated_linear_multiplier: activation_func F.silu; a
  // glu_gate_sigmoid_scale or GEGLU counts two); no router. With kCausal only.
  kBridgeV03,
};

// Per-token FLOPs at sequence length `seq`.
// Requires: a transformer that passed the catalog checks; seq >= 1; kBridgeV03 with kCausal and
// without a hybrid_layer_pattern.
TransformerFlops transformer_flops(const schema::Transformer& t, int seq,
                                   AttentionCount count = AttentionCount::kCausal,
                                   FlopsFormula formula = FlopsFormula::kExact);

}  // namespace clustersim
