// Parameter counting for transformers (from their shape) and CNNs (from their layer list).
//
// Transformer layer, with h = hidden, d = head_dim, a = heads, k = kv heads, f = ffn size:
//   attention  h*a*d (Q) + 2*h*k*d (K, V) + a*d*h (output)   [+ a*d + 2*k*d + h biases]
//   MLP        2*h*f, gated 3*h*f                              [+ f (x2 gated) + h biases]
//   MoE        experts * MLP + h*experts router
//   norms      2 per layer: 2h each for LayerNorm, h for RMSNorm
// Checks: Llama-2-7B gives 6,738,415,616 and BERT-large 335,141,888 (+ heads), as published.
#include "sim/workload/parameter_count.h"

#include "sim/workload/cnn_shape.h"

namespace clustersim {
namespace {

int64_t norm_parameters(const schema::Transformer& t) {
  return t.normalization() == schema::RMSNORM ? t.hidden_size() : 2 * int64_t{t.hidden_size()};
}

bool gated(const schema::Transformer& t) {
  return t.mlp_activation() == schema::SWIGLU || t.mlp_activation() == schema::GEGLU;
}

int64_t mlp_parameters(const schema::Transformer& t) {
  const int64_t h = t.hidden_size(), f = t.ffn_hidden_size();
  const int64_t matrices = gated(t) ? 3 : 2;
  const int64_t bias = t.linear_bias() ? (matrices - 1) * f + h : 0;
  return matrices * h * f + bias;
}

int64_t attention_parameters(const schema::Transformer& t) {
  const int64_t h = t.hidden_size(), a = t.num_attention_heads();
  const int64_t k = t.has_num_kv_heads() ? t.num_kv_heads() : a;
  const int64_t d = t.has_head_dim() ? t.head_dim() : h / a;
  const int64_t bias = t.linear_bias() ? a * d + 2 * k * d + h : 0;
  return 2 * h * a * d + 2 * h * k * d + bias;
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

  const int64_t mlp = mlp_parameters(t);
  const int64_t attention = attention_parameters(t) + 2 * norm_parameters(t);
  if (t.has_moe()) {
    p.per_layer = attention + t.moe().num_experts() * mlp + h * t.moe().num_experts();
    p.active_per_layer = attention + t.moe().experts_per_token() * mlp + h * t.moe().num_experts();
  } else {
    p.per_layer = attention + mlp;
    p.active_per_layer = p.per_layer;
  }
  p.layers = p.per_layer * t.num_layers();

  if (t.kind() == schema::DECODER) p.head += norm_parameters(t);  // final norm (pre-norm models)
  if (!t.tied_embeddings()) p.head += v * h;
  if (t.pretraining_heads()) {
    // Pooler (h*h + h), masked-LM transform (h*h + h + norm) and output bias (v), NSP (2h + 2).
    p.head += (h * h + h) + (h * h + h + norm_parameters(t)) + v + (2 * h + 2);
  }
  return p;
}

int64_t parameter_count(const schema::Model& model) {
  if (model.has_transformer()) return transformer_parameters(model.transformer()).total();
  return cnn_parameters(model.cnn());
}

}  // namespace clustersim
