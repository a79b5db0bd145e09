// Kernel lists of transformer layers (Megatron-LM's tensor-parallel split: QKV and MLP-up split
// by columns, output projection and MLP-down by rows).
#include "sim/workload/layer_ops.h"

namespace clustersim {

std::vector<LayerOp> layer_forward_ops(const schema::Transformer& t, const LayerShape& shape) {
  using K = LayerOp::Kind;
  const int64_t s = shape.sequence_length, b = shape.micro_batch_size, tp = shape.tensor_parallel;
  const int64_t tokens = s * b, h = t.hidden_size(), a = t.num_attention_heads();
  const int64_t kv = t.has_num_kv_heads() ? t.num_kv_heads() : a;
  const int64_t d = t.has_head_dim() ? t.head_dim() : h / a;
  const int64_t f = t.ffn_hidden_size();
  const bool gated = t.mlp_activation() == schema::SWIGLU || t.mlp_activation() == schema::GEGLU;
  const int64_t experts = t.has_moe() ? t.moe().experts_per_token() : 1;
  const double boundary = 2.0 * tokens * h / (shape.sequence_parallel ? tp : 1);  // bytes
  const double hidden_bytes = 2.0 * tokens * h;
  const K before_block = K::kTensorAllGather,
          after_block = shape.sequence_parallel ? K::kTensorReduceScatter : K::kTensorAllReduce;
  std::vector<LayerOp> ops;
  auto memory = [&](const char* name, double bytes) {
    ops.push_back({K::kMemory, name, 0, 0, 0, 1, 0, bytes});
  };
  auto collective = [&](K kind, const char* name) {
    if (tp > 1) ops.push_back({kind, name, 0, 0, 0, 1, 0, hidden_bytes});
  };
  memory("norm1", 2 * boundary);
  if (shape.sequence_parallel) collective(before_block, "attention all-gather");
  ops.push_back({K::kMatmul, "qkv", tokens, (a + 2 * kv) * d / tp, h});
  if (shape.flash_attention) {
    ops.push_back({K::kAttention, "attention", 0, 0, 0, 1, 4.0 * tokens * s * a * d / tp});
  } else {
    ops.push_back({K::kMatmul, "scores", s, s, d, b * a / tp});
    // Fused scale-mask-softmax reads and writes the 16-bit scores; attention dropout is a kernel
    // of its own (Megatron-LM's CoreAttention): reads and writes them and writes a 1-byte mask.
    memory("softmax", 4.0 * a / tp * s * s * b);
    if (t.dropout()) memory("attention dropout", 5.0 * a / tp * s * s * b);
    ops.push_back({K::kMatmul, "values", s, d, s, b * a / tp});
  }
  ops.push_back({K::kMatmul, "attention out", tokens, h, a * d / tp});
  collective(after_block, "attention all-reduce");
  memory("residual add", 3 * boundary);
  memory("norm2", 2 * boundary);
  if (t.has_moe()) {
    // On the rank's tokens (its sequence-parallel shard): the router's logits, then the
    // permutation that copies each token's hidden state once per routed expert (Megatron-Core's
    // moe_utils permute: read h, write k copies); the experts run as if perfectly balanced.
    ops.push_back({K::kMatmul, "router", tokens / (shape.sequence_parallel ? tp : 1),
                   t.moe().num_experts(), h});
    memory("permute", boundary * (1 + experts));
  }
  if (shape.sequence_parallel) collective(before_block, "MLP all-gather");
  ops.push_back({K::kMatmul, "mlp up", tokens, (gated ? 2 : 1) * f / tp, h, experts});
  memory("activation", (gated ? 3.0 : 2.0) * 2 * tokens * f / tp * experts);
  ops.push_back({K::kMatmul, "mlp down", tokens, h, f / tp, experts});
  collective(after_block, "MLP all-reduce");
  // Unpermute: read the k expert outputs of the rank's tokens, write their weighted sum.
  if (t.has_moe()) memory("unpermute", boundary * (1 + experts));
  memory("residual add", 3 * boundary);
  return ops;
}

std::vector<LayerOp> output_forward_ops(const schema::Transformer& t, const LayerShape& shape) {
  using K = LayerOp::Kind;
  const int64_t tokens = static_cast<int64_t>(shape.sequence_length) * shape.micro_batch_size;
  const int64_t vocab_shard = t.vocab_size() / shape.tensor_parallel;
  return {{K::kMemory, "final norm", 0, 0, 0, 1, 0, 4.0 * tokens * t.hidden_size()},
          {K::kMatmul, "logits", tokens, vocab_shard, t.hidden_size()},
          // fp32 softmax cross-entropy: read the logits, write and read fp32 probabilities.
          {K::kMemory, "cross-entropy", 0, 0, 0, 1, 0, (2.0 + 4 + 4) * tokens * vocab_shard}};
}

}  // namespace clustersim
