// Tests of the routed experts' eager elementwise kernels: their closed forms per routed row and
// where the layer's kernel list holds them (gpt-oss-120b: a clamped GLU and biases).
#include "sim/workload/eager_expert_kernels.h"

#include <catch2/catch.hpp>

#include "sim/workload/layer_ops.h"
#include "tests/testing/layer_op_lookup.h"
#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

TEST_CASE(
    "the eager clamp and weighted bias move 16w and 12h bytes a row forward, 20w and 16h back") {
  // Clamp: two halves of w read and written, then both concatenated (read and written), 2 bytes
  // an element; backward: two clamp gradients of 3 w each and the halves joined (4 w).
  const EagerExpertBytes clamp = clamped_glu_bytes(2880);
  CHECK(clamp.forward == 2.0 * (4 * 2880 + 4 * 2880));
  CHECK(clamp.backward == 2.0 * (6 * 2880 + 4 * 2880));
  // Weighted bias: b x p written (h), t + (b x p) read and written (3 h), the cat (2 h);
  // backward: the split's gradient joined (2 h) and two products written and reread (6 h).
  const EagerExpertBytes bias = weighted_bias_bytes(1000, false);
  CHECK(bias.forward == 12000);
  CHECK(bias.backward == 16000);
}

TEST_CASE("with fp32 router probabilities the weighted bias moves 28h bytes a row, 40h back") {
  // b x p in fp32 (4 h), t (2 h) and the product (4 h) read and the fp32 sum written (4 h), the
  // cat of fp32 rows (8 h), the cast to 16 bits (4 h + 2 h); backward: the cast's gradient to
  // fp32 (2 h + 4 h) and the sum's to t back (4 h + 2 h), the split's joined (4 h), two fp32
  // products with the gradient read, written and reread (2 x 12 h).
  const EagerExpertBytes bias = weighted_bias_bytes(1000, true);
  CHECK(bias.forward == 28000);
  CHECK(bias.backward == 40000);
}

TEST_CASE("gpt-oss experts run the eager clamp and bias unless the grouped MLP is fused") {
  // gpt-oss-120b, 4096 tokens, EP 8: 4096 x 4 routed rows over the 16 local experts, all of them
  // on this rank under balanced routing; expert width and hidden size 2880.
  const auto& oss = testing::shipped_catalog().models().find("gpt-oss-120b")->value->transformer();
  REQUIRE(oss.activation_clamp() == 7.0);
  LayerShape shape{4096, 1, 1, false, true};
  shape.expert_parallel = 8;
  const double rows = 4096.0 * 4;
  std::vector<LayerOp> ops = layer_forward_ops(oss, shape, LayerKind::kExperts);
  const LayerOp* clamp = testing::find_op(ops, "expert clamp");
  const LayerOp* bias = testing::find_op(ops, "expert bias");
  REQUIRE(clamp != nullptr);
  REQUIRE(bias != nullptr);
  CHECK(clamp->expert);
  CHECK(clamp->bytes == Approx(rows * 16 * 2880));
  CHECK(*clamp->backward_bytes == Approx(rows * 20 * 2880));
  CHECK(bias->bytes == Approx(rows * 12 * 2880));
  CHECK(*bias->backward_bytes == Approx(rows * 16 * 2880));
  // Megatron-Core's moe_act recomputation reruns the clamp with the activation (both inside
  // TEGroupedMLP's bias_act_func); the bias, after the down projection, is not rerun by it.
  CHECK(clamp->recomputable == LayerOp::Recomputable::kExpertActivation);
  CHECK(bias->recomputable == LayerOp::Recomputable::kExpertLayer);
  // The clamp comes before the activation, the bias after the down projection.
  CHECK(clamp < testing::find_op(ops, "expert activation"));
  CHECK(bias > testing::find_op(ops, "expert down"));
  // The flex dispatcher's fp32 probabilities promote the weighted bias to fp32.
  shape.fp32_router_probabilities = true;
  const std::vector<LayerOp> flex = layer_forward_ops(oss, shape, LayerKind::kExperts);
  CHECK(testing::find_op(flex, "expert bias")->bytes == Approx(rows * 28 * 2880));
  CHECK(*testing::find_op(flex, "expert bias")->backward_bytes == Approx(rows * 40 * 2880));
  CHECK(testing::find_op(flex, "expert clamp")->bytes == Approx(rows * 16 * 2880));
  shape.fp32_router_probabilities = false;
  // Fused: the activation, clamp and bias are in the grouped GEMMs' epilogues.
  shape.fused_expert_mlp = true;
  ops = layer_forward_ops(oss, shape, LayerKind::kExperts);
  CHECK(testing::find_op(ops, "expert clamp") == nullptr);
  CHECK(testing::find_op(ops, "expert bias") == nullptr);
  CHECK(testing::find_op(ops, "expert activation") == nullptr);
  CHECK(testing::find_op(ops, "expert up") != nullptr);
  // Without a clamp or biases (Qwen3-30B-A3B) neither eager kernel runs.
  const auto& qwen =
      testing::shipped_catalog().models().find("qwen3-30b-a3b")->value->transformer();
  shape.fused_expert_mlp = false;
  ops = layer_forward_ops(qwen, shape, LayerKind::kExperts);
  CHECK(testing::find_op(ops, "expert clamp") == nullptr);
  CHECK(testing::find_op(ops, "expert bias") == nullptr);
  CHECK(testing::find_op(ops, "expert activation") != nullptr);
}

}  // namespace
}  // namespace clustersim
