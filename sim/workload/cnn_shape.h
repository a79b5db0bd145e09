// Tensor shapes flowing through a CNN layer list, and the parameters each layer holds.
#pragma once

#include <cstdint>
#include <functional>
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

// Calls `visit(layer, in, out)` for every convolution, pool and linear layer of `cnn` in execution
// order (residual bodies, then shortcuts, each repeat), with per-sample shapes; and
// `visit_add(shape)` for every residual addition. Requires: a CNN that passed the catalog checks.
void for_each_cnn_layer(
    const schema::Cnn& cnn,
    const std::function<void(const schema::CnnLayer&, CnnShape, CnnShape)>& visit,
    const std::function<void(CnnShape)>& visit_add);

}  // namespace clustersim
