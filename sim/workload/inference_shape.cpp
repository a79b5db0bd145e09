// Per-rank matmul shapes and per-token bytes of serving a transformer.
//
// One layer on one tensor-parallel rank (h hidden, a query and k KV heads of size d, f FFN):
//   QKV (a + 2k) d / t columns of h, output h columns of a d / t, MLP up (2 f / t gated, f / t)
//   and down h columns of f / t (per routed expert for mixture-of-experts layers).
// KV cache per token: 2 (K and V) x layers x k / t x d x kv bytes.
// Attention per query-key pair: 2 x 2 d FLOPs (QK^T and PV) per query head.
// All-reduces per layer: 2, or 1 with attention and MLP in parallel (their partial sums added).
#include "sim/workload/inference_shape.h"

#include <cmath>

#include "sim/util/check.h"
#include "sim/workload/transformer_dimensions.h"

namespace clustersim {
namespace {

namespace s = schema;

constexpr double kSixteenBit = 2;  // bytes: embedding, output projection, norms, hidden states

// Parameters of one layer's matrices on one rank (all experts), and its norms.
double layer_matrix_parameters(const InferenceShape& shape, int experts) {
  double total = 0;
  for (const LayerMatmul& m : shape.matmuls) {
    total += static_cast<double>(m.n) * static_cast<double>(m.k) * (m.expert ? experts : 1);
  }
  return total;
}

}  // namespace

int stage_layers(int layers, int stages, int stage) {
  return layers / stages + (stage < layers % stages ? 1 : 0);
}

double experts_touched(int experts, int k, int64_t tokens) {
  const double e = experts;
  return e * (1 - std::pow(1 - k / e, static_cast<double>(tokens)));
}

InferenceShape inference_shape(const s::Transformer& t, const TensorFormats& formats,
                               int tensor_parallel, int pipeline_parallel, int stage) {
  CLUSTERSIM_CHECK(stage >= 0 && stage < pipeline_parallel, "a stage outside the pipeline");
  InferenceShape shape;
  const int tp = tensor_parallel;
  const int64_t h = t.hidden_size(), a = t.num_attention_heads();
  const int64_t kv = kv_heads(t);
  const int64_t d = head_dim(t);
  const int64_t f = t.ffn_hidden_size() / tp;
  shape.layers = stage_layers(t.num_layers(), pipeline_parallel, stage);
  shape.tensor_parallel = tp;
  shape.hidden = h;
  shape.query_heads = static_cast<int>(a / tp);
  shape.kv_heads = static_cast<int>(kv / tp);
  shape.head_dim = static_cast<int>(d);
  const bool moe = t.has_moe();
  shape.num_experts = moe ? t.moe().num_experts() : 1;
  shape.experts_per_token = moe ? t.moe().experts_per_token() : 1;
  shape.matmuls = {{(a + 2 * kv) * d / tp, h, false},
                   {h, a * d / tp, false},
                   {(gated_mlp(t) ? 2 : 1) * f, h, moe},
                   {h, f, moe}};
  const bool first = stage == 0, last = stage == pipeline_parallel - 1;
  shape.vocab_shard = last ? t.vocab_size() / tp : 0;

  const double weight = bytes_per_element(formats.weights);
  const double norms = (t.normalization() == s::RMSNORM ? 1.0 : 2.0) * static_cast<double>(h);
  double bytes = shape.layers * (layer_matrix_parameters(shape, shape.num_experts) * weight +
                                 2 * norms * kSixteenBit);
  if (first) bytes += static_cast<double>(t.vocab_size()) * h * kSixteenBit;
  if (last) bytes += (static_cast<double>(shape.vocab_shard) * h + norms) * kSixteenBit;
  shape.weight_bytes = bytes;

  shape.kv_element_bytes = bytes_per_element(formats.kv_cache);
  shape.kv_bytes_per_token = 2.0 * shape.layers * shape.kv_heads * d * shape.kv_element_bytes;
  const double act = bytes_per_element(formats.activations);
  const double up = static_cast<double>(shape.matmuls[2].n);
  shape.activation_bytes_per_token =
      kSixteenBit * (4.0 * h + up + f) + (act < kSixteenBit ? act * (h + f) : 0);
  // Two norms (read, write), two residual adds (read two, write one), the MLP activation (read
  // the up projection, write f).
  shape.memory_bytes_per_token =
      kSixteenBit * (2 * 2.0 * h + 2 * 3.0 * h + (up + f) * shape.experts_per_token);
  shape.attention_flops_per_pair = 4.0 * d * shape.query_heads;
  shape.allreduce_bytes_per_token = kSixteenBit * h;
  shape.allreduces_per_layer = t.parallel_attention_mlp() ? 1 : 2;
  return shape;
}

}  // namespace clustersim
