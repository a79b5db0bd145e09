// Tests of CNN shape propagation: the convolution output-size formula and residual rules.
#include "sim/workload/cnn_shape.h"

#include <catch2/catch.hpp>

#include "tests/testing/parse_message.h"

namespace clustersim {
namespace {

schema::CnnLayer layer(const std::string& text) {
  return testing::parse_message<schema::CnnLayer>(text);
}

TEST_CASE("convolution output is floor((in + 2p - k) / s) + 1") {
  std::string why;
  // ResNet stem: 224 -> (224 + 6 - 7) / 2 + 1 = 112.
  auto out = cnn_layer_output(layer("conv { out_channels: 64 kernel: 7 stride: 2 padding: 3 }"),
                              {3, 224, 224}, &why);
  REQUIRE(out);
  CHECK(*out == CnnShape{64, 112, 112});
  // 7x7 kernel, 3 input channels, 64 outputs, no bias: 9408 weights.
  CHECK(cnn_layer_parameters(layer("conv { out_channels: 64 kernel: 7 stride: 2 padding: 3 }"),
                             {3, 224, 224}) == 9408);
}

TEST_CASE("a border as wide as the kernel, or a stride past the padded input, is refused") {
  // At 2^31 - 1 the padding overflowed the padded size, the stride ran `input` past a minute
  // (tools/input_audit.py).
  std::string why;
  CHECK_FALSE(cnn_layer_output(layer("conv { out_channels: 4 kernel: 3 padding: 3 }"), {3, 8, 8},
                               &why));
  CHECK(why == "padding 3 is not below the kernel (3): its outermost windows would see padding "
               "alone");
  CHECK_FALSE(cnn_layer_output(layer("conv { out_channels: 4 kernel: 3 padding: 2147483647 }"),
                               {3, 8, 8}, &why));
  CHECK(why == "padding 2147483647 is not below the kernel (3): its outermost windows would see "
               "padding alone");
  CHECK_FALSE(cnn_layer_output(layer("pool { kind: MAX kernel: 3 stride: 11 padding: 1 }"),
                               {4, 8, 8}, &why));
  CHECK(why == "stride 11 is larger than the padded input 10");
  // A stride of the padded input is one window.
  CHECK(*cnn_layer_output(layer("pool { kind: MAX kernel: 3 stride: 10 padding: 1 }"), {4, 8, 8},
                          &why) == CnnShape{4, 1, 1});
}

TEST_CASE("pooling keeps channels, global average pooling gives 1x1") {
  std::string why;
  CHECK(*cnn_layer_output(layer("pool { kind: MAX kernel: 3 stride: 2 padding: 1 }"),
                          {64, 112, 112}, &why) == CnnShape{64, 56, 56});
  CHECK(*cnn_layer_output(layer("pool { kind: GLOBAL_AVERAGE }"), {2048, 7, 7}, &why) ==
        CnnShape{2048, 1, 1});
}

TEST_CASE("a linear layer flattens its input") {
  CHECK(cnn_layer_parameters(layer("linear { out_features: 10 bias: true }"), {4, 2, 2}) ==
        16 * 10 + 10);
}

TEST_CASE("batch norm adds a scale and a shift per output channel") {
  CHECK(cnn_layer_parameters(layer("conv { out_channels: 8 kernel: 1 batch_norm: true }"),
                             {4, 5, 5}) == 4 * 8 + 2 * 8);
}

TEST_CASE("a repeated identity residual keeps its shape and multiplies its parameters") {
  const auto block = layer(
      "residual { body { conv { out_channels: 4 kernel: 3 padding: 1 } } "
      "repeat: 3 }");
  std::string why;
  CHECK(*cnn_layer_output(block, {4, 8, 8}, &why) == CnnShape{4, 8, 8});
  CHECK(cnn_layer_parameters(block, {4, 8, 8}) == 3 * (9 * 4 * 4));
}

TEST_CASE("a strided body needs a matching shortcut") {
  std::string why;
  CHECK_FALSE(cnn_layer_output(layer("residual { body { conv { out_channels: 4 kernel: 1 "
                                     "stride: 2 } } }"),
                               {4, 8, 8}, &why));
  CHECK(why == "body output 4x4x4 does not match shortcut output 4x8x8");
}

}  // namespace
}  // namespace clustersim
