// Per-token FLOPs of transformer layers from their shapes.
//
// Per token and layer, with h hidden, a heads, k KV heads, d head dim, f FFN size, s sequence:
//   QKV projection   2 h (a d + 2 k d)        attention scores + values   2 x 2 s' a d
//                                              (s' keys per query: s, or (s + 1) / 2 causal)
//   output proj      2 a d h                  MLP   2 h f x (3 gated | 2), x experts per token
//   MoE router       2 h E
#include "sim/workload/transformer_flops.h"

#include "sim/workload/transformer_dimensions.h"

namespace clustersim {

TransformerFlops transformer_flops(const schema::Transformer& t, int seq, AttentionCount count) {
  const double h = t.hidden_size(), a = t.num_attention_heads();
  const double k = kv_heads(t);
  const double d = head_dim(t);
  const double f = t.ffn_hidden_size();
  const bool gated = gated_mlp(t);
  double mlp = 2 * h * f * (gated ? 3 : 2);
  if (t.has_moe()) mlp = mlp * t.moe().experts_per_token() + 2 * h * t.moe().num_experts();
  TransformerFlops flops;
  const bool causal = count == AttentionCount::kCausal && t.kind() == schema::DECODER;
  const double keys = causal ? (static_cast<double>(seq) + 1) / 2 : static_cast<double>(seq);
  flops.attention_forward_per_token = 2 * 2 * keys * a * d;
  flops.layer_forward_per_token =
      2 * h * (a * d + 2 * k * d) + flops.attention_forward_per_token + 2 * a * d * h + mlp;
  flops.logits_forward_per_token = 2 * h * t.vocab_size();
  flops.num_layers = t.num_layers();
  return flops;
}

}  // namespace clustersim
