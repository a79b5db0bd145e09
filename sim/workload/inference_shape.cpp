// Per-rank matmul shapes and per-token bytes of serving a transformer.
//
// One layer on one tensor-parallel rank (h hidden, a query and k KV heads of size d, f FFN, t
// ranks, k' = max(k / t, 1) KV heads a rank keeps):
//   attention: QKV (a / t + 2 k') d columns of h, output h columns of a d / t; under latent
//     attention (model.proto's MultiHeadLatentAttention) the query down projection q of h and
//     the KV down projection (kv_lora + rope) of h on every rank, the query up projection
//     a (nope + rope) / t of q, the KV up projection a (nope + v) / t of kv_lora (applied to the
//     new tokens' latents in a prompt, absorbed into the queries and outputs in decode: the same
//     FLOPs and weights per token either way) and the output h of a v / t;
//   MLP: up (2 f / t gated, f / t) and down h columns of f / t; an expert layer has the router
//     (experts columns of h, on every rank), each routed expert's up and down of its width / t
//     (under expert parallelism EP: width / (t / EP), of the E / EP experts a rank holds), and
//     its shared experts as one dense MLP of their summed width / t.
// KV cache per token: 2 (K and V) x layers x k' x d x kv bytes; latent: layers x (kv_lora + rope)
//   x kv bytes on every rank; compressed sparse attention: its compressed entries and indexer keys
//   per token and its windows per sequence on every rank (compressed_kv_cache.h).
// Compressed sparse attention's layers are grouped by compress ratio, each group's attention and
// hyper-connection matrices the training step's (compressed_attention_groups.h); its norm vectors
// (q_lora_rank + head_dim a layer) are not counted.
// Attention per query-key pair: 2 x 2 d FLOPs (QK^T and PV) per query head; latent, per query
//   head: 2 (nope + rope) + 2 v in a prompt, 2 (kv_lora + rope) + 2 kv_lora in decode.
// All-reduces per layer: 2, or 1 with attention and MLP in parallel (their partial sums added).
#include "sim/workload/inference_shape.h"

#include <algorithm>
#include <cmath>

#include "sim/util/check.h"
#include "sim/util/even_share.h"
#include "sim/workload/compressed_attention_groups.h"
#include "sim/workload/compressed_kv_cache.h"
#include "sim/workload/layer_ops.h"
#include "sim/workload/moe_layer.h"
#include "sim/workload/transformer_dimensions.h"

namespace clustersim {
namespace {

namespace s = schema;

constexpr double kSixteenBit = 2;  // bytes: embedding, output projection, norms, hidden states

// Parameters of one layer's matrices on one rank (all experts).
double layer_matrix_parameters(const LayerGroup& group, int experts) {
  double total = 0;
  for (const LayerMatmul& m : group.matmuls) {
    total += static_cast<double>(m.n) * static_cast<double>(m.k) * (m.expert ? experts : 1);
  }
  return total;
}

// One layer's attention matrices on one rank, and the norm elements the latent form adds.
std::vector<LayerMatmul> attention_matmuls(const s::Transformer& t, int64_t tp, int64_t kv_rank,
                                           double* extra_norm_elements) {
  const int64_t h = t.hidden_size(), a = t.num_attention_heads();
  if (t.has_compressed_sparse_attention()) {  // per compress ratio: compressed_attention_groups
    *extra_norm_elements = 0;
    return {};
  }
  if (!t.has_latent_attention()) {
    const int64_t d = head_dim(t);
    *extra_norm_elements = 0;
    return {{(a / tp + 2 * kv_rank) * d, h, false}, {h, a * d / tp, false}};
  }
  const s::MultiHeadLatentAttention& m = t.latent_attention();
  const int64_t qk = m.qk_nope_head_dim() + m.qk_rope_head_dim(), v = m.v_head_dim();
  std::vector<LayerMatmul> mm;
  if (m.has_q_lora_rank()) {
    mm.push_back({m.q_lora_rank(), h, false});
    mm.push_back({a * qk / tp, m.q_lora_rank(), false});
  } else {
    mm.push_back({a * qk / tp, h, false});
  }
  mm.push_back({m.kv_lora_rank() + m.qk_rope_head_dim(), h, false});
  mm.push_back({a * (m.qk_nope_head_dim() + v) / tp, m.kv_lora_rank(), false});
  mm.push_back({h, a * v / tp, false});
  *extra_norm_elements = static_cast<double>(m.q_lora_rank() + m.kv_lora_rank());
  return mm;
}

// Up and down projections of an MLP of width `width` / tp (`expert`: one routed expert's).
void add_mlp(const s::Transformer& t, int64_t width, int64_t tp, bool expert,
             std::vector<LayerMatmul>* mm) {
  mm->push_back({(gated_mlp(t) ? 2 : 1) * width / tp, t.hidden_size(), expert});
  mm->push_back({t.hidden_size(), width / tp, expert});
}

// Norms (read, write), residual adds (read two, write one) and, per MLP a token runs, its
// activation (read the up projection, write the width).
double elementwise_bytes(const s::Transformer& t, int64_t width, int64_t tp, double mlps,
                         double extra_norm_elements) {
  const double h = static_cast<double>(t.hidden_size());
  const double up = (gated_mlp(t) ? 2.0 : 1.0) * static_cast<double>(width / tp);
  return kSixteenBit * (2 * (2.0 * h + extra_norm_elements) + 2 * 3.0 * h +
                        (up + static_cast<double>(width / tp)) * mlps);
}

}  // namespace

std::string serving_tensor_parallel_problem(const s::Transformer& t, int tensor_parallel) {
  const int64_t tp = tensor_parallel;
  const auto no_split = [&](const char* field, int64_t size) {
    return std::to_string(tp) + " does not divide the model's " + field + " (" +
           std::to_string(size) + ")";
  };
  if (t.num_attention_heads() % tp != 0)
    return no_split("num_attention_heads", t.num_attention_heads());
  const int64_t kv = kv_heads(t);
  if (!t.has_latent_attention() && !t.has_compressed_sparse_attention() && kv % tp != 0 &&
      tp % kv != 0) {
    return std::to_string(tp) + " neither divides the model's num_kv_heads (" + std::to_string(kv) +
           ") nor is a multiple of them (each rank keeps whole KV heads)";
  }
  if (t.has_compressed_sparse_attention() && t.compressed_sparse_attention().o_groups() % tp != 0) {
    return no_split("compressed_sparse_attention.o_groups",
                    t.compressed_sparse_attention().o_groups());
  }
  if (t.hidden_size() % tp != 0) return no_split("hidden_size", t.hidden_size());
  if (t.ffn_hidden_size() % tp != 0) return no_split("ffn_hidden_size", t.ffn_hidden_size());
  if (t.has_moe() && expert_ffn_hidden_size(t) % tp != 0) {
    return no_split("moe.expert_ffn_hidden_size", expert_ffn_hidden_size(t));
  }
  return "";
}

std::string serving_expert_parallel_problem(const s::Transformer& t, int expert_parallel) {
  if (expert_parallel == 1) return "";
  const std::string ep = std::to_string(expert_parallel);
  if (!t.has_moe()) return ep + ": the model has no experts to split (it has no moe block)";
  if (t.moe().num_experts() % expert_parallel != 0) {
    return ep + " does not divide the model's moe.num_experts (" +
           std::to_string(t.moe().num_experts()) + ")";
  }
  return "";
}

double experts_touched(int experts, int k, int64_t tokens) {
  const double e = experts;
  return e * (1 - std::pow(1 - k / e, static_cast<double>(tokens)));
}

InferenceShape inference_shape(const s::Transformer& t, const TensorFormats& formats,
                               int tensor_parallel, int pipeline_parallel, int stage,
                               int expert_parallel) {
  CLUSTERSIM_CHECK(stage >= 0 && stage < pipeline_parallel, "a stage outside the pipeline");
  CLUSTERSIM_CHECK(serving_tensor_parallel_problem(t, tensor_parallel).empty() &&
                       serving_expert_parallel_problem(t, expert_parallel).empty() &&
                       tensor_parallel % expert_parallel == 0,
                   "tensor or expert parallelism that does not split the model");
  InferenceShape shape;
  const int64_t tp = tensor_parallel;
  const int64_t expert_tp = tp / expert_parallel;  // each expert's ranks
  const int64_t h = t.hidden_size(), a = t.num_attention_heads();
  const bool latent = t.has_latent_attention();
  const bool compressed = t.has_compressed_sparse_attention();
  const int64_t kv_rank = latent || compressed ? 0 : std::max<int64_t>(kv_heads(t) / tp, 1);
  const int64_t d = head_dim(t);
  int first_layer = 0;
  for (int s = 0; s < stage; ++s) first_layer += even_share(t.num_layers(), pipeline_parallel, s);
  shape.layers = even_share(t.num_layers(), pipeline_parallel, stage);
  shape.tensor_parallel = tensor_parallel;
  shape.hidden = h;
  shape.query_heads = static_cast<int>(a / tp);
  shape.kv_heads = static_cast<int>(kv_rank);
  shape.head_dim = static_cast<int>(d);
  shape.windowed_layers = windowed_layers_in(t, first_layer, shape.layers, LayerKind::kDense) +
                          windowed_layers_in(t, first_layer, shape.layers, LayerKind::kExperts);
  shape.window_tokens = t.has_sliding_window() ? t.sliding_window().window_tokens() : 0;
  shape.window_chunked = t.has_sliding_window() && t.sliding_window().chunked();
  const bool moe = t.has_moe();
  shape.num_experts = moe ? t.moe().num_experts() : 1;
  shape.experts_per_token = moe ? t.moe().experts_per_token() : 1;
  shape.expert_parallel = expert_parallel;

  double attention_norms = 0;
  const std::vector<LayerMatmul> attention = attention_matmuls(t, tp, kv_rank, &attention_norms);
  const int expert_layers = moe_layers_in(t, first_layer, shape.layers);
  shape.first_expert_layer = expert_layers > 0 && moe_layers_in(t, 0, first_layer) == 0;
  const double act = bytes_per_element(formats.activations);
  const auto activation_bytes = [&](int64_t width, double mlps) {
    const double up = (gated_mlp(t) ? 2.0 : 1.0) * static_cast<double>(width / tp);
    const double f = static_cast<double>(width / tp) * mlps;
    return kSixteenBit * (4.0 * h + up * mlps + f) + (act < kSixteenBit ? act * (h + f) : 0);
  };
  if (shape.layers > expert_layers) {
    LayerGroup dense{shape.layers - expert_layers, attention, 0};
    add_mlp(t, t.ffn_hidden_size(), tp, false, &dense.matmuls);
    dense.memory_bytes_per_token =
        elementwise_bytes(t, t.ffn_hidden_size(), tp, 1, attention_norms);
    shape.activation_bytes_per_token = activation_bytes(t.ffn_hidden_size(), 1);
    shape.groups.push_back(std::move(dense));
  }
  if (expert_layers > 0) {
    const s::MixtureOfExperts& m = t.moe();
    const int64_t width = expert_ffn_hidden_size(t);
    LayerGroup experts{expert_layers, attention, 0};
    experts.matmuls.push_back({m.num_experts(), h, false});  // the router
    add_mlp(t, width, expert_tp, true, &experts.matmuls);
    if (m.num_shared_experts() > 0)
      add_mlp(t, width * m.num_shared_experts(), tp, false, &experts.matmuls);
    // The routed experts' activations per token: k copies at width / tp, which is also expert
    // parallelism's mean (k / EP copies at width / (tp / EP)).
    experts.memory_bytes_per_token = elementwise_bytes(
        t, width, tp, static_cast<double>(m.experts_per_token() + m.num_shared_experts()),
        attention_norms);
    // The shared experts' workspace as a dense MLP's; the routed experts' grouped GEMMs work on
    // k copies of each token, each with its input permuted by expert, its up projection's and
    // activation's outputs and its down projection's output before the weighted sum
    // (TensorRT-LLM's MoE plugin: CutlassMoeFCRunner::getWorkspaceBufferSizes' permuted data, GLU
    // and FC1 buffers and the plugin's FC2 result, k rows a token each).
    const double k = m.experts_per_token();
    const double up = (gated_mlp(t) ? 2.0 : 1.0) * static_cast<double>(width / expert_tp);
    const double f = static_cast<double>(width / expert_tp);
    const double routed =
        kSixteenBit * k * (2.0 * h + up + f) + (act < kSixteenBit ? act * k * (h + f) : 0);
    shape.activation_bytes_per_token = std::max(
        shape.activation_bytes_per_token, activation_bytes(width, m.num_shared_experts()) + routed);
    shape.groups.push_back(std::move(experts));
  }
  if (compressed) {
    shape.groups =
        compressed_attention_groups(t, tensor_parallel, first_layer, shape.layers, shape.groups);
  }
  const bool first = stage == 0, last = stage == pipeline_parallel - 1;
  shape.vocab_shard = last ? t.vocab_size() / tp : 0;

  const double weight = bytes_per_element(formats.weights);
  const double norms = (t.normalization() == s::RMSNORM ? 1.0 : 2.0) * static_cast<double>(h);
  const double qk_norms = t.qk_norm() ? 2.0 * static_cast<double>(d) : 0;  // per layer
  double bytes = 0;
  for (const LayerGroup& g : shape.groups) {
    bytes += g.layers * (layer_matrix_parameters(g, shape.num_experts / expert_parallel) * weight +
                         (2 * norms + attention_norms + qk_norms) * kSixteenBit);
  }
  const double embedding = first ? static_cast<double>(t.vocab_size()) * h * kSixteenBit : 0;
  const double head = last ? (static_cast<double>(shape.vocab_shard) * h + norms) * kSixteenBit : 0;
  if (first) bytes += embedding;
  if (last) bytes += head;
  shape.weight_bytes = bytes;
  shape.embedding_and_head_bytes = embedding + head;

  shape.kv_element_bytes = bytes_per_element(formats.kv_cache);
  if (compressed) {
    const s::CompressedSparseAttention& c = t.compressed_sparse_attention();
    const CompressedKvCache cache =
        compressed_kv_cache(t, first_layer, shape.layers, formats.kv_cache);
    shape.kv_bytes_per_token = cache.bytes_per_token;
    shape.kv_bytes_per_sequence = cache.bytes_per_sequence;
    shape.compressed_entry_bytes = compressed_entry_bytes(t, formats.kv_cache);
    shape.indexer_key_bytes = indexer_key_bytes(t);
    shape.index_heads = c.index_n_heads();
    shape.index_head_dim = c.index_head_dim();
    shape.head_dim = c.head_dim();
    shape.window_tokens = c.window_tokens();
    // QK^T and PV over the one head_dim-wide key-value head, per query head of the rank.
    shape.attention_flops_per_pair = 4.0 * c.head_dim() * shape.query_heads;
    shape.decode_attention_flops_per_pair = shape.attention_flops_per_pair;
  } else if (latent) {
    const s::MultiHeadLatentAttention& m = t.latent_attention();
    shape.latent_kv_width = m.kv_lora_rank() + m.qk_rope_head_dim();
    shape.kv_bytes_per_token = shape.layers * shape.latent_kv_width * shape.kv_element_bytes;
    const double qk = m.qk_nope_head_dim() + m.qk_rope_head_dim();
    shape.attention_flops_per_pair = 2.0 * (qk + m.v_head_dim()) * shape.query_heads;
    shape.decode_attention_flops_per_pair =
        2.0 * (shape.latent_kv_width + m.kv_lora_rank()) * shape.query_heads;
  } else {
    shape.kv_bytes_per_token = 2.0 * shape.layers * shape.kv_heads * d * shape.kv_element_bytes;
    shape.attention_flops_per_pair = 4.0 * d * shape.query_heads;
    shape.decode_attention_flops_per_pair = shape.attention_flops_per_pair;
  }
  shape.allreduce_bytes_per_token = kSixteenBit * h;
  shape.allreduces_per_layer = t.parallel_attention_mlp() ? 1 : 2;
  return shape;
}

}  // namespace clustersim
