// Parameter counting for transformers (from their shape) and CNNs (from their layer list).
//
// Transformer layer, with h = hidden, d = head_dim, a = heads, k = kv heads, f = ffn size:
//   attention  h*a*d (Q) + 2*h*k*d (K, V) + a*d*h (output)   [+ a*d + 2*k*d + h biases]
//              latent attention: see MultiHeadLatentAttention in model.proto
//              [+ 2d QK norms, + a sinks]
//   MLP        2*h*f, gated 3*h*f                              [+ f (x2 gated) + h biases]
//   MoE        (experts + shared) * MLP of the expert width + h*experts router [+ experts bias]
//   norms      2 per layer: 2h each for LayerNorm, h for RMSNorm
//   DeepSeek V4 compressed sparse attention and hyper-connections: see CompressedSparseAttention
//              and HyperConnections in model.proto (each layer's compressor and indexer by its
//              compress ratio)
//   hybrid     one norm and one block per pattern letter: Mamba-2 mixer (mamba_layer.h),
//              attention, MLP or MoE (LatentMoE: + 2 h latent, experts at the latent width)
// Checks: Llama-2-7B gives 6,738,415,616 and BERT-large 335,141,888 (+ heads), as published.
#include "sim/workload/parameter_count.h"

#include <algorithm>

#include "sim/workload/cnn_shape.h"
#include "sim/workload/mamba_layer.h"
#include "sim/workload/moe_layer.h"
#include "sim/workload/transformer_dimensions.h"

namespace clustersim {
namespace {

int64_t norm_parameters(const schema::Transformer& t) {
  return t.normalization() == schema::RMSNORM ? t.hidden_size() : 2 * int64_t{t.hidden_size()};
}

// An MLP of width f reading and writing vectors of h.
int64_t mlp_parameters(const schema::Transformer& t, int64_t f, int64_t h) {
  const int64_t matrices = gated_mlp(t) ? 3 : 2;
  const int64_t bias = t.linear_bias() ? (matrices - 1) * f + h : 0;
  return matrices * h * f + bias;
}

int64_t latent_attention_parameters(const schema::Transformer& t) {
  const schema::MultiHeadLatentAttention& m = t.latent_attention();
  const int64_t h = t.hidden_size(), a = t.num_attention_heads();
  const int64_t qk = int64_t{m.qk_nope_head_dim()} + m.qk_rope_head_dim();
  const int64_t q = m.has_q_lora_rank() ? h * m.q_lora_rank() + m.q_lora_rank() +
                                              int64_t{m.q_lora_rank()} * a * qk
                                        : h * a * qk;
  const int64_t c = m.kv_lora_rank();
  const int64_t kv = h * (c + m.qk_rope_head_dim()) + c +
                     c * a * (int64_t{m.qk_nope_head_dim()} + m.v_head_dim());
  return q + kv + a * m.v_head_dim() * h;
}

// DeepSeek V4's attention of a window-only layer: query bottleneck, the key-value head, the
// grouped low-rank output.
int64_t compressed_sparse_attention_parameters(const schema::Transformer& t) {
  const schema::CompressedSparseAttention& c = t.compressed_sparse_attention();
  const int64_t h = t.hidden_size(), a = t.num_attention_heads();
  const int64_t q = c.q_lora_rank(), d = c.head_dim();
  const int64_t grouped = int64_t{c.o_groups()} * c.o_lora_rank();
  return h * q + q + q * a * d + h * d + d + a * d / c.o_groups() * grouped + grouped * h;
}

// A compressor pooling `ratio` tokens into entries of `dim`: wkv and wgate, the position bias, the
// norm. Ratio-4 pools overlap their neighbours' (Megatron-Core's Compressor: coff 2).
int64_t compressor_parameters(int64_t h, int ratio, int64_t dim) {
  const int64_t coff = ratio == 4 ? 2 : 1;
  return 2 * h * coff * dim + ratio * coff * dim + dim;
}

// What attending to compressed keys adds to layer `layer`: its compressor, and in a ratio-4 layer
// the indexer (query and weight projections, its own compressor).
int64_t compressed_keys_parameters(const schema::Transformer& t, int layer) {
  if (!t.has_compressed_sparse_attention()) return 0;
  const schema::CompressedSparseAttention& c = t.compressed_sparse_attention();
  const int ratio = c.compress_ratios(layer);
  if (ratio == 0) return 0;
  const int64_t h = t.hidden_size();
  int64_t out = compressor_parameters(h, ratio, c.head_dim());
  if (ratio == 4) {
    out += int64_t{c.q_lora_rank()} * c.index_n_heads() * c.index_head_dim() +
           h * c.index_n_heads() + compressor_parameters(h, ratio, c.index_head_dim());
  }
  return out;
}

int64_t compressed_keys_parameters(const schema::Transformer& t, int first, int count) {
  int64_t out = 0;
  for (int layer = first; layer < first + count; ++layer) {
    out += compressed_keys_parameters(t, layer);
  }
  return out;
}

// The hyper-connections of one layer (before its attention and before its MLP), and the
// contraction of the streams to one at the end of the model (and of each multi-token-prediction
// module).
int64_t hyper_connection_layer_parameters(const schema::Transformer& t) {
  if (!t.has_hyper_connections()) return 0;
  const int64_t n = t.hyper_connections().streams(), h = t.hidden_size();
  const int64_t mixes = n * n + 2 * n;
  return 2 * (n * h * mixes + mixes + 3);
}

int64_t hyper_connection_contraction_parameters(const schema::Transformer& t) {
  if (!t.has_hyper_connections()) return 0;
  const int64_t n = t.hyper_connections().streams();
  return n * n * t.hidden_size() + n + 1;
}

int64_t attention_parameters(const schema::Transformer& t) {
  const int64_t h = t.hidden_size(), a = t.num_attention_heads();
  const int64_t sinks = t.attention_sinks() ? a : 0;
  if (t.has_latent_attention()) return latent_attention_parameters(t) + sinks;
  if (t.has_compressed_sparse_attention()) {
    return compressed_sparse_attention_parameters(t) + sinks;
  }
  const int64_t k = kv_heads(t);
  const int64_t d = head_dim(t);
  const int64_t qkv_bias = a * d + 2 * k * d;
  const int64_t bias = t.linear_bias() ? qkv_bias + h : t.qkv_bias() ? qkv_bias : 0;
  const int64_t qk_norm = t.qk_norm() ? 2 * d : 0;
  return 2 * h * a * d + 2 * h * k * d + bias + qk_norm + sinks;
}

// One MoE layer's MLP part: all experts and the router, and what one token of it uses.
struct MoeParameters {
  int64_t total = 0, active = 0, routed = 0;
};

MoeParameters moe_parameters(const schema::Transformer& t) {
  const schema::MixtureOfExperts& moe = t.moe();
  const int64_t h = t.hidden_size(), f = expert_ffn_hidden_size(t);
  const int64_t expert = mlp_parameters(t, f, expert_input_width(t));
  const int64_t router = h * moe.num_experts() + (moe.router_bias() ? moe.num_experts() : 0);
  const int64_t shared = moe.num_shared_experts() * mlp_parameters(t, f, h);
  const int64_t latent = t.has_moe_latent_size() ? 2 * h * t.moe_latent_size() : 0;
  const int64_t routed = moe.num_experts() * expert;
  return {routed + shared + router + latent,
          moe.experts_per_token() * expert + shared + router + latent, routed};
}

// One layer of a hybrid pattern: its pre-norm and its block.
LayerParameters hybrid_layer_parameters(const schema::Transformer& t, HybridBlock block) {
  const auto norm = static_cast<double>(norm_parameters(t));
  switch (block) {
    case HybridBlock::kMamba:
      return {norm + static_cast<double>(mamba_mixer_parameters(t)), 0};
    case HybridBlock::kAttention:
      return {norm + static_cast<double>(attention_parameters(t)), 0};
    case HybridBlock::kMlp:
      return {norm + static_cast<double>(mlp_parameters(t, t.ffn_hidden_size(), t.hidden_size())),
              0};
    case HybridBlock::kExperts:
      break;
  }
  const MoeParameters moe = moe_parameters(t);
  return {norm + static_cast<double>(moe.total), static_cast<double>(moe.routed)};
}

// The transformer layers of one multi-token-prediction module of a hybrid model.
LayerParameters hybrid_module_layer_parameters(const schema::Transformer& t) {
  LayerParameters out;
  for (HybridBlock block : multi_token_prediction_blocks(t)) {
    out += hybrid_layer_parameters(t, block);
  }
  return out;
}

int64_t cnn_parameters(const schema::Cnn& cnn) {
  CnnShape shape{cnn.input_channels(), cnn.input_height(), cnn.input_width()};
  int64_t total = 0;
  std::string unused;
  for (const schema::CnnLayer& layer : cnn.layer()) {
    total += cnn_layer_parameters(layer, shape);
    shape = *cnn_layer_output(layer, shape, &unused);
  }
  return total;
}

}  // namespace

TransformerParameters transformer_parameters(const schema::Transformer& t) {
  const int64_t h = t.hidden_size(), v = t.vocab_size();
  TransformerParameters p;
  p.embedding = v * h;
  if (t.position_embedding() == schema::LEARNED)
    p.embedding += int64_t{t.max_sequence_length()} * h;
  p.embedding += int64_t{t.token_type_vocab_size()} * h;
  if (t.kind() == schema::ENCODER) p.embedding += norm_parameters(t);  // BERT embedding LayerNorm

  const int64_t attention =
      attention_parameters(t) + 2 * norm_parameters(t) + hyper_connection_layer_parameters(t);
  const int64_t dense_layer = attention + mlp_parameters(t, t.ffn_hidden_size(), h);
  const int moe_layers = moe_layer_count(t);
  p.per_layer = dense_layer;
  p.active_per_layer = dense_layer;
  p.dense_per_layer = dense_layer;
  if (t.has_moe()) {
    const MoeParameters moe = moe_parameters(t);
    p.per_layer = attention + moe.total;
    p.active_per_layer = attention + moe.active;
    p.routed_experts_per_layer = moe.routed;
  }
  const int dense_layers = t.num_layers() - moe_layers;
  p.layers = dense_layers * dense_layer + moe_layers * (moe_layers > 0 ? p.per_layer : 0);
  p.active_layers =
      dense_layers * dense_layer + moe_layers * (moe_layers > 0 ? p.active_per_layer : 0);
  const int64_t compressed_keys = compressed_keys_parameters(t, 0, t.num_layers());
  p.layers += compressed_keys;
  p.active_layers += compressed_keys;
  if (t.has_hybrid_layer_pattern()) {
    // One norm and one block a layer; per_layer stays an 'E' layer's.
    const int64_t norm = norm_parameters(t);
    const int64_t moe = t.has_moe() ? moe_parameters(t).total : 0;
    const int64_t moe_active = t.has_moe() ? moe_parameters(t).active : 0;
    p.per_layer = norm + moe;
    p.active_per_layer = norm + moe_active;
    p.dense_per_layer = norm + mlp_parameters(t, t.ffn_hidden_size(), h);
    p.layers = static_cast<int64_t>(layer_parameters(t, 0, t.num_layers()).all);
    p.active_layers = p.layers + moe_layers * (moe_active - moe);
  }
  // Multi-token prediction: a layer of the last kind (a hybrid model: its module pattern's
  // layers), hidden and embedding norms, the 2h x h projection and its own final norm; shared
  // modules once. A module's layer attends within the window only (no compressed keys); with
  // hyper-connections it contracts its streams itself.
  const int64_t module_layers = t.has_hybrid_layer_pattern()
                                    ? static_cast<int64_t>(hybrid_module_layer_parameters(t).all)
                                    : p.per_layer;
  const int64_t mtp = module_layers + 3 * norm_parameters(t) + 2 * h * h +
                      hyper_connection_contraction_parameters(t);
  p.multi_token_prediction = multi_token_prediction_weight_copies(t) * mtp;

  if (t.kind() == schema::DECODER) p.head += norm_parameters(t);  // final norm (pre-norm models)
  p.head += hyper_connection_contraction_parameters(t);
  if (!t.tied_embeddings()) p.head += v * h;
  if (t.pretraining_heads()) {
    // Pooler (h*h + h), masked-LM transform (h*h + h + norm) and output bias (v), NSP (2h + 2).
    p.head += (h * h + h) + (h * h + h + norm_parameters(t)) + v + (2 * h + 2);
  }
  return p;
}

LayerParameters layer_parameters(const schema::Transformer& t, int first, int count) {
  LayerParameters out;
  if (!t.has_hybrid_layer_pattern()) {
    const TransformerParameters p = transformer_parameters(t);
    const int moe = moe_layers_in(t, first, count);
    out.all = static_cast<double>(p.dense_per_layer) * (count - moe) +
              static_cast<double>(p.per_layer) * moe;
    out.routed = static_cast<double>(p.routed_experts_per_layer) * moe;
    out.all += static_cast<double>(compressed_keys_parameters(t, first, count));
    return out;
  }
  for (int layer = first; layer < first + count; ++layer) {
    out += hybrid_layer_parameters(t, hybrid_block(t, layer));
  }
  return out;
}

int multi_token_prediction_weight_copies(const schema::Transformer& t) {
  return t.multi_token_prediction_shared() ? std::min(1, t.multi_token_prediction_layers())
                                           : t.multi_token_prediction_layers();
}

MultiTokenPredictionParameters multi_token_prediction_parameters(
    const schema::Transformer& t, const TransformerParameters& params) {
  const int copies = multi_token_prediction_weight_copies(t);
  LayerParameters layers = t.has_hybrid_layer_pattern()
                               ? hybrid_module_layer_parameters(t)
                               : layer_parameters(t, t.num_layers() - 1, 1);
  // The module's layer is of the last layer's kind but attends within the window only.
  layers.all -= static_cast<double>(compressed_keys_parameters(t, t.num_layers() - 1));
  MultiTokenPredictionParameters out;
  for (int m = 0; m < copies; ++m) out.layers += layers;
  out.other = static_cast<double>(params.multi_token_prediction) - layers.all * copies;
  return out;
}

int64_t parameter_count(const schema::Model& model) {
  if (model.has_transformer()) return transformer_parameters(model.transformer()).total();
  return cnn_parameters(model.cnn());
}

int64_t active_parameter_count(const schema::Model& model, bool with_embedding) {
  if (!model.has_transformer()) return parameter_count(model);
  const TransformerParameters p = transformer_parameters(model.transformer());
  return p.active() - (with_embedding ? 0 : p.embedding);
}

}  // namespace clustersim
