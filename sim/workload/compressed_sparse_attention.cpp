// DeepSeek V4's compressed sparse attention and hyper-connections as kernels (shapes read in
// NVIDIA/Megatron-LM@d48bd6be0a85cc0d6d3cc71e8750cf357cc6bdb1, dev,
// megatron/core/transformer/experimental_attention_variant/csa.py Compressor, CSAIndexer,
// CompressedSparseAttention; transformer/hyper_connection.py HyperConnectionModule; what the fused
// path runs in the dev commit the 26.08 recipes were tested with,
// 35f36c7c9dba16cd186caea5fd112a1da8269abd: experimental_attention_variant/dsa_kernels.py
// FusedIndexerSparseAttnFunc and SparseAttnFunc, deepseek_v4_hybrid_attention.py
// DSv4HybridAttention, transformer/transformer_layer.py HyperConnectionTransformerLayer).
#include "sim/workload/compressed_sparse_attention.h"

#include <algorithm>

namespace clustersim {

namespace {

using K = LayerOp::Kind;

// A compressor's kernels on `tokens` tokens (of sequences of any length): wkv and wgate as one
// GEMM h -> 2 c dim, then the gated pooling of every `ratio` tokens as Compressor.forward runs it,
// eager kernels over the w = c dim elements a token of each output: the position bias added (read
// 16-bit, write fp32: 6 bytes an element); at ratio 4 both outputs laid out overlapping
// (_overlap_transform: a fill and two slice copies, 6 bytes an element of the 16-bit one, 12 of
// the fp32 one); the softmax over the pool (read, write fp32: 8), the product with the values
// (read 16-bit and fp32, write fp32: 10) and the pool's sum (read: 4); then on the entries the
// sum's fp32 write, its cast to 16 bits (read 4, write 2) and their RMSNorm (read, write): 14
// bytes an element. Backward twice the forward's traffic. `inference`: the pooling as fused
// kernels run it (vLLM's DeepseekCompressor: _save_partial_states_kernel, then
// _fused_kv_compress_norm_rope_insert_*: pool, RMSNorm, rotary, quantize and write the cache in
// one kernel), one pass reading both 16-bit outputs (2 bytes an element) and writing each entry
// and its norm (6 bytes an entry element).
void compressor_ops(const char* gemm, const char* pooling, int64_t tokens, int64_t h, int64_t dim,
                    int ratio, bool inference, std::vector<LayerOp>* ops) {
  const bool overlap = ratio == 4;  // ratio-4 pools overlap: two entries' worth a token
  const int64_t c = overlap ? 2 : 1;
  ops->push_back({K::kMatmul, gemm, tokens, 2 * c * dim, h});
  const double entries = static_cast<double>(tokens) / ratio;
  const double per_element = inference ? 2 * 2 : 6 + (overlap ? 6 + 12 : 0) + 8 + 10 + 4;
  const double per_entry_element = inference ? 6 : 14;
  const double bytes = per_element * tokens * c * dim + per_entry_element * entries * dim;
  ops->push_back({K::kMemory, pooling, 0, 0, 0, 1, 0, bytes});
}

// The indexer's sparse loss (dsa_indexer_use_sparse_loss) on `tokens` queries, each with `picked`
// selected compressed keys, as FusedIndexerSparseAttnFunc runs it in the forward: the target, each
// query's `heads` attention heads of `head_dim` scored again against its picked keys; the
// indexer's gradients, its `index_heads` scores over the picked keys recomputed and its query and
// key gradients (three kernels of that shape); and the eager fp32 kernels over the tokens x picked
// entries between them. Each kernel is timed as one 16-bit GEMM of tokens x heads rows against
// picked keys: its gathered keys (a layer's compressed keys, a few MB) read from L2, not HBM,
// once a query; the rows in full tiles (not one query's heads, as the attention's: a lower
// bound). None has a backward kernel of its own; the backward scales the three
// precomputed gradients (read and write the indexer's queries, its `compressed` keys and its head
// weights, 16-bit).
void indexer_sparse_loss_ops(int64_t tokens, int64_t heads, int64_t head_dim, int64_t index_heads,
                             int64_t index_dim, int64_t picked, int64_t compressed,
                             std::vector<LayerOp>* ops) {
  LayerOp target{K::kMatmul, "indexer loss target", tokens * heads, picked, head_dim};
  target.sixteen_bit = true;
  target.backward_runs = 0;
  ops->push_back(std::move(target));
  LayerOp gradients{K::kMatmul, "indexer loss gradients", tokens * index_heads, picked, index_dim,
                    3};
  gradients.sixteen_bit = true;
  gradients.backward_runs = 0;
  ops->push_back(std::move(gradients));
  // Bytes an entry: gather (read index and score, write), where (read two, write), softmax (read,
  // write), the KL's two clamps and two logs (read, write each), subtract and multiply (read two,
  // write), the row sum and the rows' validity (read), and the two clones for the gradient kernel
  // (read, write): 28 fp32 or int32 accesses.
  LayerOp loss{K::kMemory, "indexer loss", 0, 0, 0, 1, 0, 28 * 4.0 * tokens * picked};
  loss.backward_bytes =
      2 * 2.0 *
      (static_cast<double>(tokens) * index_heads * (index_dim + 1) + compressed * index_dim);
  ops->push_back(std::move(loss));
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

int sparse_key_block_of(const std::string& architecture) {
  return architecture == "Hopper" ? 128 : 64;
}

int64_t sparse_attention_keys(const schema::CompressedSparseAttention& c, int64_t s, int ratio,
                              int key_block) {
  const int64_t keys =
      std::min<int64_t>(c.window_tokens(), s) + compressed_keys_attended(c, s, ratio);
  return (keys + key_block - 1) / key_block * key_block;
}

void compressed_sparse_attention_ops(const schema::Transformer& t, const LayerShape& shape,
                                     int ratio, std::vector<LayerOp>* ops) {
  const schema::CompressedSparseAttention& c = t.compressed_sparse_attention();
  const int64_t s = shape.sequence_length, b = shape.micro_batch_size, tp = shape.tensor_parallel;
  const int64_t tokens = s * b, h = t.hidden_size(), a = t.num_attention_heads();
  const int64_t d = c.head_dim(), q = c.q_lora_rank();
  ops->push_back({K::kMatmul, "q down", tokens, q, h});
  ops->push_back({K::kMemory, "q norm", 0, 0, 0, 1, 0, 4.0 * tokens * q});
  // mla_up_proj checkpoints the query's up projection and head norm and the key-value head's
  // projection and norm together (DSv4HybridSelfAttention's qkv_up_proj_and_rope_apply).
  auto checkpointed = [&](LayerOp op) {
    op.recomputable = LayerOp::Recomputable::kLatentUp;
    ops->push_back(std::move(op));
  };
  checkpointed({K::kMatmul, "q up", tokens, a * d / tp, q});
  // Each head's query RMS-normed without a weight (_q_rms_norm, one compiled kernel): read and
  // write the 16-bit queries; backward read their gradient and the queries, write the gradient.
  const double query_bytes = 2.0 * tokens * a * d / tp;
  LayerOp head_norm{K::kMemory, "q head norm", 0, 0, 0, 1, 0, 2 * query_bytes};
  head_norm.backward_bytes = 3 * query_bytes;
  checkpointed(std::move(head_norm));
  checkpointed({K::kMatmul, "kv", tokens, d, h});
  checkpointed({K::kMemory, "kv norm", 0, 0, 0, 1, 0, 4.0 * tokens * d});
  if (ratio > 0) {
    compressor_ops("compressor", "compressor pooling", tokens, h, d, ratio, shape.inference, ops);
  }
  if (ratio == 4) {
    const int64_t heads = c.index_n_heads(), dim = c.index_head_dim();
    ops->push_back({K::kMatmul, "indexer q", tokens, heads * dim, q});
    ops->push_back({K::kMatmul, "indexer weights", tokens, heads, h});
    compressor_ops("indexer compressor", "indexer compressor pooling", tokens, h, dim, ratio,
                   shape.inference, ops);
    // Per sequence and index head, the s queries against the s / 4 compressed keys.
    LayerOp scores{K::kMatmul, "indexer scores", s, s / 4, dim, b * heads};
    scores.sixteen_bit = true;
    // Its gradients come from the sparse loss's own kernels below, run in the forward: none here.
    scores.backward_runs = 0;
    ops->push_back(std::move(scores));
    const int64_t picked = compressed_keys_attended(c, s, ratio);
    const double score_bytes = 4.0 * b * s * (s / 4);  // fp32, summed over the heads
    LayerOp topk{K::kMemory, "indexer top-k", 0, 0, 0, 1, 0, score_bytes + 4.0 * tokens * picked};
    topk.backward_bytes = 0;
    ops->push_back(std::move(topk));
    if (!shape.inference) {
      indexer_sparse_loss_ops(tokens, a / tp, d, heads, dim, picked, b * (s / 4), ops);
    }
  }
  LayerOp core{
      K::kAttention, "attention", s, sparse_attention_keys(c, s, ratio, shape.sparse_key_block), d,
      b * a / tp};
  core.flops = 4.0 * s * core.n * d * static_cast<double>(core.count);
  core.tile_rows = a / tp;
  core.fp8 = shape.fp8_attention;
  core.library = shape.attention_library;
  core.key_value_elements = static_cast<double>(tokens) * d;  // keys are the values
  ops->push_back(std::move(core));
  const int64_t groups = c.o_groups() / tp;
  // Training: a plain parameter contracted by torch.einsum, outside Transformer Engine, in 16 bits
  // whatever the job's precision. Inference: a quantized weight like the others (vLLM's
  // DeepseekV4MultiHeadLatentAttentionWrapper.forward: wo_a in FP8 through DeepGEMM's
  // fp8_einsum).
  LayerOp grouped{K::kMatmul,      "output groups",      tokens,
                  c.o_lora_rank(), a / c.o_groups() * d, groups};
  grouped.sixteen_bit = !shape.inference;
  ops->push_back(std::move(grouped));
  ops->push_back({K::kMatmul, "attention out", tokens, h, groups * c.o_lora_rank()});
}

void hyper_connection_mix_ops(const schema::Transformer& t, int64_t tokens,
                              std::vector<LayerOp>* ops) {
  const int64_t n = t.hyper_connections().streams(), h = t.hidden_size();
  LayerOp projection{K::kMatmul, "hyper-connection projection", tokens, n * n + 2 * n, n * h};
  projection.sixteen_bit = true;
  projection.tf32 = true;
  ops->push_back(std::move(projection));
  ops->push_back({K::kMemory, "hyper-connection mix", 0, 0, 0, 1, 0, 2.0 * (n + 1) * h * tokens});
}

LayerOp hyper_connection_gradient_sum_op(const schema::Transformer& t, int64_t tokens) {
  const int64_t n = t.hyper_connections().streams(), h = t.hidden_size();
  // The streams feed three kernels (the projection, the mix and the update's residual): autograd
  // sums their three gradients with two adds, each reading two and writing one.
  LayerOp sum{K::kMemory, "hyper-connection gradient sum", 0, 0, 0, 1, 0, 0};
  sum.backward_bytes = 2 * 3 * 2.0 * n * h * tokens;
  return sum;
}

LayerOp hyper_connection_update_op(const schema::Transformer& t, int64_t tokens) {
  const int64_t n = t.hyper_connections().streams(), h = t.hidden_size();
  return {K::kMemory, "hyper-connection update", 0, 0, 0, 1, 0, 2.0 * (2 * n + 1) * h * tokens};
}

}  // namespace clustersim
