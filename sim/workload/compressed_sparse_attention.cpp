// DeepSeek V4's compressed sparse attention and hyper-connections as kernels (shapes read in
// NVIDIA/Megatron-LM@d48bd6be0a85cc0d6d3cc71e8750cf357cc6bdb1, dev,
// megatron/core/transformer/experimental_attention_variant/csa.py Compressor, CSAIndexer,
// CompressedSparseAttention; transformer/hyper_connection.py HyperConnectionModule).
#include "sim/workload/compressed_sparse_attention.h"

#include <algorithm>

namespace clustersim {

namespace {

using K = LayerOp::Kind;

// A compressor's kernels on `tokens` tokens (of sequences of any length): wkv and wgate as one
// GEMM h -> 2 c dim, then the gated pooling of every `ratio` tokens, reading both 16-bit outputs
// and writing the pooled entries, and their RMSNorm (read, write).
void compressor_ops(const char* gemm, const char* pooling, int64_t tokens, int64_t h, int64_t dim,
                    int ratio, std::vector<LayerOp>* ops) {
  const int64_t c = ratio == 4 ? 2 : 1;  // ratio-4 pools overlap: two entries' worth a token
  ops->push_back({K::kMatmul, gemm, tokens, 2 * c * dim, h});
  const double entries = static_cast<double>(tokens) / ratio;
  const double bytes = 2.0 * tokens * 2 * c * dim + (2.0 + 4.0) * entries * dim;
  ops->push_back({K::kMemory, pooling, 0, 0, 0, 1, 0, bytes});
}

}  // namespace

int compress_ratio(const schema::Transformer& t, int layer) {
  if (!t.has_compressed_sparse_attention() || layer >= t.num_layers()) return 0;
  return t.compressed_sparse_attention().compress_ratios(layer);
}

int64_t compressed_keys_attended(const schema::CompressedSparseAttention& c, int64_t s, int ratio) {
  if (ratio == 0) return 0;
  if (ratio == 4) return std::min<int64_t>(c.index_topk(), s / 4);
  return s / ratio;
}

void compressed_sparse_attention_ops(const schema::Transformer& t, const LayerShape& shape,
                                     int ratio, std::vector<LayerOp>* ops) {
  const schema::CompressedSparseAttention& c = t.compressed_sparse_attention();
  const int64_t s = shape.sequence_length, b = shape.micro_batch_size, tp = shape.tensor_parallel;
  const int64_t tokens = s * b, h = t.hidden_size(), a = t.num_attention_heads();
  const int64_t d = c.head_dim(), q = c.q_lora_rank();
  ops->push_back({K::kMatmul, "q down", tokens, q, h});
  ops->push_back({K::kMemory, "q norm", 0, 0, 0, 1, 0, 4.0 * tokens * q});
  ops->push_back({K::kMatmul, "q up", tokens, a * d / tp, q});
  ops->push_back({K::kMatmul, "kv", tokens, d, h});
  ops->push_back({K::kMemory, "kv norm", 0, 0, 0, 1, 0, 4.0 * tokens * d});
  if (ratio > 0) compressor_ops("compressor", "compressor pooling", tokens, h, d, ratio, ops);
  if (ratio == 4) {
    const int64_t heads = c.index_n_heads(), dim = c.index_head_dim();
    ops->push_back({K::kMatmul, "indexer q", tokens, heads * dim, q});
    ops->push_back({K::kMatmul, "indexer weights", tokens, heads, h});
    compressor_ops("indexer compressor", "indexer compressor pooling", tokens, h, dim, ratio, ops);
    // Per sequence and index head, the s queries against the s / 4 compressed keys.
    LayerOp scores{K::kMatmul, "indexer scores", s, s / 4, dim, b * heads};
    scores.sixteen_bit = true;
    ops->push_back(std::move(scores));
    const double score_bytes = 4.0 * b * s * (s / 4);  // fp32, summed over the heads
    LayerOp topk{K::kMemory, "indexer top-k", 0, 0, 0, 1, 0,
                 score_bytes + 4.0 * tokens * compressed_keys_attended(c, s, ratio)};
    topk.backward_bytes = 2 * score_bytes;
    ops->push_back(std::move(topk));
  }
  LayerOp core{K::kAttention, "attention", s, s, d, b * a / tp};
  if (ratio == 0) {
    core.causal = true;
    core.window = c.window_tokens() < s ? c.window_tokens() : 0;
    core.flops = 4.0 * causal_pairs(static_cast<double>(s), static_cast<double>(core.window)) * d *
                 static_cast<double>(core.count);
  } else {
    core.n = c.window_tokens() + compressed_keys_attended(c, s, ratio);
    core.flops = 4.0 * s * core.n * d * static_cast<double>(core.count);
  }
  core.fp8 = shape.fp8_attention;
  core.library = shape.attention_library;
  core.key_value_elements = static_cast<double>(tokens) * d;  // keys are the values
  ops->push_back(std::move(core));
  const int64_t groups = c.o_groups() / tp;
  ops->push_back({K::kMatmul, "output groups", tokens, c.o_lora_rank(), a / c.o_groups() * d,
                  groups});
  ops->push_back({K::kMatmul, "attention out", tokens, h, groups * c.o_lora_rank()});
}

void hyper_connection_mix_ops(const schema::Transformer& t, int64_t tokens,
                              std::vector<LayerOp>* ops) {
  const int64_t n = t.hyper_connections().streams(), h = t.hidden_size();
  LayerOp projection{K::kMatmul, "hyper-connection projection", tokens, n * n + 2 * n, n * h};
  projection.sixteen_bit = true;
  ops->push_back(std::move(projection));
  ops->push_back(
      {K::kMemory, "hyper-connection mix", 0, 0, 0, 1, 0, 2.0 * (n + 1) * h * tokens});
}

LayerOp hyper_connection_update_op(const schema::Transformer& t, int64_t tokens) {
  const int64_t n = t.hyper_connections().streams(), h = t.hidden_size();
  return {K::kMemory, "hyper-connection update", 0, 0, 0, 1, 0, 2.0 * (2 * n + 1) * h * tokens};
}

}  // namespace clustersim
