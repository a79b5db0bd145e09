// Kernel lists of transformer layers (Megatron-LM's tensor-parallel split: QKV and MLP-up split
// by columns, output projection and MLP-down by rows; context parallelism splits the tokens).
#include "sim/workload/layer_ops.h"

#include <algorithm>
#include <cmath>

#include "sim/workload/compressed_sparse_attention.h"
#include "sim/workload/eager_expert_kernels.h"
#include "sim/workload/eager_rotary.h"
#include "sim/workload/mamba_layer.h"
#include "sim/workload/moe_layer.h"
#include "sim/workload/transformer_dimensions.h"

namespace clustersim {

namespace {

using K = LayerOp::Kind;

struct Dimensions {  // of one layer on one rank
  int64_t s, b, tp, cp, tokens, h, a, kv, d, f;
  bool gated;
  // The rank's key/value heads: kv / tp, one where tensor parallelism exceeds them (replicated).
  int64_t rank_kv() const { return std::max<int64_t>(1, kv / tp); }
};

Dimensions dimensions(const schema::Transformer& t, const LayerShape& shape) {
  Dimensions x{};
  x.s = shape.sequence_length;
  x.b = shape.micro_batch_size;
  x.tp = shape.tensor_parallel;
  x.cp = shape.context_parallel;
  x.tokens = x.s * x.b / x.cp;
  x.h = t.hidden_size();
  x.a = t.num_attention_heads();
  x.kv = kv_heads(t);
  x.d = head_dim(t);
  x.f = t.ffn_hidden_size();
  x.gated = gated_mlp(t);
  return x;
}

// The attention core of a rank: fused (with its context-parallel exchange) or unfused.
void attention_core(const schema::Transformer& t, const LayerShape& shape, const Dimensions& x,
                    std::vector<LayerOp>* ops) {
  if (!shape.flash_attention) {
    ops->push_back({K::kMatmul, "scores", x.s, x.s, x.d, x.b * x.a / x.tp, 0, 0, false, true});
    // Fused scale-mask-softmax reads and writes the 16-bit scores; attention dropout is a kernel
    // of its own (Megatron-LM's CoreAttention): reads and writes them and writes a 1-byte mask.
    const double scores = static_cast<double>(x.a) / x.tp * x.s * x.s * x.b;
    ops->push_back({K::kMemory, "softmax", 0, 0, 0, 1, 0, 4.0 * scores});
    if (t.dropout()) ops->push_back({K::kMemory, "attention dropout", 0, 0, 0, 1, 0, 5.0 * scores});
    ops->push_back({K::kMatmul, "values", x.s, x.d, x.s, x.b * x.a / x.tp, 0, 0, false, true});
    return;
  }
  const bool causal = t.kind() == schema::DECODER;
  const double s = static_cast<double>(x.s);
  // The window (a band, or chunks) limiting each query's keys, when shorter than the sequence.
  const int64_t window = shape.sliding_window && t.sliding_window().window_tokens() < x.s
                             ? t.sliding_window().window_tokens()
                             : 0;
  // Per (sequence, head), all ranks.
  const double pairs = !causal ? s * s : window > 0 ? window_pairs(t, s) : causal_pairs(s, 0);
  const double flops = 4.0 * pairs * x.d * x.b * x.a / x.tp / x.cp;
  const double element = 2;  // 16-bit Q, K, V and output
  // The keys and values the attention call receives: repeated to the query heads first where the
  // model does so (LayerShape::repeated_kv).
  const double kv_heads = shape.repeated_kv ? x.a : x.kv;
  const double kv_block = 2 * element * x.tokens * kv_heads / x.tp * x.d;
  LayerOp core{K::kAttention, "attention", x.s / x.cp, x.s, x.d, x.b * x.a / x.tp, flops,
               0,            causal};
  core.window = window;
  core.chunked = window > 0 && t.sliding_window().chunked();
  core.backward_unwindowed = window > 0 && !core.chunked && shape.fp8_attention;
  core.fp8 = shape.fp8_attention;
  core.library = shape.attention_library;
  core.dropout = t.dropout();
  core.key_value_elements = 2.0 * x.tokens * x.rank_kv() * x.d;
  if (x.cp == 1) return ops->push_back(core);
  switch (shape.context_parallel_comm) {
    case schema::ALL_GATHER:
      ops->push_back({K::kContextAllGather, "context all-gather", 0, 0, 0, 1, 0, kv_block * x.cp});
      return ops->push_back(core);
    case schema::ALL_TO_ALL:
      ops->push_back({K::kContextAllToAll, "context all-to-all (QKV)", 0, 0, 0, 1, 0,
                      element * x.tokens * (x.a + 2 * x.kv) / x.tp * x.d});
      core.m = x.s;
      core.count = x.b * x.a / x.tp / x.cp;
      ops->push_back(core);
      return ops->push_back({K::kContextAllToAll, "context all-to-all (output)", 0, 0, 0, 1, 0,
                             element * x.tokens * x.a / x.tp * x.d});
    default:  // P2P and TORCH_ALL_GATHER rings: the step model times their exchanges
      core.bytes = kv_block;
      return ops->push_back(core);
  }
}

// Multi-head latent attention (Megatron-Core's MLASelfAttention): the down projections of the
// queries and of the shared key/value latent are replicated on every tensor-parallel rank, their
// norms read and write the latents, the up projections and the output projection split by heads;
// the attention core has query/key heads of nope + rope and value heads of v_head_dim, timed as
// one head dimension of their mean (the FLOPs are 2 x pairs x (qk + v) per head either way).
void latent_attention(const schema::Transformer& t, const LayerShape& shape, Dimensions x,
                      std::vector<LayerOp>* ops) {
  const schema::MultiHeadLatentAttention& m = t.latent_attention();
  const int64_t tokens = x.tokens, h = x.h, tp = x.tp, a = x.a;
  const int64_t qk = m.qk_nope_head_dim() + m.qk_rope_head_dim(), v = m.v_head_dim();
  if (m.has_q_lora_rank()) {
    ops->push_back({K::kMatmul, "q down", tokens, m.q_lora_rank(), h});
    ops->push_back({K::kMemory, "q norm", 0, 0, 0, 1, 0, 4.0 * tokens * m.q_lora_rank()});
    ops->push_back({K::kMatmul, "q up", tokens, a * qk / tp, m.q_lora_rank()});
  } else {
    ops->push_back({K::kMatmul, "q", tokens, a * qk / tp, h});
  }
  ops->push_back({K::kMatmul, "kv down", tokens, m.kv_lora_rank() + m.qk_rope_head_dim(), h});
  ops->push_back({K::kMemory, "kv norm", 0, 0, 0, 1, 0, 4.0 * tokens * m.kv_lora_rank()});
  ops->push_back(
      {K::kMatmul, "kv up", tokens, a * (m.qk_nope_head_dim() + v) / tp, m.kv_lora_rank()});
  x.d = (qk + v) / 2;
  x.kv = a;
  attention_core(t, shape, x, ops);
  ops->push_back({K::kMatmul, "attention out", tokens, h, a * v / tp});
}

// A Mamba-2 mixer on the rank's heads, between its all-gather and its all-reduce, as
// Megatron-Core's MambaMixer._ssm_training runs it (NVIDIA/Megatron-LM
// megatron/core/ssm/mamba_mixer.py: mamba_ssm's mamba_split_conv1d_scan_combined with z and
// without the norm or out_proj, then the RMSNorm), or with `fused_norm_projection` as NeMo
// AutoModel's NemotronV3Mamba2Mixer does (LayerShape::mamba_fused_norm_projection).
void mamba_mixer(const schema::Transformer& t, const Dimensions& x, bool fused_norm_projection,
                 std::vector<LayerOp>* ops) {
  const int64_t tokens = x.tokens, tp = x.tp;
  const int64_t inner = mamba_inner(t) / tp, conv = mamba_conv_channels(t) / tp;
  const int64_t heads = t.mamba().num_heads() / tp;
  const int64_t projected = inner + conv + heads;  // z, x B C, dt
  auto memory = [&](const char* name, double forward, double backward) {
    LayerOp op{K::kMemory, name, 0, 0, 0, 1, 0, forward};
    op.backward_bytes = backward;
    ops->push_back(std::move(op));
  };
  ops->push_back({K::kMatmul, "mamba in_proj", tokens, projected, x.h});
  // The projection from (sequence, batch) to (batch, sequence) order: a copy when the micro-batch
  // has more than one sequence, and its gradient copied back for in_proj's backward. Batch-major
  // activations (fused_norm_projection) need none.
  const bool reordered = x.b > 1 && !fused_norm_projection;
  if (reordered) memory("mamba layout copy", 4.0 * tokens * projected, 4.0 * tokens * projected);
  // Causal depthwise conv1d and SiLU over x, B and C (causal_conv1d_fwd: read and write them,
  // 16-bit); the backward reruns it (the combined function keeps no conv output), then
  // causal_conv1d_bwd reads x B C and their gradient and writes the input's.
  memory("mamba conv1d", 4.0 * tokens * conv, 4.0 * tokens * conv + 6.0 * tokens * conv);
  for (LayerOp& op : ssd_scan_ops(t, x.b, x.s, heads, !fused_norm_projection)) {
    ops->push_back(std::move(op));
  }
  // The output back to (sequence, batch) order (a copy when the micro-batch has several
  // sequences; its gradient is read through strides), then the RMSNorm over the gated output
  // (read, write; backward: read it and the gradient, write the input's). Fused, the norm gates
  // the ungated scan output by z inside the combined function (layernorm_gated.py
  // _layer_norm_fwd with z: read both, write the output); its backward (_layer_norm_bwd,
  // recompute_output) reads them and the gradient and writes both gradients and the normed
  // output again, out_proj's weight gradient's input.
  if (reordered) memory("mamba output layout copy", 4.0 * tokens * inner, 0);
  if (fused_norm_projection) {
    memory("mamba gated norm", 6.0 * tokens * inner, 12.0 * tokens * inner);
  } else {
    memory("mamba norm", 4.0 * tokens * inner, 6.0 * tokens * inner);
  }
  ops->push_back({K::kMatmul, "mamba out_proj", tokens, x.h, inner});
}

// The layer kind of a hybrid pattern's block.
LayerKind hybrid_layer_kind(HybridBlock block) {
  switch (block) {
    case HybridBlock::kMamba:
      return LayerKind::kMamba;
    case HybridBlock::kAttention:
      return LayerKind::kAttention;
    case HybridBlock::kMlp:
      return LayerKind::kMlp;
    case HybridBlock::kExperts:
      break;
  }
  return LayerKind::kHybridExperts;
}

}  // namespace

bool routes_to_experts(LayerKind kind) {
  return kind == LayerKind::kExperts || kind == LayerKind::kHybridExperts;
}

LayerKind layer_kind(const schema::Transformer& t, int layer) {
  if (t.has_hybrid_layer_pattern()) return hybrid_layer_kind(hybrid_block(t, layer));
  return has_experts(t, layer) ? LayerKind::kExperts : LayerKind::kDense;
}

std::vector<LayerKind> multi_token_prediction_layer_kinds(const schema::Transformer& t) {
  if (!t.has_hybrid_layer_pattern()) return {layer_kind(t, t.num_layers() - 1)};
  std::vector<LayerKind> kinds;
  for (HybridBlock block : multi_token_prediction_blocks(t)) {
    kinds.push_back(hybrid_layer_kind(block));
  }
  return kinds;
}

double causal_pairs(double s, double window) {
  if (window <= 0 || window >= s) return s * (s + 1) / 2;
  return window * (window + 1) / 2 + (s - window) * window;
}

double chunked_causal_pairs(double s, double chunk) {
  if (chunk <= 0 || chunk >= s) return causal_pairs(s, 0);
  const double whole = std::floor(s / chunk), left = s - whole * chunk;
  return whole * causal_pairs(chunk, 0) + causal_pairs(left, 0);
}

double windowed_causal_pairs(double s, double window, bool chunked) {
  return chunked ? chunked_causal_pairs(s, window) : causal_pairs(s, window);
}

double window_pairs(const schema::Transformer& t, double s) {
  return windowed_causal_pairs(s, t.sliding_window().window_tokens(),
                               t.sliding_window().chunked());
}

bool attends_in_window(const schema::Transformer& t, int layer) {
  if (!t.has_sliding_window()) return false;
  const schema::SlidingWindowAttention& w = t.sliding_window();
  return !w.has_full_attention_every() || (layer + 1) % w.full_attention_every() != 0;
}

int windowed_layers_in(const schema::Transformer& t, int first, int count, LayerKind kind) {
  if (!t.has_sliding_window()) return 0;
  int windowed = 0;
  for (int layer = first; layer < first + count; ++layer) {
    windowed += attends_in_window(t, layer) && layer_kind(t, layer) == kind;
  }
  return windowed;
}

std::vector<LayerOp> layer_forward_ops(const schema::Transformer& t, const LayerShape& shape,
                                       LayerKind kind) {
  const Dimensions x = dimensions(t, shape);
  const int64_t tokens = x.tokens, h = x.h, tp = x.tp, d = x.d;
  const double boundary = 2.0 * tokens * h / (shape.sequence_parallel ? tp : 1);  // bytes
  const double hidden_bytes = 2.0 * tokens * h;
  // All-gathers move the GEMM's input, in its narrow format under FP8 and FP4.
  const double gathered_bytes = shape.gemm_input_bytes * tokens * h;
  const K after_block = shape.sequence_parallel ? K::kTensorReduceScatter : K::kTensorAllReduce;
  std::vector<LayerOp> ops;
  auto memory = [&](const char* name, double bytes) {
    ops.push_back({K::kMemory, name, 0, 0, 0, 1, 0, bytes});
  };
  // A block's input and its residual add; under hyper-connections the mix of the residual's
  // streams into the input and their update with the output (compressed_sparse_attention.h), on
  // the residual's tokens (the sequence-parallel shard).
  const int64_t residual_tokens = tokens / (shape.sequence_parallel ? tp : 1);
  auto block_input = [&] {
    if (!t.has_hyper_connections()) return;
    hyper_connection_mix_ops(t, residual_tokens, &ops);
    ops.push_back(hyper_connection_gradient_sum_op(t, residual_tokens));
  };
  auto residual_add = [&](double bytes) {
    if (!t.has_hyper_connections()) return memory("residual add", bytes);
    ops.push_back(hyper_connection_update_op(t, residual_tokens));
  };
  // Backward, an all-gather reduce-scatters the data gradient in 16 bits whatever format the
  // forward gathered, and a reduce-scatter all-gathers the output gradient in its narrow copies
  // (Transformer Engine's linear layers under sequence parallelism without userbuffers: dgrad's
  // reduce_scatter_along_first_dim, grad_output_preprocess's gather_along_first_dim).
  auto collective = [&](K kind, const char* name) {
    if (tp <= 1) return;
    const bool gather = kind == K::kTensorAllGather;
    LayerOp op{kind, name, 0, 0, 0, 1, 0, gather ? gathered_bytes : hidden_bytes};
    if (gather) op.backward_bytes = hidden_bytes;
    if (kind == K::kTensorReduceScatter) {
      op.backward_bytes = shape.gathered_gradient_bytes * tokens * h;
    }
    ops.push_back(std::move(op));
  };
  // Attention and MLP side by side on one normed input (GPT-J, Falcon): the MLP reads the
  // attention's gathered input, and one all-reduce sums both outputs.
  const bool side_by_side = t.parallel_attention_mlp() && kind == LayerKind::kDense;
  // The backward-only sum of the input gradients of a block's `projections` separate GEMMs
  // (LayerShape::separate_projections): p - 1 adds of the whole input, reading two, writing one.
  auto input_gradient_sum = [&](const char* name, int projections) {
    LayerOp op{K::kMemory, name, 0, 0, 0, 1, 0, 0};
    op.backward_bytes = 3.0 * (projections - 1) * hidden_bytes;
    ops.push_back(std::move(op));
  };
  // A tensor-parallel MLP of width f on all the block's tokens; `separate_gate`: a gated one's gate
  // and up projections as two GEMMs.
  auto dense_mlp = [&](int64_t f, const char* up, const char* down, bool separate_gate) {
    if (separate_gate && !side_by_side) input_gradient_sum("MLP input gradient sum", 2);
    if (shape.sequence_parallel && !side_by_side) collective(K::kTensorAllGather, "MLP all-gather");
    if (separate_gate) {
      ops.push_back({K::kMatmul, "mlp gate", tokens, f / tp, h});
      ops.push_back({K::kMatmul, up, tokens, f / tp, h});
      ops.back().shares_input = true;
    } else {
      ops.push_back({K::kMatmul, up, tokens, (x.gated ? 2 : 1) * f / tp, h});
    }
    memory("activation", activation_bytes_per_element(t) * tokens * f / tp);
    if (shape.fp8_activation_input_store) {
      LayerOp store{K::kMemory, "activation input FP8 store", 0, 0, 0, 1, 0,
                    3.0 * (x.gated ? 2 : 1) * tokens * f / tp};
      store.backward_bytes = store.bytes;
      ops.push_back(std::move(store));
    }
    ops.push_back({K::kMatmul, down, tokens, h, f / tp});
    collective(after_block, "MLP all-reduce");
  };
  if (kind == LayerKind::kMamba) {
    block_input();
    memory("norm", 2 * boundary);
    if (shape.sequence_parallel) collective(K::kTensorAllGather, "mamba all-gather");
    mamba_mixer(t, x, shape.mamba_fused_norm_projection, &ops);
    collective(after_block, "mamba all-reduce");
    residual_add(3 * boundary);
    return ops;
  }
  const bool attention =
      kind == LayerKind::kDense || kind == LayerKind::kExperts || kind == LayerKind::kAttention;
  if (attention) {
    block_input();
    memory("norm1", 2 * boundary);
    const bool separate_qkv = shape.separate_projections && !t.has_latent_attention();
    // Side by side, the MLP's projections read the same input: one sum over all of them.
    if (separate_qkv) {
      input_gradient_sum("attention input gradient sum",
                         3 + (side_by_side ? (x.gated ? 2 : 1) : 0));
    }
    if (shape.sequence_parallel) collective(K::kTensorAllGather, "attention all-gather");
    if (t.has_compressed_sparse_attention()) {
      compressed_sparse_attention_ops(t, shape, shape.compress_ratio, &ops);
    } else if (t.has_latent_attention()) {
      latent_attention(t, shape, x, &ops);
    } else {
      if (separate_qkv) {
        ops.push_back({K::kMatmul, "q", tokens, x.a * d / tp, h});
        ops.push_back({K::kMatmul, "k", tokens, x.kv * d / tp, h});
        ops.back().shares_input = true;
        ops.push_back({K::kMatmul, "v", tokens, x.kv * d / tp, h});
        ops.back().shares_input = true;
      } else {
        ops.push_back({K::kMatmul, "qkv", tokens, (x.a + 2 * x.kv) * d / tp, h});
      }
      if (t.qk_norm()) {
        // Megatron-Core's q_layernorm and k_layernorm (TENorm, RMSNorm per head) on the rank's
        // query and key heads: read and write them, 16-bit; backward read the input and the
        // gradient, write the input's.
        const double elements =
            static_cast<double>(tokens) * (x.a / tp + x.rank_kv()) * d;
        LayerOp op{K::kMemory, "qk norm", 0, 0, 0, 1, 0, 4.0 * elements};
        op.backward_bytes = 6.0 * elements;
        ops.push_back(std::move(op));
      }
      if (t.has_yarn_rotary_factor()) {
        // YaRN's concentration keeps the rotation out of the fused RoPE (eager_rotary.h).
        const EagerExpertBytes rope =
            unfused_rotary_bytes(static_cast<double>(tokens) * (x.a + x.kv) / tp * d);
        LayerOp op{K::kMemory, "rotary (eager)", 0, 0, 0, 1, 0, rope.forward};
        op.backward_bytes = rope.backward;
        ops.push_back(std::move(op));
      }
      attention_core(t, shape, x, &ops);
      ops.push_back({K::kMatmul, "attention out", tokens, h, x.a * d / tp});
    }
    if (!side_by_side) {
      collective(after_block, "attention all-reduce");
      // With hidden dropout, Megatron-Core's fused bias-dropout-add also writes a 1-byte mask
      // (half the boundary's bytes) that its backward reads with the gradient; the backward,
      // charged at twice the forward, already exceeds that kernel's traffic (2.5 x boundary), so
      // the mask adds nothing here.
      residual_add(3 * boundary);
      if (kind == LayerKind::kAttention) return ops;
      block_input();
      memory("norm2", 2 * boundary);
    }
  } else {
    block_input();
    memory("norm", 2 * boundary);  // a hybrid MLP or experts layer's
  }
  if (kind == LayerKind::kDense || kind == LayerKind::kMlp) {
    dense_mlp(x.f, "mlp up", "mlp down", shape.separate_projections && x.gated);
  } else {
    using R = LayerOp::Recomputable;
    ops.back().recomputable = R::kExpertNorm;
    const size_t first_expert_op = ops.size();
    const schema::MixtureOfExperts& moe = t.moe();
    const int64_t topk = moe.experts_per_token(), f = expert_ffn_hidden_size(t);
    const int64_t ep = shape.expert_parallel, etp = shape.expert_tensor_parallel;
    const int64_t local_tokens = tokens / (shape.sequence_parallel ? tp : 1);
    const int64_t local_experts = moe.num_experts() / ep;
    const double routed = static_cast<double>(local_tokens) * topk;  // token copies, balanced
    const ExpertLoad& load = shape.expert_load;
    const int64_t width = expert_input_width(t);  // what is dispatched and what experts read
    const double sent_bytes = 2.0 * routed * width * load.sent;  // 16-bit
    // The busiest rank's: the last to receive its tokens ends the all-to-all.
    const double routed_bytes = 2.0 * routed * width * load.busiest_rank;
    // What the all-to-alls move of it: fewer copies where the dispatcher deduplicates.
    const double moved_bytes = routed_bytes * load.dispatched;
    // The router is a plain (not Transformer Engine) linear layer: 16-bit under FP8.
    if (!shape.weightless_router) {
      ops.push_back(
          {K::kMatmul, "router", local_tokens, moe.num_experts(), h, 1, 0, 0, false, true});
    }
    if (t.has_moe_latent_size()) ops.push_back({K::kMatmul, "latent down", local_tokens, width, h});
    memory("permute", 2.0 * local_tokens * width + sent_bytes);
    if (ep > 1) ops.push_back({K::kExpertAllToAll, "dispatch", 0, 0, 0, 1, 0, moved_bytes});
    if (etp > 1) {
      ops.push_back({K::kExpertAllGather, "expert all-gather", 0, 0, 0, 1, 0, routed_bytes * etp});
    }
    // The busiest rank's grouped GEMMs: each expert's received copies, gathered over ETP (rows,
    // rounded up); the hot expert's apart when it runs more than the others.
    const double mean_rows = routed * static_cast<double>(etp) / local_experts;
    struct ExpertGroup {
      const char* suffix;
      int64_t rows, count;
    };
    std::vector<ExpertGroup> groups;
    auto rows = [&](double share) { return static_cast<int64_t>(std::ceil(mean_rows * share)); };
    if (load.hot_expert == load.other_experts) {
      groups.push_back({"", rows(load.hot_expert), local_experts});
    } else {
      if (local_experts > 1) groups.push_back({"", rows(load.other_experts), local_experts - 1});
      groups.push_back({" (hot expert)", rows(load.hot_expert), 1});
    }
    auto expert_op = [&](LayerOp op) {
      op.expert = true;
      op.kernel_per_matrix = op.kind == K::kMatmul && !shape.fused_expert_mlp;
      ops.push_back(std::move(op));
    };
    for (const ExpertGroup& g : groups) {
      expert_op({K::kMatmul, std::string("expert up") + g.suffix, g.rows,
                 (x.gated ? 2 : 1) * f / etp, width, g.count});
    }
    double rank_rows = 0;  // the busiest rank's routed rows
    for (const ExpertGroup& g : groups) rank_rows += static_cast<double>(g.rows) * g.count;
    // Eager kernels around the grouped GEMMs (eager_expert_kernels.h): the fused grouped MLP
    // runs the activation, its clamp and the weighted bias in the GEMMs' epilogues instead.
    auto eager = [&](const char* name, const EagerExpertBytes& per_row) {
      LayerOp op{K::kMemory, name, 0, 0, 0, 1, 0, per_row.forward * rank_rows};
      op.backward_bytes = per_row.backward * rank_rows;
      expert_op(std::move(op));
    };
    if (!shape.fused_expert_mlp) {
      // Megatron-Core's moe_act recomputation reruns both (TEGroupedMLP's bias_act_func clamps
      // inside weighted_bias_quick_geglu_impl).
      if (t.has_activation_clamp()) {
        eager("expert clamp", clamped_glu_bytes(f / etp));
        ops.back().recomputable = R::kExpertActivation;
      }
      expert_op({K::kMemory, "expert activation", 0, 0, 0, 1, 0,
                 activation_bytes_per_element(t) * rank_rows * f / etp});
      ops.back().recomputable = R::kExpertActivation;
    }
    for (const ExpertGroup& g : groups) {
      expert_op(
          {K::kMatmul, std::string("expert down") + g.suffix, g.rows, width, f / etp, g.count});
    }
    if (t.linear_bias()) {
      if (!shape.fused_expert_mlp) {
        eager("expert bias", weighted_bias_bytes(h, shape.fp32_router_probabilities));
      } else {
        eager("expert bias gradient", fused_bias_gradient_bytes(h));
      }
    }
    if (shape.expert_paged_stash) {
      eager("expert paged stash",
            paged_stash_bytes(width, (x.gated ? 2 : 1) * f / etp, f / etp, shape.gemm_input_bytes,
                              shape.fp32_router_probabilities ? 4 : 2));
    }
    if (etp > 1) {
      ops.push_back(
          {K::kExpertReduceScatter, "expert reduce-scatter", 0, 0, 0, 1, 0, routed_bytes * etp});
    }
    if (ep > 1) ops.push_back({K::kExpertAllToAll, "combine", 0, 0, 0, 1, 0, moved_bytes});
    // Unpermute: read the k expert outputs of the rank's tokens, write their weighted sum.
    memory("unpermute", 2.0 * local_tokens * width + sent_bytes);
    if (t.has_moe_latent_size()) ops.push_back({K::kMatmul, "latent up", local_tokens, h, width});
    if (moe.num_shared_experts() > 0) {
      const size_t first_shared = ops.size();
      dense_mlp(moe.num_shared_experts() * f, "shared expert up", "shared expert down", false);
      for (size_t i = first_shared; i < ops.size(); ++i) {
        ops[i].shared_expert = ops[i].kind == K::kMatmul || ops[i].kind == K::kMemory;
      }
    }
    for (size_t i = first_expert_op; i < ops.size(); ++i) {
      if (ops[i].recomputable == R::kNo) ops[i].recomputable = R::kExpertLayer;
    }
  }
  // The residual, plus the attention's output when it ran beside the MLP.
  residual_add((side_by_side ? 4 : 3) * boundary);
  return ops;
}

std::vector<LayerOp> multi_token_prediction_ops(const schema::Transformer& t,
                                                const LayerShape& shape) {
  const int64_t tokens =
      static_cast<int64_t>(shape.sequence_length) * shape.micro_batch_size / shape.context_parallel;
  const int64_t h = t.hidden_size();
  return {{K::kMemory, "mtp norms", 0, 0, 0, 1, 0, 2 * 4.0 * tokens * h},
          {K::kMatmul, "mtp projection", tokens, h / shape.tensor_parallel, 2 * h}};
}

std::vector<LayerOp> with_sixteen_bit_gemms(std::vector<LayerOp> ops) {
  for (LayerOp& op : ops) op.sixteen_bit = op.sixteen_bit || op.kind == K::kMatmul;
  return ops;
}

CrossEntropyKernel cross_entropy_kernel(const schema::TrainingJob& job) {
  if (job.transformer_engine_cross_entropy()) return CrossEntropyKernel::kTransformerEngine;
  if (job.unfused_cross_entropy()) return CrossEntropyKernel::kUnfused;
  switch (job.torch_cross_entropy()) {
    case schema::SIXTEEN_BIT_LOGITS:
      return CrossEntropyKernel::kTorchSixteenBit;
    case schema::FP32_UPCAST:
      return CrossEntropyKernel::kTorchFp32Upcast;
    default:
      return CrossEntropyKernel::kFused;
  }
}

CrossEntropyBytes cross_entropy_bytes(CrossEntropyKernel loss) {
  switch (loss) {
    case CrossEntropyKernel::kFused:
      // Read the 16-bit logits, write and read fp32 probabilities (backward twice that); the
      // logits and their fp32 copy alive.
      return {2.0 + 4 + 4, 2 * (2.0 + 4 + 4), 2.0 + 4};
    case CrossEntropyKernel::kUnfused:
      // A kernel a step: cast, max, subtract, exp, sum, divide; backward: scale, cast back.
      return {6.0 + 4 + 8 + 8 + 4 + 8, 8.0 + 6, 2.0 + 4};
    case CrossEntropyKernel::kTransformerEngine:
      // Read the logits twice, write the gradient in their place; backward: scale it in place.
      return {2.0 + 2 + 2, 2.0 + 2, 2.0};
    case CrossEntropyKernel::kTorchSixteenBit:
      // log_softmax (read, write); nll_loss_backward's dense gradient, log_softmax_backward.
      return {2.0 + 2, 2.0 + (2 + 2 + 2), 2.0 + 2};
    case CrossEntropyKernel::kTorchFp32Upcast:
      // The cast, log_softmax in fp32; the fp32 gradient, log_softmax_backward, the cast back.
      return {(2.0 + 4) + (4 + 4), 4.0 + (4 + 4 + 4) + (4 + 2), 2.0 + 4 + 4};
  }
  return {};
}

std::vector<LayerOp> output_forward_ops(const schema::Transformer& t, const LayerShape& shape,
                                        bool narrow_logits, CrossEntropyKernel loss) {
  const int64_t tokens =
      static_cast<int64_t>(shape.sequence_length) * shape.micro_batch_size / shape.context_parallel;
  const int64_t vocab_shard = t.vocab_size() / shape.tensor_parallel;
  const double logits = static_cast<double>(tokens) * vocab_shard;
  const CrossEntropyBytes bytes = cross_entropy_bytes(loss);
  LayerOp cross_entropy{K::kMemory, "cross-entropy", 0, 0, 0, 1, 0, bytes.forward * logits};
  cross_entropy.backward_bytes = bytes.backward * logits;
  return {{K::kMemory, "final norm", 0, 0, 0, 1, 0, 4.0 * tokens * t.hidden_size()},
          {K::kMatmul, "logits", tokens, vocab_shard, t.hidden_size(), 1, 0, 0, false,
           !narrow_logits},
          cross_entropy};
}

}  // namespace clustersim
