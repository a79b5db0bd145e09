// Trainable parameter counts of models, derived from their shapes.
#pragma once

#include <cstdint>

#include "sim/io/schema/model.pb.h"

namespace clustersim {

// Parameters of a transformer, split the way the memory model and the pipeline split need them.
struct TransformerParameters {
  int64_t embedding = 0;  // token (+ learned position, + token type) tables and embedding norm
  // One transformer layer, all experts included (a MoE model: one of its MoE layers). With
  // compressed sparse attention, a window-only layer's: the compressed keys' parameters differ by
  // layer and are in `layers` and layer_parameters only.
  int64_t per_layer = 0;
  int64_t dense_per_layer = 0;           // one layer with a dense MLP of ffn_hidden_size
  int64_t routed_experts_per_layer = 0;  // the routed experts of one MoE layer (in per_layer)
  int64_t layers = 0;     // all layers: per_layer * num_layers, less what first dense layers lack
  int64_t head = 0;       // final norm, untied output projection, encoder pooler/MLM/NSP heads
  // Multi-token-prediction weights (every copy, multi_token_prediction_weight_copies), trained
  // beside the model but not part of total().
  int64_t multi_token_prediction = 0;
  int64_t total() const { return embedding + layers + head; }
  // Parameters one token touches in one layer (MoE: only the routed and shared experts), for FLOP
  // counts, and in all layers.
  int64_t active_per_layer = 0;
  int64_t active_layers = 0;
  int64_t active() const { return embedding + active_layers + head; }
};

// Requires: a transformer model that passed the catalog checks.
TransformerParameters transformer_parameters(const schema::Transformer& t);

// The parameters of some layers: all of them, and of those the routed experts'.
struct LayerParameters {
  double all = 0;
  double routed = 0;
  LayerParameters& operator+=(const LayerParameters& o) {
    all += o.all;
    routed += o.routed;
    return *this;
  }
};

// Of the `count` layers from 0-based `first`, each of its kind (a hybrid pattern's block, else
// dense or MoE).
LayerParameters layer_parameters(const schema::Transformer& t, int first, int count);

// The sets of multi-token-prediction weights `t` trains: one a module, one in all for shared
// modules (multi_token_prediction_shared); 0 without modules.
int multi_token_prediction_weight_copies(const schema::Transformer& t);

// The multi-token-prediction weights of `t` (on the last pipeline stage), each copy's: their
// transformer layers (one of the last layer's kind; a hybrid model's, its module pattern's
// layers), and the rest of them (norms, projection), dense.
struct MultiTokenPredictionParameters {
  LayerParameters layers;
  double other = 0;
};

// Requires: `t` with multi_token_prediction_layers > 0; `params` its transformer_parameters.
MultiTokenPredictionParameters multi_token_prediction_parameters(
    const schema::Transformer& t, const TransformerParameters& params);

// Total trainable parameters of a model that passed the catalog checks (transformer or CNN).
int64_t parameter_count(const schema::Model& model);

// Parameters one token uses (TransformerParameters::active()), without the input-embedding table
// when !with_embedding; a dense model's or CNN's total.
int64_t active_parameter_count(const schema::Model& model, bool with_embedding);

}  // namespace clustersim
