// Megatron-Bridge's DeepSeek V4 FLOPs formula (bridge_dsv4_flops.h).
#include "sim/workload/bridge_dsv4_flops.h"

#include <algorithm>

#include "sim/workload/moe_layer.h"
#include "sim/workload/transformer_dimensions.h"

namespace clustersim {

TransformerFlops bridge_dsv4_flops(const schema::Transformer& t, int seq, int tensor_parallel) {
  const schema::CompressedSparseAttention& c = t.compressed_sparse_attention();
  const double h = t.hidden_size(), a = t.num_attention_heads(), v = c.head_dim();
  const double q = c.q_lora_rank(), o = c.o_lora_rank(), w = c.window_tokens(), s = seq;
  const double modules = t.multi_token_prediction_layers();
  const double layers = t.num_layers() + modules;
  double n0 = modules, n4 = 0, n128 = 0;
  for (int ratio : c.compress_ratios()) {
    (ratio == 0 ? n0 : ratio == 4 ? n4 : n128) += 1;
  }
  const double i = c.index_n_heads(), e = c.index_head_dim();
  const double topk = std::min<double>(c.index_topk(), seq / 4);
  const double selected = topk * (1 - topk * 4 / (2 * s));
  const double projections = layers * (q * (h + a * v + 1) + h * v + v + a * v * o +
                                        c.o_groups() * o * h);
  const double attention = n0 * a * w * v * 2 + n4 * a * (w + selected) * v * 2 +
                           n128 * a * w * v * 2;
  const double compressors = n4 * h * 2 * v * 2 + n128 * h * v * 2;
  const double indexer = n4 * (h * 2 * e * 2 + q * i * e + h * i);
  const double quadratic = 2 * s * (n128 * a * v / 128 + n4 * i * e / 4);
  const double fe = static_cast<double>(expert_ffn_hidden_size(t));
  const double experts =
      layers * 2 * h * fe * (gated_mlp(t) ? 3 : 2) *
      (t.moe().experts_per_token() + t.moe().num_shared_experts());
  const double module_projections = 2 * modules * (3 * h + 2 * h * h);
  const int64_t multiple = int64_t{128} * tensor_parallel;
  const int64_t padded_vocab = (t.vocab_size() + multiple - 1) / multiple * multiple;
  TransformerFlops flops;
  flops.num_layers = t.num_layers();
  flops.layer_forward_per_token =
      (2 * (projections + attention + compressors + indexer) + quadratic + experts +
       module_projections) /
      t.num_layers();
  flops.attention_forward_per_token = quadratic / t.num_layers();
  flops.logits_forward_per_token = 2 * h * static_cast<double>(padded_vocab) * (1 + modules);
  return flops;
}

}  // namespace clustersim
