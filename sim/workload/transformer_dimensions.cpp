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

}  // namespace clustersim
