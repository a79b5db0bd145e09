// Layer kinds and expert widths of mixture-of-experts transformers (schema: MixtureOfExperts).
#include "sim/workload/moe_layer.h"

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
  int experts = 0;
  for (int layer = first; layer < first + count; ++layer) experts += has_experts(t, layer);
  return experts;
}

bool has_experts(const schema::Transformer& t, int layer) {
  if (!t.has_moe()) return false;
  const int interval = t.moe().has_layer_interval() ? t.moe().layer_interval() : 1;
  return layer >= t.moe().first_dense_layers() && (layer + 1) % interval == 0;
}

int64_t expert_input_width(const schema::Transformer& t) {
  return t.has_moe_latent_size() ? t.moe_latent_size() : t.hidden_size();
}

}  // namespace clustersim
