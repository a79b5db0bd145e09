// Trainable parameter counts of models, derived from their shapes.
#pragma once

#include <cstdint>

#include "sim/io/schema/model.pb.h"

namespace clustersim {

// Parameters of a transformer, split the way the memory model and the pipeline split need them.
struct TransformerParameters {
  int64_t embedding = 0;  // token (+ learned position, + token type) tables and embedding norm
  int64_t per_layer = 0;  // one transformer layer, all experts included
  int64_t layers = 0;     // per_layer * num_layers
  int64_t head = 0;       // final norm, untied output projection, encoder pooler/MLM/NSP heads
  int64_t total() const { return embedding + layers + head; }
  // Parameters one token touches in one layer (MoE: only the routed experts), for FLOP counts.
  int64_t active_per_layer = 0;
};

// Requires: a transformer model that passed the catalog checks.
TransformerParameters transformer_parameters(const schema::Transformer& t);

// Total trainable parameters of a model that passed the catalog checks (transformer or CNN).
int64_t parameter_count(const schema::Model& model);

}  // namespace clustersim
