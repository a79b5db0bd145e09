// Layer kinds and expert widths of mixture-of-experts transformers (schema: MixtureOfExperts).
#include "sim/workload/moe_layer.h"

#include <algorithm>

#include "sim/workload/mamba_layer.h"

namespace clustersim {

int64_t expert_ffn_hidden_size(const schema::Transformer& t) {
  return t.has_moe() && t.moe().has_expert_ffn_hidden_size() ? t.moe().expert_ffn_hidden_size()
                                                             : t.ffn_hidden_size();
}

int moe_layer_count(const schema::Transformer& t) { return moe_layers_in(t, 0, t.num_layers()); }

int moe_layers_in(const schema::Transformer& t, int first, int count) {
  if (!t.has_moe()) return 0;
  if (t.has_hybrid_layer_pattern()) return hybrid_blocks_in(t, first, count, HybridBlock::kExperts);
  return std::max(0, first + count - std::max(first, t.moe().first_dense_layers()));
}

int64_t expert_input_width(const schema::Transformer& t) {
  return t.has_moe_latent_size() ? t.moe_latent_size() : t.hidden_size();
}

}  // namespace clustersim
