// Tests of what serving takes of DeepSeek V4's layers: the inference forward of the attention
// block and hyper-connections (LayerShape::inference), closed forms on DeepSeek V4 Flash (h 4096,
// 64 heads of 512, q_lora 1024, 8 output groups of 1024, index heads 64 of 128, 4 streams), and
// the serving groups' weights against the parameter count.
#include "sim/workload/compressed_attention_groups.h"

#include <catch2/catch.hpp>
#include <string>

#include "sim/workload/compressed_sparse_attention.h"
#include "sim/workload/layer_ops.h"
#include "sim/workload/parameter_count.h"
#include "tests/testing/layer_op_lookup.h"
#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

using testing::find_op;

const schema::Transformer& served_v4_flash() {
  return testing::shipped_catalog().models().find("deepseek-v4-flash")->value->transformer();
}

// The attention block and one hyper-connection mix of a layer of `ratio` on 4096 tokens.
std::vector<LayerOp> inference_block(int ratio, bool inference) {
  LayerShape shape{4096, 1, 1, false};
  shape.compress_ratio = ratio;
  shape.inference = inference;
  std::vector<LayerOp> ops;
  compressed_sparse_attention_ops(served_v4_flash(), shape, ratio, &ops);
  hyper_connection_mix_ops(served_v4_flash(), 4096, &ops);
  return ops;
}

TEST_CASE("an inference forward of a V4 layer runs no training-only kernel") {
  for (int ratio : {0, 4, 128}) {
    INFO(ratio);
    const std::vector<LayerOp> ops = inference_block(ratio, true);
    for (const LayerOp& op : ops) {
      INFO(op.name);
      // No loss, no gradient: every kernel does forward work.
      CHECK(op.name.find("loss") == std::string::npos);
      CHECK(op.name.find("gradient") == std::string::npos);
      if (op.kind == LayerOp::Kind::kMemory) CHECK(op.bytes > 0);
    }
    // The grouped output is a quantized weight's GEMM (vLLM: FP8 wo_a), not training's 16 bits.
    CHECK_FALSE(find_op(ops, "output groups")->sixteen_bit);
    CHECK(find_op(inference_block(ratio, false), "output groups")->sixteen_bit);
    // The query head norm runs in inference too (fused with the rotary embedding).
    CHECK(find_op(ops, "q head norm")->bytes == Approx(2 * 2.0 * 4096 * 64 * 512));
  }
  // Training builds the sparse loss at ratio 4; inference does not.
  CHECK(find_op(inference_block(4, false), "indexer loss") != nullptr);
  CHECK(find_op(inference_block(4, true), "indexer loss target") == nullptr);
  // The compressors' pooling one fused pass: 2 bytes an element of both 16-bit outputs read, 6 an
  // element of each entry written with its norm (training's eager kernels: 28 and 14 at ratio 128).
  CHECK(find_op(inference_block(128, true), "compressor pooling")->bytes ==
        Approx(2 * 2.0 * 4096 * 512 + 6.0 * 32 * 512));
  const std::vector<LayerOp> four = inference_block(4, true);
  CHECK(find_op(four, "compressor pooling")->bytes ==
        Approx(2 * 2.0 * 4096 * 2 * 512 + 6.0 * 1024 * 512));
  CHECK(find_op(four, "indexer compressor pooling")->bytes ==
        Approx(2 * 2.0 * 4096 * 2 * 128 + 6.0 * 1024 * 128));
}

TEST_CASE("a serving group of V4 layers: a token's bytes and the matrices as inference runs them") {
  const double h = 4096, q = 1024, d = 512, a = 64;
  // Layer 3 (ratio 128) alone over an empty MLP group.
  const std::vector<LayerGroup> split =
      compressed_attention_groups(served_v4_flash(), 1, 3, 1, {LayerGroup{1, {}, 0, 0}});
  REQUIRE(split.size() == 1);
  const LayerGroup& g = split[0];
  CHECK(g.compress_ratio == 128);
  // q norm, the query head norm, kv norm, the fused pooling; two mixes and two updates.
  const double hyper = 2 * (2.0 * 5 * h + 2.0 * 9 * h);
  CHECK(g.memory_bytes_per_token ==
        Approx(4 * q + 2 * 2.0 * a * d + 4 * d + (4 * d + 6 * d / 128) + hyper));
  double parameters = 0;
  for (const LayerMatmul& m : g.matmuls) parameters += static_cast<double>(m.n) * m.k;
  // q down, q up, kv, the compressor, the 8 output groups, the output, two mix projections.
  CHECK(parameters == h * q + q * a * d + h * d + 2 * h * d + (a * d / 8) * (8 * 1024) +
                          8 * 1024 * h + 2 * 4 * h * 24);
}

TEST_CASE("V4 Flash served in FP8: its weights' bytes are its parameter count's matrices") {
  const schema::Transformer& t = served_v4_flash();
  const TensorFormats fp8{schema::FP8, schema::FP8, schema::FP8};
  const InferenceShape shape = inference_shape(t, fp8, 1, 1, 0);
  const double h = 4096, q = 1024, d = 512;
  // The vectors the serving shape leaves out (inference_shape.h): each layer's q and kv norms,
  // 64 sinks, the hyper-connections' biases and scales (2 x (24 + 3)); the compressors' position
  // biases and norms (ratio 4: 4 x 2 d + d and the indexer's 4 x 2 x 128 + 128; ratio 128:
  // 128 d + d). Its two block norms a layer are counted, 16-bit.
  const double vectors = 43 * (q + d + 64 + 2 * (24 + 3) + 2 * h) +
                         21 * (4 * 2 * d + d + 4 * 2 * 128 + 128) + 20 * (128 * d + d);
  const double matrices = static_cast<double>(layer_parameters(t, 0, 43).all) - vectors;
  CHECK(shape.weight_bytes - shape.embedding_and_head_bytes == matrices + 43 * 2 * h * 2);
}

}  // namespace
}  // namespace clustersim
