// Layer kinds and expert widths of mixture-of-experts transformers (schema: MixtureOfExperts).
#include "sim/workload/moe_layer.h"

#include <algorithm>

namespace clustersim {

int64_t expert_ffn_hidden_size(const schema::Transformer& t) {
  return t.has_moe() && t.moe().has_expert_ffn_hidden_size() ? t.moe().expert_ffn_hidden_size()
                                                             : t.ffn_hidden_size();
}

int moe_layer_count(const schema::Transformer& t) {
  return t.has_moe() ? t.num_layers() - t.moe().first_dense_layers() : 0;
}

int moe_layers_in(const schema::Transformer& t, int first, int count) {
  if (!t.has_moe()) return 0;
  return std::max(0, first + count - std::max(first, t.moe().first_dense_layers()));
}

int64_t experts_run_per_token(const schema::Transformer& t) {
  return t.has_moe() ? int64_t{t.moe().experts_per_token()} + t.moe().num_shared_experts() : 1;
}

}  // namespace clustersim
