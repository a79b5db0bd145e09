// Kernel lists of transformer layers (Megatron-LM's tensor-parallel split: QKV and MLP-up split
// by columns, output projection and MLP-down by rows; context parallelism splits the tokens).
#include "sim/workload/layer_ops.h"

#include "sim/workload/transformer_dimensions.h"

namespace clustersim {

namespace {

using K = LayerOp::Kind;

struct Dimensions {  // of one layer on one rank
  int64_t s, b, tp, cp, tokens, h, a, kv, d, f;
  bool gated;
};

Dimensions dimensions(const schema::Transformer& t, const LayerShape& shape) {
  Dimensions x{};
  x.s = shape.sequence_length;
  x.b = shape.micro_batch_size;
  x.tp = shape.tensor_parallel;
  x.cp = shape.context_parallel;
  x.tokens = x.s * x.b / x.cp;
  x.h = t.hidden_size();
  x.a = t.num_attention_heads();
  x.kv = kv_heads(t);
  x.d = head_dim(t);
  x.f = t.ffn_hidden_size();
  x.gated = gated_mlp(t);
  return x;
}

// The attention core of a rank: fused (with its context-parallel exchange) or unfused.
void attention_core(const schema::Transformer& t, const LayerShape& shape, const Dimensions& x,
                    std::vector<LayerOp>* ops) {
  if (!shape.flash_attention) {
    ops->push_back({K::kMatmul, "scores", x.s, x.s, x.d, x.b * x.a / x.tp, 0, 0, false, true});
    // Fused scale-mask-softmax reads and writes the 16-bit scores; attention dropout is a kernel
    // of its own (Megatron-LM's CoreAttention): reads and writes them and writes a 1-byte mask.
    const double scores = static_cast<double>(x.a) / x.tp * x.s * x.s * x.b;
    ops->push_back({K::kMemory, "softmax", 0, 0, 0, 1, 0, 4.0 * scores});
    if (t.dropout()) ops->push_back({K::kMemory, "attention dropout", 0, 0, 0, 1, 0, 5.0 * scores});
    ops->push_back({K::kMatmul, "values", x.s, x.d, x.s, x.b * x.a / x.tp, 0, 0, false, true});
    return;
  }
  const bool causal = t.kind() == schema::DECODER;
  const double s = static_cast<double>(x.s);
  const double pairs = causal ? s * (s + 1) / 2 : s * s;  // per (sequence, head), all ranks
  const double flops = 4.0 * pairs * x.d * x.b * x.a / x.tp / x.cp;
  const double element = 2;  // 16-bit Q, K, V and output
  const double kv_block = 2 * element * x.tokens * x.kv / x.tp * x.d;
  LayerOp core{K::kAttention, "attention", x.s / x.cp, x.s, x.d, x.b * x.a / x.tp, flops,
               0,            causal};
  if (x.cp == 1) return ops->push_back(core);
  switch (shape.context_parallel_comm) {
    case schema::ALL_GATHER:
      ops->push_back({K::kContextAllGather, "context all-gather", 0, 0, 0, 1, 0, kv_block * x.cp});
      return ops->push_back(core);
    case schema::ALL_TO_ALL:
      ops->push_back({K::kContextAllToAll, "context all-to-all (QKV)", 0, 0, 0, 1, 0,
                      element * x.tokens * (x.a + 2 * x.kv) / x.tp * x.d});
      core.m = x.s;
      core.count = x.b * x.a / x.tp / x.cp;
      ops->push_back(core);
      return ops->push_back({K::kContextAllToAll, "context all-to-all (output)", 0, 0, 0, 1, 0,
                             element * x.tokens * x.a / x.tp * x.d});
    default:  // P2P ring
      core.bytes = kv_block;
      return ops->push_back(core);
  }
}

}  // namespace

std::vector<LayerOp> layer_forward_ops(const schema::Transformer& t, const LayerShape& shape) {
  const Dimensions x = dimensions(t, shape);
  const int64_t tokens = x.tokens, h = x.h, tp = x.tp, d = x.d, f = x.f;
  const int64_t experts = t.has_moe() ? t.moe().experts_per_token() : 1;
  const double boundary = 2.0 * tokens * h / (shape.sequence_parallel ? tp : 1);  // bytes
  const double hidden_bytes = 2.0 * tokens * h;
  // All-gathers move the GEMM's input: 1-byte elements when its inputs are FP8.
  const double gathered_bytes = (shape.narrow_gemm_inputs ? 1.0 : 2.0) * tokens * h;
  const K after_block = shape.sequence_parallel ? K::kTensorReduceScatter : K::kTensorAllReduce;
  std::vector<LayerOp> ops;
  auto memory = [&](const char* name, double bytes) {
    ops.push_back({K::kMemory, name, 0, 0, 0, 1, 0, bytes});
  };
  auto collective = [&](K kind, const char* name) {
    const double bytes = kind == K::kTensorAllGather ? gathered_bytes : hidden_bytes;
    if (tp > 1) ops.push_back({kind, name, 0, 0, 0, 1, 0, bytes});
  };
  memory("norm1", 2 * boundary);
  if (shape.sequence_parallel) collective(K::kTensorAllGather, "attention all-gather");
  ops.push_back({K::kMatmul, "qkv", tokens, (x.a + 2 * x.kv) * d / tp, h});
  attention_core(t, shape, x, &ops);
  ops.push_back({K::kMatmul, "attention out", tokens, h, x.a * d / tp});
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
  if (shape.sequence_parallel) collective(K::kTensorAllGather, "MLP all-gather");
  ops.push_back({K::kMatmul, "mlp up", tokens, (x.gated ? 2 : 1) * f / tp, h, experts});
  memory("activation", (x.gated ? 3.0 : 2.0) * 2 * tokens * f / tp * experts);
  ops.push_back({K::kMatmul, "mlp down", tokens, h, f / tp, experts});
  collective(after_block, "MLP all-reduce");
  // Unpermute: read the k expert outputs of the rank's tokens, write their weighted sum.
  if (t.has_moe()) memory("unpermute", boundary * (1 + experts));
  memory("residual add", 3 * boundary);
  return ops;
}

std::vector<LayerOp> output_forward_ops(const schema::Transformer& t, const LayerShape& shape) {
  const int64_t tokens =
      static_cast<int64_t>(shape.sequence_length) * shape.micro_batch_size / shape.context_parallel;
  const int64_t vocab_shard = t.vocab_size() / shape.tensor_parallel;
  return {{K::kMemory, "final norm", 0, 0, 0, 1, 0, 4.0 * tokens * t.hidden_size()},
          {K::kMatmul, "logits", tokens, vocab_shard, t.hidden_size(), 1, 0, 0, false, true},
          // fp32 softmax cross-entropy: read the logits, write and read fp32 probabilities.
          {K::kMemory, "cross-entropy", 0, 0, 0, 1, 0, (2.0 + 4 + 4) * tokens * vocab_shard}};
}

}  // namespace clustersim
