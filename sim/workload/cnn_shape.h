// Tensor shapes flowing through a CNN layer list, and the parameters each layer holds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sim/io/schema/model.pb.h"

namespace clustersim {

// Channels x height x width of one sample's activation.
struct CnnShape {
  int64_t channels = 0;
  int64_t height = 0;
  int64_t width = 0;

  int64_t elements() const { return channels * height * width; }
  bool operator==(const CnnShape&) const = default;
};

// Output shape of `layer` for input `in`, or nullopt with `why` set when the layer cannot apply
// (kernel larger than the padded input, a residual whose branches disagree, a missing field).
std::optional<CnnShape> cnn_layer_output(const schema::CnnLayer& layer, CnnShape in,
                                         std::string* why);

// Trainable parameters of `layer` for input `in` (weights, biases, batch-norm scale and shift).
// Requires: cnn_layer_output(layer, in) succeeds.
int64_t cnn_layer_parameters(const schema::CnnLayer& layer, CnnShape in);

}  // namespace clustersim
