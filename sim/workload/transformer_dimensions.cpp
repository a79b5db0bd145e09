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

}  // namespace clustersim
