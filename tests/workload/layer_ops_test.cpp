// Tests of the kernel list of a transformer layer: what the unfused (2021 Megatron-LM) attention
// core reads and writes.
#include "sim/workload/layer_ops.h"

#include <catch2/catch.hpp>

#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

double bytes_of(const std::vector<LayerOp>& ops, const std::string& name) {
  double bytes = 0;
  for (const LayerOp& op : ops) {
    if (op.name == name) bytes += op.bytes;
  }
  return bytes;
}

TEST_CASE("unfused attention: softmax and a separate dropout kernel over the s x s scores") {
  const auto& gpt = testing::shipped_catalog().models().find("gpt-18b")->value->transformer();
  REQUIRE(gpt.dropout());
  const LayerShape shape{2048, 1, 8, false, false};
  const std::vector<LayerOp> ops = layer_forward_ops(gpt, shape);
  const double scores = 48.0 / 8 * 2048 * 2048;  // heads per GPU x s^2 elements, 16-bit
  // Fused scale-mask-softmax reads and writes 2 bytes; dropout reads and writes 2 and writes a
  // 1-byte mask.
  CHECK(bytes_of(ops, "softmax") == Approx(4 * scores));
  CHECK(bytes_of(ops, "attention dropout") == Approx(5 * scores));
  // The scores are one batched matmul over the heads of the GPU.
  for (const LayerOp& op : ops) {
    if (op.name == "scores") CHECK(op.count == 6);
  }
  auto no_dropout = gpt;
  no_dropout.set_dropout(false);
  CHECK(bytes_of(layer_forward_ops(no_dropout, shape), "attention dropout") == 0);
}

}  // namespace
}  // namespace clustersim
