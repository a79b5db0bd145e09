// Tests of an FP4 step's modules kept out of NVFP4 (job.fp4_overrides): which matmuls each module
// names, the marks and the all-gather bytes of a layer's kernels under sequence parallelism, an
// MXFP8 matmul's casts inside an NVFP4 layer, and the first 16-bit layer.
#include "sim/workload/fp4_overrides.h"

#include <catch2/catch.hpp>

#include "sim/workload/fp8_casts.h"

namespace clustersim {
namespace {

namespace s = schema;
using K = LayerOp::Kind;

constexpr double kTokens = 8192, kHidden = 4096;

// A tensor-parallel all-gather of the tokens' NVFP4 inputs (0.5625 bytes an element) with its
// 16-bit backward, or a reduce-scatter whose backward gathers NVFP4's two copies (1.125).
LayerOp gather() {
  LayerOp op{K::kTensorAllGather, "all-gather", 0, 0, 0, 1, 0, 0.5625 * kTokens * kHidden};
  op.backward_bytes = 2 * kTokens * kHidden;
  return op;
}
LayerOp scatter() {
  LayerOp op{K::kTensorReduceScatter, "reduce-scatter", 0, 0, 0, 1, 0, 2 * kTokens * kHidden};
  op.backward_bytes = 1.125 * kTokens * kHidden;
  return op;
}
LayerOp matmul(const char* name, int64_t n, int64_t k) {
  return {K::kMatmul, name, static_cast<int64_t>(kTokens), n, k};
}

s::Fp4Overrides super_recipe() {
  s::Fp4Overrides o;
  o.add_sixteen_bit_modules(s::ATTENTION_QKV);
  o.add_sixteen_bit_modules(s::ATTENTION_OUT);
  o.add_sixteen_bit_modules(s::LATENT_PROJECTIONS);
  o.add_mxfp8_modules(s::MAMBA_OUT_PROJECTION);
  return o;
}

TEST_CASE("a 16-bit module's all-gathers move 16-bit elements, an MXFP8 one's its copies") {
  // An attention block and a Mamba mixer under TP 2 with sequence parallelism.
  const std::vector<LayerOp> ops = with_fp4_overrides(
      super_recipe(), {gather(), matmul("qkv", 2560, 4096), matmul("attention out", 4096, 2048),
                       scatter(), gather(), matmul("mamba in_proj", 9248, 4096),
                       matmul("mamba out_proj", 4096, 4096), scatter()});
  CHECK(ops[1].sixteen_bit);
  CHECK(ops[2].sixteen_bit);
  CHECK_FALSE(ops[5].sixteen_bit);
  CHECK_FALSE(ops[5].mxfp8);
  CHECK(ops[6].mxfp8);
  CHECK_FALSE(ops[6].sixteen_bit);
  // The qkv's gathered input in 16 bits (2 bytes an element); the attention out's gathered output
  // gradient too; its forward reduce-scatter and the gather's backward 16-bit as before.
  CHECK(ops[0].bytes == Approx(2 * kTokens * kHidden));
  CHECK(*ops[0].backward_bytes == 2 * kTokens * kHidden);
  CHECK(*ops[3].backward_bytes == Approx(2 * kTokens * kHidden));
  CHECK(ops[3].bytes == 2 * kTokens * kHidden);
  // in_proj stays NVFP4; out_proj's output gradient gathered in MXFP8's two copies with scales.
  CHECK(ops[4].bytes == 0.5625 * kTokens * kHidden);
  CHECK(*ops[7].backward_bytes == Approx(2 * (1 + 1.0 / 32) * kTokens * kHidden));
}

TEST_CASE("a module list changes only its own matmuls, and a 16-bit router stays 16-bit") {
  LayerOp router = matmul("router", 512, 4096);
  router.sixteen_bit = true;
  const std::vector<LayerOp> ops =
      with_fp4_overrides(super_recipe(), {router, matmul("latent down", 1024, 4096),
                                          matmul("expert up", 2688, 1024),
                                          matmul("shared expert up", 5376, 4096),
                                          matmul("latent up", 4096, 1024)});
  CHECK(ops[0].sixteen_bit);
  CHECK_FALSE(ops[0].mxfp8);
  CHECK(ops[1].sixteen_bit);
  CHECK_FALSE(ops[2].sixteen_bit);  // the routed and shared experts in NVFP4
  CHECK_FALSE(ops[3].sixteen_bit);
  CHECK(ops[4].sixteen_bit);
  // Without overrides nothing moves.
  const std::vector<LayerOp> none = with_fp4_overrides({}, {gather(), matmul("qkv", 2560, 4096)});
  CHECK_FALSE(none[1].sixteen_bit);
  CHECK(none[0].bytes == 0.5625 * kTokens * kHidden);
}

TEST_CASE("an MXFP8 matmul in an NVFP4 layer casts MXFP8's copies, a 16-bit one none") {
  std::vector<LayerOp> ops = {matmul("mamba in_proj", 9248, 4096),
                              matmul("mamba out_proj", 4096, 8192), matmul("qkv", 2560, 4096)};
  const Fp8CastBytes nvfp4 = fp8_cast_bytes(ops, s::NVFP4, true, 1);
  ops = with_fp4_overrides(super_recipe(), ops);
  const Fp8CastBytes mixed = fp8_cast_bytes(ops, s::NVFP4, true, 1);
  const double fp4 = fp8_cast_bytes_per_element(s::NVFP4, true);
  const double mx = fp8_cast_bytes_per_element(s::MXFP8, true);
  // in_proj's input (m x k) and output gradient (m x n) in NVFP4; out_proj's in MXFP8.
  CHECK(mixed.forward == Approx(kTokens * (fp4 * 4096 + mx * 8192)));
  CHECK(mixed.backward == Approx(kTokens * (fp4 * 9248 + mx * 4096)));
  CHECK(nvfp4.forward == Approx(kTokens * fp4 * (4096 + 8192 + 4096)));
}

TEST_CASE("the modules name their matmuls and the models that have them") {
  CHECK(quantized_module_ops(s::ATTENTION_QKV) == std::vector<std::string>{"qkv", "q", "k", "v"});
  CHECK(quantized_module_ops(s::MAMBA_OUT_PROJECTION) ==
        std::vector<std::string>{"mamba out_proj"});
  CHECK(quantized_module_ops(s::QUANTIZED_MODULE_UNSPECIFIED).empty());
  s::Transformer dense;
  dense.set_num_layers(32);
  CHECK(has_quantized_module(dense, s::ATTENTION_QKV));
  CHECK_FALSE(has_quantized_module(dense, s::LATENT_PROJECTIONS));
  CHECK_FALSE(has_quantized_module(dense, s::MAMBA_OUT_PROJECTION));
  s::Transformer mamba_only;
  mamba_only.set_num_layers(2);
  mamba_only.set_hybrid_layer_pattern("ME");
  mamba_only.mutable_mamba();
  mamba_only.set_moe_latent_size(1024);
  CHECK_FALSE(has_quantized_module(mamba_only, s::ATTENTION_OUT));
  CHECK(has_quantized_module(mamba_only, s::MAMBA_OUT_PROJECTION));
  CHECK(has_quantized_module(mamba_only, s::LATENT_PROJECTIONS));
  s::TrainingJob job;
  CHECK(first_sixteen_bit_layer(mamba_only, job) == 2);
  mamba_only.set_num_layers(88);
  job.mutable_fp4_overrides()->set_sixteen_bit_last_layers(14);
  CHECK(first_sixteen_bit_layer(mamba_only, job) == 74);
}

}  // namespace
}  // namespace clustersim
