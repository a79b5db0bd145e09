// Tests of the eager (unfused) rotary embedding: its closed form per element and where the
// layer's kernel list holds it (gpt-oss-120b's YaRN-scaled RoPE, Megatron-Core's unfused path).
#include "sim/workload/eager_rotary.h"

#include <catch2/catch.hpp>

#include "sim/workload/layer_ops.h"
#include "tests/testing/layer_op_lookup.h"
#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

TEST_CASE("the eager rotary embedding moves 24 bytes an element forward and 26 backward") {
  // Forward: x cos (4), the negated half (2) and the rotated concatenation (4), x sin (4), the
  // sum (6), the concatenation with the empty rest (4). Backward: two products (8), the negated
  // half (2), the halves joined (4), the two paths summed (6), the slice's zeros and copy (6).
  const EagerExpertBytes rope = unfused_rotary_bytes(1000);
  CHECK(rope.forward == 24000);
  CHECK(rope.backward == 26000);
}

TEST_CASE("a YaRN-scaled rotary embedding rotates queries and keys eagerly, after the QKV GEMM") {
  // gpt-oss-120b (YaRN factor 32), 2 sequences of 4096 tokens, TP 2: each rank rotates its 32
  // query and 4 key heads of 64: 8192 x 36 x 64 elements.
  const auto& oss =
      testing::shipped_catalog().models().find("gpt-oss-120b")->value->transformer();
  REQUIRE(oss.yarn_rotary_factor() == 32);
  LayerShape shape{4096, 2, 2, true, true};
  shape.expert_parallel = 8;
  std::vector<LayerOp> ops = layer_forward_ops(oss, shape, LayerKind::kExperts);
  const LayerOp* rope = testing::find_op(ops, "rotary (eager)");
  REQUIRE(rope != nullptr);
  const double elements = 8192.0 * (32 + 4) * 64;
  CHECK(rope->kind == LayerOp::Kind::kMemory);
  CHECK(rope->bytes == Approx(24 * elements));
  CHECK(*rope->backward_bytes == Approx(26 * elements));
  CHECK(!rope->expert);
  CHECK(rope == testing::find_op(ops, "qkv") + 1);
  CHECK(rope + 1 == testing::find_op(ops, "attention"));
  // Without YaRN scaling (Qwen3-30B-A3B) the fused RoPE is not costed: no kernel of its own.
  const auto& qwen =
      testing::shipped_catalog().models().find("qwen3-30b-a3b")->value->transformer();
  const std::vector<LayerOp> fused = layer_forward_ops(qwen, shape, LayerKind::kExperts);
  CHECK(testing::find_op(fused, "rotary (eager)") == nullptr);
}

}  // namespace
}  // namespace clustersim
