// The dimensions of a transformer that its schema leaves optional, with their defaults: key/value
// heads (multi-head attention when unset), head width (hidden / heads when unset), and whether the
// MLP is gated (SwiGLU, GeGLU: three matrices instead of two), and the traffic of its activation.
#pragma once

#include <array>
#include <cstdint>

#include "sim/io/schema/model.pb.h"

namespace clustersim {

// Requires (for all functions): a transformer that passed the catalog checks.

// num_kv_heads, else num_attention_heads.
int64_t kv_heads(const schema::Transformer& t);

// head_dim, else hidden_size / num_attention_heads.
int64_t head_dim(const schema::Transformer& t);

// True for SwiGLU and GeGLU MLPs (gate and up projections, then down).
bool gated_mlp(const schema::Transformer& t);

// Bytes a training step's MLP activation kernels move per element of the MLP width, 16-bit
// tensors: one fused kernel reading the up projection's output (gate and up when gated) and
// writing the width, 4 (6 gated); squared ReLU runs as two kernels (relu, then the square), each
// reading and writing the width: 8.
double activation_bytes_per_element(const schema::Transformer& t);

// The four weight matrices of a dense layer, in forward order, each as {rows k, columns n} of its
// k x n weight: QKV h x (a + 2 kv) d, attention output a d x h, FC1 h x f (2 f gated), FC2 f x h.
std::array<std::array<double, 2>, 4> linear_weight_shapes(const schema::Transformer& t);

}  // namespace clustersim
