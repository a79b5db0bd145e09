// Shape propagation and parameter counts for CNN layers.
#include "sim/workload/cnn_shape.h"

namespace clustersim {
namespace {

// Output size of a window of `kernel` moved by `stride` over `in` padded by `padding` each side.
std::optional<int64_t> window_output(int64_t in, int kernel, int stride, int padding,
                                     std::string* why) {
  if (kernel < 1 || stride < 1 || padding < 0) {
    *why = "kernel and stride must be >= 1 and padding >= 0";
    return std::nullopt;
  }
  // A border as wide as the kernel adds outputs that see padding alone; a stride past the padded
  // input is one window. Both were taken at 2^31 - 1 (the padding overflowed the sum below, the
  // stride made `input` run past a minute; tools/input_audit.py).
  if (padding >= kernel) {
    *why = "padding " + std::to_string(padding) + " is not below the kernel (" +
           std::to_string(kernel) + "): its outermost windows would see padding alone";
    return std::nullopt;
  }
  const int64_t padded = in + 2 * int64_t{padding};
  if (padded < kernel) {
    *why = "kernel " + std::to_string(kernel) + " is larger than the padded input " +
           std::to_string(padded);
    return std::nullopt;
  }
  if (stride > padded) {
    *why = "stride " + std::to_string(stride) + " is larger than the padded input " +
           std::to_string(padded);
    return std::nullopt;
  }
  return (padded - kernel) / stride + 1;
}

std::optional<CnnShape> window_shape(CnnShape in, int64_t channels, int kernel, int stride,
                                     int padding, std::string* why) {
  auto h = window_output(in.height, kernel, stride, padding, why);
  auto w = h ? window_output(in.width, kernel, stride, padding, why) : std::nullopt;
  if (!w) return std::nullopt;
  return CnnShape{channels, *h, *w};
}

template <class Layers>
std::optional<CnnShape> chain_output(const Layers& layers, CnnShape in, std::string* why) {
  for (const schema::CnnLayer& layer : layers) {
    auto out = cnn_layer_output(layer, in, why);
    if (!out) return std::nullopt;
    in = *out;
  }
  return in;
}

template <class Layers>
int64_t chain_parameters(const Layers& layers, CnnShape in) {
  int64_t total = 0;
  std::string unused;
  for (const schema::CnnLayer& layer : layers) {
    total += cnn_layer_parameters(layer, in);
    in = *cnn_layer_output(layer, in, &unused);
  }
  return total;
}

std::optional<CnnShape> residual_output(const schema::Residual& block, CnnShape in,
                                        std::string* why) {
  const int repeat = block.has_repeat() ? block.repeat() : 1;
  for (int r = 0; r < repeat; ++r) {
    auto body = chain_output(block.body(), in, why);
    if (!body) return std::nullopt;
    auto shortcut = chain_output(block.shortcut(), in, why);
    if (!shortcut) return std::nullopt;
    if (!(*body == *shortcut)) {
      *why = "body output " + std::to_string(body->channels) + "x" + std::to_string(body->height) +
             "x" + std::to_string(body->width) + " does not match shortcut output " +
             std::to_string(shortcut->channels) + "x" + std::to_string(shortcut->height) + "x" +
             std::to_string(shortcut->width);
      return std::nullopt;
    }
    in = *body;
  }
  return in;
}

}  // namespace

std::optional<CnnShape> cnn_layer_output(const schema::CnnLayer& layer, CnnShape in,
                                         std::string* why) {
  switch (layer.layer_case()) {
    case schema::CnnLayer::kConv: {
      const schema::Conv2d& c = layer.conv();
      if (!c.has_out_channels() || !c.has_kernel()) {
        *why = "a convolution needs out_channels and kernel";
        return std::nullopt;
      }
      return window_shape(in, c.out_channels(), c.kernel(), c.has_stride() ? c.stride() : 1,
                          c.padding(), why);
    }
    case schema::CnnLayer::kPool: {
      const schema::Pool2d& p = layer.pool();
      if (p.kind() == schema::Pool2d::GLOBAL_AVERAGE) return CnnShape{in.channels, 1, 1};
      return window_shape(in, in.channels, p.kernel(), p.has_stride() ? p.stride() : 1, p.padding(),
                          why);
    }
    case schema::CnnLayer::kLinear:
      return CnnShape{layer.linear().out_features(), 1, 1};
    case schema::CnnLayer::kResidual:
      return residual_output(layer.residual(), in, why);
    case schema::CnnLayer::LAYER_NOT_SET:
      break;
  }
  *why = "a layer needs one of conv, pool, linear or residual";
  return std::nullopt;
}

int64_t cnn_layer_parameters(const schema::CnnLayer& layer, CnnShape in) {
  switch (layer.layer_case()) {
    case schema::CnnLayer::kConv: {
      const schema::Conv2d& c = layer.conv();
      const int64_t out = c.out_channels();
      return int64_t{c.kernel()} * c.kernel() * in.channels * out + (c.bias() ? out : 0) +
             (c.batch_norm() ? 2 * out : 0);
    }
    case schema::CnnLayer::kLinear: {
      const int64_t out = layer.linear().out_features();
      return in.elements() * out + (layer.linear().bias() ? out : 0);
    }
    case schema::CnnLayer::kResidual: {
      const schema::Residual& block = layer.residual();
      const int repeat = block.has_repeat() ? block.repeat() : 1;
      int64_t total = 0;
      std::string unused;
      for (int r = 0; r < repeat; ++r) {
        total += chain_parameters(block.body(), in) + chain_parameters(block.shortcut(), in);
        in = *chain_output(block.body(), in, &unused);
      }
      return total;
    }
    case schema::CnnLayer::kPool:
    case schema::CnnLayer::LAYER_NOT_SET:
      break;
  }
  return 0;
}

namespace {

using Visit = std::function<void(const schema::CnnLayer&, CnnShape, CnnShape)>;
using VisitAdd = std::function<void(CnnShape)>;

template <class Layers>
CnnShape walk(const Layers& layers, CnnShape in, const Visit& visit, const VisitAdd& visit_add);

CnnShape walk_layer(const schema::CnnLayer& layer, CnnShape in, const Visit& visit,
                    const VisitAdd& visit_add) {
  if (!layer.has_residual()) {
    std::string unused;
    const CnnShape out = *cnn_layer_output(layer, in, &unused);
    visit(layer, in, out);
    return out;
  }
  const schema::Residual& block = layer.residual();
  const int repeat = block.has_repeat() ? block.repeat() : 1;
  for (int r = 0; r < repeat; ++r) {
    const CnnShape out = walk(block.body(), in, visit, visit_add);
    walk(block.shortcut(), in, visit, visit_add);
    visit_add(out);
    in = out;
  }
  return in;
}

template <class Layers>
CnnShape walk(const Layers& layers, CnnShape in, const Visit& visit, const VisitAdd& visit_add) {
  for (const schema::CnnLayer& layer : layers) in = walk_layer(layer, in, visit, visit_add);
  return in;
}

}  // namespace

void for_each_cnn_layer(const schema::Cnn& cnn, const Visit& visit, const VisitAdd& visit_add) {
  walk(cnn.layer(), CnnShape{cnn.input_channels(), cnn.input_height(), cnn.input_width()}, visit,
       visit_add);
}

}  // namespace clustersim
