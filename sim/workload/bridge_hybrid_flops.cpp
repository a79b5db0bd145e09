// Megatron-Bridge's hybrid-model FLOPs formula (bridge_hybrid_flops.h).
#include "sim/workload/bridge_hybrid_flops.h"

#include "sim/workload/mamba_layer.h"
#include "sim/workload/moe_layer.h"
#include "sim/workload/transformer_dimensions.h"

namespace clustersim {

TransformerFlops bridge_hybrid_flops(const schema::Transformer& t, int seq, int tensor_parallel) {
  const double h = t.hidden_size(), a = t.num_attention_heads(), k = kv_heads(t);
  const double d = head_dim(t), s = seq;
  const double matrices = gated_mlp(t) ? 3 : 2;
  const double projections = 4 * a * d * h + 4 * k * d * h, scores = 2 * a * d * s;
  const double d_in = 2 * h;
  const schema::Mamba2& m = t.mamba();
  const double mamba = 2 * h * (2 * d_in + 2.0 * m.num_groups() * m.state_dim() + m.num_heads()) +
                       7 * d_in * m.state_dim() + 2 * d_in * h;
  double moe = 0;
  if (t.has_moe()) {
    const double fe = static_cast<double>(expert_ffn_hidden_size(t));
    const double width = t.has_moe_latent_size() ? t.moe_latent_size() : h;
    moe = 2 * width * fe * matrices * t.moe().experts_per_token() +
          2 * h * fe * matrices * t.moe().num_shared_experts();
    if (t.has_moe_latent_size()) moe += 2 * 2 * h * t.moe_latent_size();
  }
  auto blocks = [&](HybridBlock block) {
    int n = hybrid_blocks_in(t, 0, t.num_layers(), block);
    for (HybridBlock b : multi_token_prediction_blocks(t)) {
      if (b == block) n += t.multi_token_prediction_layers();
    }
    return static_cast<double>(n);
  };
  const double attention_layers = blocks(HybridBlock::kAttention);
  const double sum = attention_layers * (projections + scores) +
                     blocks(HybridBlock::kMamba) * mamba +
                     blocks(HybridBlock::kMlp) * 2 * h * t.ffn_hidden_size() * matrices +
                     blocks(HybridBlock::kExperts) * moe;
  const double layers = t.num_layers();
  const int64_t multiple = int64_t{128} * tensor_parallel;
  const int64_t padded_vocab = (t.vocab_size() + multiple - 1) / multiple * multiple;
  TransformerFlops flops;
  flops.num_layers = t.num_layers();
  flops.layer_forward_per_token = sum / layers;
  flops.attention_forward_per_token = attention_layers * scores / layers;
  flops.logits_forward_per_token =
      2 * h * static_cast<double>(padded_vocab) * (1 + t.multi_token_prediction_layers());
  return flops;
}

}  // namespace clustersim
