// The optional dimensions of a transformer, defaulted.
#include "sim/workload/transformer_dimensions.h"

namespace clustersim {

int64_t kv_heads(const schema::Transformer& t) {
  return t.has_num_kv_heads() ? t.num_kv_heads() : t.num_attention_heads();
}

int64_t head_dim(const schema::Transformer& t) {
  return t.has_head_dim() ? t.head_dim() : t.hidden_size() / t.num_attention_heads();
}

bool gated_mlp(const schema::Transformer& t) {
  return t.mlp_activation() == schema::SWIGLU || t.mlp_activation() == schema::GEGLU;
}

double activation_bytes_per_element(const schema::Transformer& t) {
  constexpr double kSixteenBit = 2;
  if (gated_mlp(t)) return 3 * kSixteenBit;
  const double kernels = t.mlp_activation() == schema::SQUARED_RELU ? 2 : 1;
  return kernels * 2 * kSixteenBit;
}

std::array<std::array<double, 2>, 4> linear_weight_shapes(const schema::Transformer& t) {
  const double h = t.hidden_size(), a = t.num_attention_heads();
  const double kv = kv_heads(t), d = head_dim(t), f = t.ffn_hidden_size();
  const double up = gated_mlp(t) ? 2 * f : f;
  return {{{h, (a + 2 * kv) * d}, {a * d, h}, {h, up}, {f, h}}};
}

}  // namespace clustersim
