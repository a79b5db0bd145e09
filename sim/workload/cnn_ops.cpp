// CNN kernels and stored activations from the layer walk.
#include "sim/workload/cnn_ops.h"

#include "sim/workload/cnn_shape.h"

namespace clustersim {

std::vector<LayerOp> cnn_forward_ops(const schema::Cnn& cnn, int batch) {
  using K = LayerOp::Kind;
  std::vector<LayerOp> ops;
  const auto b = static_cast<int64_t>(batch);
  for_each_cnn_layer(
      cnn,
      [&](const schema::CnnLayer& layer, CnnShape in, CnnShape out) {
        if (layer.has_conv()) {
          const int64_t k = layer.conv().kernel();
          ops.push_back(
              {K::kMatmul, "conv", b * out.height * out.width, out.channels, in.channels * k * k});
          if (layer.conv().batch_norm() || layer.conv().activation() != schema::ACTIVATION_NONE) {
            ops.push_back({K::kMemory, "batch norm", 0, 0, 0, 1, 0, 2.0 * 2 * b * out.elements()});
          }
        } else if (layer.has_pool()) {
          ops.push_back(
              {K::kMemory, "pool", 0, 0, 0, 1, 0, 2.0 * b * (in.elements() + out.elements())});
        } else if (layer.has_linear()) {
          ops.push_back({K::kMatmul, "linear", b, out.channels, in.elements()});
        }
      },
      [&](CnnShape shape) {
        ops.push_back({K::kMemory, "residual add", 0, 0, 0, 1, 0, 3.0 * 2 * b * shape.elements()});
      });
  return ops;
}

double cnn_activation_bytes(const schema::Cnn& cnn, int batch) {
  double bytes = 0;
  for_each_cnn_layer(
      cnn,
      [&](const schema::CnnLayer& layer, CnnShape in, CnnShape out) {
        bytes += 2.0 * batch * in.elements();  // every layer keeps its input
        if (layer.has_conv() && layer.conv().batch_norm())
          bytes += 2.0 * 2 * batch * out.elements();
      },
      [](CnnShape) {});
  return bytes;
}

}  // namespace clustersim
