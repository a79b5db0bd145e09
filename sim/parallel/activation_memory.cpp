// Stored activations of a transformer layer, tensor by tensor (T = s b tokens, 2 bytes per
// element, dropout masks 1 byte; "boundary" tensors have h per token and are replicated across
// tensor-parallel ranks unless sequence parallelism shards them, the rest are split by heads or by
// the FFN dimension over t ranks):
//   attention   QKV input 2Th (boundary); Q and K 2T(a+k)d; softmax output 2as^2b, its dropout
//               mask as^2b and dropout output 2as^2b (with dropout; else the softmax output only);
//               V 2Tkd; output-projection input 2Tad; output dropout mask Th (boundary)
//               flash attention: instead of the s x s tensors, a log-sum-exp per head, 4Ta bytes
//   MLP         input 2Th (boundary); GELU: activation input and output 2Tf each;
//               gated: gate and up outputs, activation output and product 2Tf each;
//               output dropout mask Th (boundary)
//   norms       the two norms' inputs 2Th each (boundary)
// For GPT (a = k, d = h/a, f = 4h, dropout): boundary 10Th, split 24Th, s x s 5as^2b.
#include "sim/parallel/activation_memory.h"

namespace clustersim {

double layer_activation_bytes(const schema::Transformer& t, const LayerActivationSpec& spec) {
  const double s = spec.sequence_length, b = spec.micro_batch_size, tp = spec.tensor_parallel;
  const double tokens = s * b, h = t.hidden_size(), a = t.num_attention_heads();
  const double k = t.has_num_kv_heads() ? t.num_kv_heads() : a;
  const double d = t.has_head_dim() ? t.head_dim() : h / a;
  const double f = t.ffn_hidden_size();
  const bool dropout = t.dropout();
  const bool gated = t.mlp_activation() == schema::SWIGLU || t.mlp_activation() == schema::GEGLU;
  const double boundary_shard = spec.sequence_parallel ? tp : 1;

  if (spec.recompute == schema::RECOMPUTE_FULL) return 2 * tokens * h / boundary_shard;

  const double mask = dropout ? 1 : 0;
  double boundary = 2 * tokens * h + mask * tokens * h    // attention input, output mask
                    + 2 * tokens * h + mask * tokens * h  // MLP input, output mask
                    + 2 * 2 * tokens * h;                 // norm inputs
  double split =
      2 * tokens * (a + k) * d + 2 * tokens * k * d + 2 * tokens * a * d;  // Q K, V, proj in
  const double mlp_tensors = gated ? 4 : 2;
  double experts = t.has_moe() ? t.moe().experts_per_token() : 1;
  split += mlp_tensors * 2 * tokens * f * experts;
  double quadratic = 0;  // s x s tensors
  if (spec.flash_attention) {
    split += 4 * tokens * a;
  } else if (spec.recompute != schema::RECOMPUTE_SELECTIVE) {
    quadratic = (dropout ? 5 : 2) * a * s * s * b;
  }
  return boundary / boundary_shard + (split + quadratic) / tp;
}

}  // namespace clustersim
