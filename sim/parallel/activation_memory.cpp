// Stored activations of a transformer layer, tensor by tensor (T = s b tokens, 2 bytes per
// element, dropout masks 1 byte; "boundary" tensors have h per token and are replicated across
// tensor-parallel ranks unless sequence parallelism shards them, the rest are split by heads or by
// the FFN dimension over t ranks):
//   attention   QKV input 2Th (boundary); Q and K 2T(a+k)d; softmax output 2as^2b, its dropout
//               mask as^2b and dropout output 2as^2b (with dropout; else the softmax output only);
//               V 2Tkd; output-projection input 2Tad; output dropout mask Th (boundary)
//               flash attention: instead of the s x s tensors, a log-sum-exp per head, 4Ta bytes
//   MLP         input 2Th (boundary); GELU: activation input and output 2Tf each;
//               gated: gate and up outputs 2Tf each and their product 2Tf (the fused
//               SwiGLU/GeGLU kernel recomputes the activation in its backward);
//               output dropout mask Th (boundary); the activation's input (GELU's, the gate
//               and up outputs) Tf each in FP8 under fp8_activation_input_store
//   norms       the two norms' inputs 2Th each (boundary)
//   FP8 GEMMs   the QKV and MLP inputs Th each (boundary), the projection input Tad and the
//               MLP-down input Tf (1 byte instead of 2)
//   LoRA        a frozen linear layer's input not kept (no weight gradient), a targeted one's in
//               16 bits for its adapter (saved_gemm_inputs)
//   latent      (multi-head latent attention) Q, K 2Ta(nope+rope) each, V and the projection
//               input Tav, the query and key/value latents T(q_lora + kv_lora) on every rank;
//               Q, K and V not when the up projections rerun (mla_up_proj recomputation)
//   compressed  (compressed sparse attention) Q 2Tad (not under mla_up_proj recomputation), the
//               key-value head 2Td and the query latent T q_lora on every rank, the grouped
//               output's input Tad and the output projection's T g o (the compressors' and the
//               indexer's tensors, T / ratio entries or fewer, not counted)
//   streams     (hyper-connections) each block's mix keeps the residual's streams, 2 T n h each
//               (boundary)
//   experts     (a MoE layer) the MLP terms at the expert width once per routed copy (k per
//               token), the permuted 16-bit (FP8: 1-byte) expert inputs k Th x ETP, shared
//               experts' MLP terms at their width
//   hybrid      (a hybrid pattern's layer) one norm input and one block's: the attention's, the
//               MLP's or the experts' terms above (LatentMoE: permuted inputs of the latent
//               width, and the latent up projection's input T l), or a Mamba-2 mixer's: the
//               in_proj input Th (boundary), its z x B C dt output 2T(d_inner + conv + heads),
//               the ungated scan output 2T d_inner, the norm input 2T d_inner and the out_proj
//               input T d_inner (the scan saves no states and no conv1d output: its backward
//               recomputes them)
// For GPT (a = k, d = h/a, f = 4h, dropout): boundary 10Th, split 24Th, s x s 5as^2b.
#include "sim/parallel/activation_memory.h"

#include "sim/workload/fp8_casts.h"
#include "sim/workload/lora.h"
#include "sim/workload/moe_layer.h"
#include "sim/workload/transformer_dimensions.h"

namespace clustersim {
namespace {

// Bytes per MLP row (per token, per FFN column) of the activation's input: GELU's one tensor, a
// gated MLP's gate and up outputs.
double activation_input_per_row(const schema::Transformer& t, const LayerActivationSpec& spec) {
  return (gated_mlp(t) ? 2 : 1) * spec.activation_input_bytes;
}

}  // namespace

SavedGemmInputs saved_gemm_inputs(const schema::TrainingJob& job) {
  const double bytes = gemm_input_bytes(job);
  SavedGemmInputs in{bytes, bytes, bytes, bytes};
  if (!job.has_lora()) return in;
  const auto kept = [&](schema::LoraTarget target) {
    return lora_targets(job.lora(), target) ? 2.0 : 0.0;
  };
  return {kept(schema::LINEAR_QKV), kept(schema::LINEAR_PROJ), kept(schema::LINEAR_FC1),
          kept(schema::LINEAR_FC2)};
}

double layer_activation_bytes(const schema::Transformer& t, const LayerActivationSpec& spec) {
  const double s = spec.sequence_length, b = spec.micro_batch_size, tp = spec.tensor_parallel;
  const double tokens = s * b / spec.context_parallel, h = t.hidden_size();
  const double a = t.num_attention_heads();
  const double k = kv_heads(t);
  const double d = head_dim(t);
  const bool experts =
      spec.hybrid ? spec.block == HybridBlock::kExperts : spec.experts && t.has_moe();
  const double f = experts ? expert_ffn_hidden_size(t) : t.ffn_hidden_size();
  const bool dropout = t.dropout();
  const double boundary_shard = spec.sequence_parallel ? tp : 1;

  if (spec.recompute == schema::RECOMPUTE_FULL) return 2 * tokens * h / boundary_shard;

  const double mask = dropout ? 1 : 0;
  const SavedGemmInputs& in = spec.gemm_inputs;                   // bytes per element
  double boundary = in.qkv * tokens * h + mask * tokens * h       // attention input, output mask
                    + in.mlp_up * tokens * h + mask * tokens * h  // MLP input, output mask
                    + 2 * 2 * tokens * h;                         // norm inputs
  // Hyper-connections: each block's mix keeps the residual's streams, `streams` times h.
  if (t.has_hyper_connections()) boundary += 2 * 2 * tokens * h * t.hyper_connections().streams();
  if (spec.hybrid && spec.block == HybridBlock::kMamba) {
    const double inner = mamba_inner(t), conv = mamba_conv_channels(t);
    // The combined conv1d-scan function keeps its input (z x B C dt) and the ungated scan output
    // and reruns the conv (mamba_ssm ssd_combined.py MambaSplitConv1dScanCombinedFn); the norm
    // keeps its input; out_proj its own.
    const double mixer =
        2 * (inner + conv + t.mamba().num_heads()) + 2 * inner + 2 * inner + in.projection * inner;
    return (in.qkv + 2) * tokens * h / boundary_shard + mixer * tokens / tp;
  }
  double split = 2 * tokens * (a + k) * d + 2 * tokens * k * d +
                 in.projection * tokens * a * d;  // Q K, V, proj in
  if (t.has_latent_attention()) {
    // Q and K of nope + rope, V and the projection input of v_head_dim per head; the latents
    // (the up projections' inputs), replicated on every tensor-parallel rank.
    const schema::MultiHeadLatentAttention& m = t.latent_attention();
    const double qk = m.qk_nope_head_dim() + m.qk_rope_head_dim(), v = m.v_head_dim();
    const double latents = (m.has_q_lora_rank() ? m.q_lora_rank() : 0) + m.kv_lora_rank();
    const double qkv = spec.recompute_latent_up ? 0 : 2 * tokens * 2 * a * qk + 2 * tokens * a * v;
    split = qkv + in.projection * tokens * a * v + in.qkv * tokens * latents * tp;
  }
  if (t.has_compressed_sparse_attention()) {
    // Q of head_dim per head (not when the up projection reruns), the one key-value head and the
    // query latent on every rank, the grouped output's input and the output projection's.
    const schema::CompressedSparseAttention& c = t.compressed_sparse_attention();
    const double hd = c.head_dim(), groups_out = c.o_groups() * c.o_lora_rank();
    const double q = spec.recompute_latent_up ? 0 : 2 * tokens * a * hd;
    split = q + (2 * hd + in.qkv * c.q_lora_rank()) * tokens * tp +
            in.projection * tokens * (a * hd + groups_out);
  }
  if (spec.flash_attention) split += 4 * tokens * a;  // log-sum-exp per head
  const double attention_split = split;
  // MLP rows per token: the routed copies this rank receives (the busiest rank's).
  const double copies = experts ? t.moe().experts_per_token() * spec.expert_rows : 1;
  // GELU: activation input, output (the MLP-down input); gated: gate and up outputs, product (the
  // MLP-down input).
  const double mlp_per_row = activation_input_per_row(t, spec) + in.mlp_down;
  split += mlp_per_row * tokens * f * copies;
  if (experts) {
    const double width = expert_input_width(t);
    split += in.mlp_up * tokens * copies * spec.expert_tensor_parallel * width;  // permuted inputs
    if (t.has_moe_latent_size()) split += in.mlp_up * tokens * width * tp;       // latent up input
    split += mlp_per_row * tokens * f * t.moe().num_shared_experts();
    // Recomputed (recompute_modules): the whole expert layer keeps its input alone (the
    // boundary's MLP input); the routed experts' activation frees its output, the down
    // projection's input.
    if (spec.recompute_experts) {
      split = attention_split;
    } else if (spec.recompute_expert_activation) {
      split -= in.mlp_down * tokens * f * copies;
    }
  }
  double quadratic = 0;  // s x s tensors
  if (!spec.flash_attention && spec.recompute != schema::RECOMPUTE_SELECTIVE) {
    quadratic = (dropout ? 5 : 2) * a * s * s * b;
  }
  if (spec.hybrid) {
    // One block: its input, output mask and norm input; the other block's split terms dropped.
    boundary /= 2;
    const bool attention = spec.block == HybridBlock::kAttention;
    split = attention ? attention_split : split - attention_split;
    if (!attention) quadratic = 0;
  }
  return boundary / boundary_shard + (split + quadratic) / tp;
}

double expert_activation_input_bytes(const schema::Transformer& t,
                                     const LayerActivationSpec& spec) {
  if (!t.has_moe() || spec.recompute == schema::RECOMPUTE_FULL || spec.recompute_experts) return 0;
  const double tokens =
      static_cast<double>(spec.sequence_length) * spec.micro_batch_size / spec.context_parallel;
  const double copies = t.moe().experts_per_token() * spec.expert_rows;
  return activation_input_per_row(t, spec) * tokens * expert_ffn_hidden_size(t) * copies /
         spec.tensor_parallel;
}

}  // namespace clustersim
