// The shape of a mixture-of-experts model's layers: which layers route tokens to experts, and the
// width and number of experts a token passes through. Dense models answer as one expert.
#pragma once

#include <cstdint>

#include "sim/io/schema/model.pb.h"

namespace clustersim {

// Requires (for all functions): a transformer that passed the catalog checks.

// FFN width of one routed (and shared) expert: moe.expert_ffn_hidden_size, else ffn_hidden_size.
int64_t expert_ffn_hidden_size(const schema::Transformer& t);

// Layers whose MLP is a mixture of experts (0 for a dense model): the layers after
// moe.first_dense_layers (every moe.layer_interval-th of them), or a hybrid pattern's 'E' layers.
int moe_layer_count(const schema::Transformer& t);

// Whether 0-based layer `layer` of a non-hybrid transformer has experts: at least
// moe.first_dense_layers and (layer + 1) a multiple of moe.layer_interval (absent: 1).
bool has_experts(const schema::Transformer& t, int layer);

// Of the `count` layers from 0-based layer `first`, those with experts.
int moe_layers_in(const schema::Transformer& t, int first, int count);

// The width the routed experts read and write: moe_latent_size (LatentMoE), else hidden_size.
int64_t expert_input_width(const schema::Transformer& t);

}  // namespace clustersim
