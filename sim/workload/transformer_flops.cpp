// Per-token FLOPs of transformer layers from their shapes.
//
// Per token and layer, with h hidden, a heads, k KV heads, d head dim, f FFN size, s sequence:
//   QKV projection   2 h (a d + 2 k d)        attention scores + values   2 x 2 s' a d
//                                              (s' keys per query: s, or (s + 1) / 2 causal;
//                                              a sliding window of w: (w (w + 1) / 2 + (s - w) w) /
//                                              s; chunks of w: chunked_causal_pairs / s)
//   output proj      2 a d h                  MLP   2 h f x (3 gated | 2), x experts per token
//   (FlopsFormula::kBridgeV03: s/2 keys whatever the window, a non-SiLU gate's MLP as 2 matrices,
//   no router)
//   MoE router       2 h E    (MoE layers; the MLP at the expert width x routed + shared experts;
//                             dense first layers as dense: the layer figure is the mean)
//   hybrid layers    one block each, the layer figure their mean: attention (projections and
//                    scores), MLP, MoE (LatentMoE: routed experts at the latent width l, + 2 x 2 h
//                    l projections), Mamba-2: 2 h (d_inner + conv + heads) in_proj, 2 d_inner h
//                    out_proj and the SSD scan's 2 Q N G + heads (2 Q P + 4 N P) (mamba_layer.h)
#include "sim/workload/transformer_flops.h"

#include "sim/workload/layer_ops.h"
#include "sim/workload/mamba_layer.h"
#include "sim/workload/moe_layer.h"
#include "sim/workload/transformer_dimensions.h"

namespace clustersim {

TransformerFlops transformer_flops(const schema::Transformer& t, int seq, AttentionCount count,
                                   FlopsFormula formula) {
  const bool bridge_v03 = formula == FlopsFormula::kBridgeV03;
  const double h = t.hidden_size(), a = t.num_attention_heads();
  const double k = kv_heads(t);
  const double d = head_dim(t);
  const double f = t.ffn_hidden_size();
  const bool silu_gate = t.mlp_activation() == schema::SWIGLU && !t.has_glu_gate_sigmoid_scale();
  const bool gated = bridge_v03 ? silu_gate : gated_mlp(t);
  double mlp = 2 * h * f * (gated ? 3 : 2);
  double moe = 0;
  if (t.has_moe()) {
    // MoE layers: the routed and shared experts of their width and the router; dense first
    // layers: the dense MLP. The mean over the layers.
    const double matrices = gated ? 3 : 2, fe = static_cast<double>(expert_ffn_hidden_size(t));
    const double routed = 2 * static_cast<double>(expert_input_width(t)) * fe * matrices;
    moe = routed * t.moe().experts_per_token() +
          2 * h * fe * matrices * t.moe().num_shared_experts() +
          (bridge_v03 ? 0 : 2 * h * t.moe().num_experts());
    if (t.has_moe_latent_size()) moe += 2 * 2 * h * t.moe_latent_size();
    const double layers = t.num_layers(), moe_layers = moe_layer_count(t);
    mlp = moe_layers == layers ? moe : (mlp * (layers - moe_layers) + moe * moe_layers) / layers;
  }
  TransformerFlops flops;
  const bool causal = count == AttentionCount::kCausal && t.kind() == schema::DECODER;
  double keys = causal ? (static_cast<double>(seq) + 1) / 2 : static_cast<double>(seq);
  if (bridge_v03) keys = static_cast<double>(seq) / 2;
  if (causal && !bridge_v03 && t.has_sliding_window() && t.sliding_window().window_tokens() < seq) {
    // Windowed layers' pairs over their s queries; the mean over the layers.
    const double s = seq;
    const double windowed = windowed_layers_in(t, 0, t.num_layers(), LayerKind::kDense) +
                            windowed_layers_in(t, 0, t.num_layers(), LayerKind::kExperts);
    const double band = window_pairs(t, s) / s;
    keys = (keys * (t.num_layers() - windowed) + band * windowed) / t.num_layers();
  }
  flops.attention_forward_per_token = 2 * 2 * keys * a * d;
  flops.layer_forward_per_token =
      2 * h * (a * d + 2 * k * d) + flops.attention_forward_per_token + 2 * a * d * h + mlp;
  if (t.has_latent_attention()) {
    // Latent attention: down and up projections of queries and the key/value latent, query/key
    // heads of nope + rope, value heads of v_head_dim.
    const schema::MultiHeadLatentAttention& m = t.latent_attention();
    const double nope = m.qk_nope_head_dim(), rope = m.qk_rope_head_dim(), v = m.v_head_dim();
    const double kv_lora = m.kv_lora_rank();
    const double q = m.has_q_lora_rank() ? h * m.q_lora_rank() + m.q_lora_rank() * a * (nope + rope)
                                         : h * a * (nope + rope);
    const double projections =
        2 * (q + h * (kv_lora + rope) + kv_lora * a * (nope + v) + a * v * h);
    flops.attention_forward_per_token = 2 * keys * a * (nope + rope + v);
    flops.layer_forward_per_token = projections + flops.attention_forward_per_token + mlp;
  }
  if (t.has_hybrid_layer_pattern()) {
    const double layers = t.num_layers();
    const double attention_layers = hybrid_blocks_in(t, 0, t.num_layers(), HybridBlock::kAttention);
    double sum = attention_layers *
                 (2 * h * (a * d + 2 * k * d) + flops.attention_forward_per_token + 2 * a * d * h);
    sum += hybrid_blocks_in(t, 0, t.num_layers(), HybridBlock::kMlp) * 2 * h * f * (gated ? 3 : 2);
    sum += hybrid_blocks_in(t, 0, t.num_layers(), HybridBlock::kExperts) * moe;
    const int mamba_layers = hybrid_blocks_in(t, 0, t.num_layers(), HybridBlock::kMamba);
    if (mamba_layers > 0) {
      const double inner = mamba_inner(t), heads = t.mamba().num_heads();
      double scan = 0;  // per token: the scan's matmuls over one sequence
      for (const LayerOp& op : ssd_scan_ops(t, 1, seq, t.mamba().num_heads(), true)) {
        scan += 2.0 * op.m * op.n * op.k * op.count;
      }
      sum += mamba_layers *
             (2 * h * (inner + mamba_conv_channels(t) + heads) + 2 * inner * h + scan / seq);
    }
    flops.attention_forward_per_token *= attention_layers / layers;
    flops.layer_forward_per_token = sum / layers;
  }
  flops.logits_forward_per_token = 2 * h * t.vocab_size();
  flops.num_layers = t.num_layers();
  return flops;
}

}  // namespace clustersim
