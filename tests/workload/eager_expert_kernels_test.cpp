// Tests of the memory-bound kernels around the routed experts' grouped GEMMs: their closed forms
// per routed row and where the layer's kernel list holds them (gpt-oss-120b: a clamped GLU and
// biases), eager or beside the fused grouped MLP.
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

TEST_CASE("beside the fused MLP the bias gradient reads 2h + 12 bytes a row, the stash 2 copies") {
  // The Triton dbias / dscales kernel: the 16-bit output gradient read (2 h), the fp32
  // probability read and its gradient read and written (12); nothing in the forward.
  const EagerExpertBytes gradient = fused_bias_gradient_bytes(1000);
  CHECK(gradient.forward == 0);
  CHECK(gradient.backward == 2012);
  // The paged stash of Qwen3-30B-A3B's saved tensors under MXFP8 (1 byte a narrow element): the
  // up projection's input (2048) and the down projection's (768) column-wise, the GLU's 16-bit
  // input (2 x 768) and an fp32 probability: 2048 + 768 + 3072 + 4 = 5892 bytes, copied into
  // the stash (read, write) and back (read, write).
  const EagerExpertBytes stash = paged_stash_bytes(2048, 2 * 768, 768, 1, 4);
  CHECK(stash.forward == 2 * 5892.0);
  CHECK(stash.backward == 2 * 5892.0);
}

TEST_CASE("the fused MLP's bias gradient and paged stash are kernels of the expert layer") {
  // gpt-oss-120b, 4096 tokens, EP 8, fused grouped MLP under MXFP8 (1-byte GEMM inputs), the
  // flex dispatcher's fp32 probabilities: 4096 x 4 routed rows on the rank.
  const auto& oss = testing::shipped_catalog().models().find("gpt-oss-120b")->value->transformer();
  LayerShape shape{4096, 1, 1, false, true};
  shape.expert_parallel = 8;
  shape.fused_expert_mlp = true;
  shape.gemm_input_bytes = 1;
  shape.fp32_router_probabilities = true;
  const double rows = 4096.0 * 4;
  std::vector<LayerOp> ops = layer_forward_ops(oss, shape, LayerKind::kExperts);
  const LayerOp* gradient = testing::find_op(ops, "expert bias gradient");
  REQUIRE(gradient != nullptr);
  CHECK(gradient->expert);
  CHECK(gradient->bytes == 0);
  CHECK(*gradient->backward_bytes == Approx(rows * (2 * 2880 + 12)));
  CHECK(testing::find_op(ops, "expert paged stash") == nullptr);
  shape.expert_paged_stash = true;
  ops = layer_forward_ops(oss, shape, LayerKind::kExperts);
  const LayerOp* stash = testing::find_op(ops, "expert paged stash");
  REQUIRE(stash != nullptr);
  CHECK(stash->expert);
  // The up projection's input 2880 and the down projection's 2880 in 1 byte, the GLU's input
  // 2 x 2880 in 2 bytes, the fp32 probability 4.
  const double saved = 2880 + 2880 + 2 * 2 * 2880 + 4;
  CHECK(stash->bytes == Approx(rows * 2 * saved));
  CHECK(*stash->backward_bytes == Approx(rows * 2 * saved));
  // After the down projection, before the combine leaves the rank.
  CHECK(stash > testing::find_op(ops, "expert down"));
  CHECK(stash < testing::find_op(ops, "combine"));
  // The eager path has no bias gradient kernel of its own (the eager bias's backward counts it).
  shape.fused_expert_mlp = false;
  shape.expert_paged_stash = false;
  ops = layer_forward_ops(oss, shape, LayerKind::kExperts);
  CHECK(testing::find_op(ops, "expert bias gradient") == nullptr);
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
