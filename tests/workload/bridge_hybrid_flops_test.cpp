// Tests of Megatron-Bridge's hybrid-model FLOPs formula against the figures its tables print.
#include "sim/workload/bridge_hybrid_flops.h"

#include <catch2/catch.hpp>

#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

const schema::Transformer& shipped(const char* name) {
  return testing::shipped_catalog().models().find(name)->value->transformer();
}

// flop_utils.py hybrid_flops' layers, forward per token (a heads of d, k KV heads; Mamba's inner
// width 2 h, G groups, state N; experts of f, top-k, shared width f_s, latent l or none).
double attention(double h, double a, double k, double d, double s) {
  return 4 * h * (a * d / h) * (h + h * k / a + s / 2);
}
double mamba(double h, double g, double n, double heads) {
  const double d_in = 2 * h;
  return 2 * h * (2 * d_in + 2 * g * n + heads) + 7 * d_in * n + 2 * d_in * h;
}

TEST_CASE("Megatron-Bridge's hybrid formula gives the 22.28 GFLOP a token of Nemotron 3 Nano") {
  // 23 Mamba, 6 attention, 23 MoE layers: 3 x (... + 2 h V). GB300 26.04 prints 849 TFLOP/s at
  // 38,102 tokens/s per GPU: 22.28 GFLOP a token.
  const double h = 2688, s = 8192, v = 131072;
  const double moe = 4 * h * 1856 * 6 + 4 * h * 3712;
  const double published =
      3 * (6 * attention(h, 32, 2, 128, s) + 23 * mamba(h, 8, 128, 64) + 23 * moe + 2 * h * v);
  const TransformerFlops bridge = bridge_hybrid_flops(shipped("nemotron3-nano-30b-a3b"), 8192, 1);
  CHECK(bridge.model_per_token() == Approx(published));
  CHECK(bridge.model_per_token() == Approx(849e12 / 38102).epsilon(0.001));
  // 7.1% above the exact count: chiefly the Mamba layers' inner width 2 h (5,376) against the
  // model's 64 heads x 64 (4,096), less the router.
  CHECK(bridge.model_per_token() / transformer_flops(shipped("nemotron3-nano-30b-a3b"), 8192)
                                       .model_per_token() ==
        Approx(1.071).epsilon(0.002));
}

TEST_CASE("Megatron-Bridge's hybrid formula counts Nemotron 3 Super's MTP passes: 84.7 GFLOP") {
  // 40 Mamba, 8 attention, 40 LatentMoE layers and two MTP passes of "*E", each with its logits.
  // GB300 26.04 prints 783 TFLOP/s at 9,243 tokens/s per GPU: 84.71 GFLOP a token.
  const double h = 4096, s = 8192, v = 131072, l = 1024;
  const double moe = 4 * l * 2688 * 22 + 4 * h * l + 4 * h * 5376;
  const double published = 3 * ((8 + 2) * attention(h, 32, 2, 128, s) +
                                40 * mamba(h, 8, 128, 128) + (40 + 2) * moe + 3 * 2 * h * v);
  const TransformerFlops bridge =
      bridge_hybrid_flops(shipped("nemotron3-super-120b-a12b"), 8192, 1);
  CHECK(bridge.model_per_token() == Approx(published));
  CHECK(bridge.model_per_token() == Approx(783e12 / 9243).epsilon(0.001));
  // Lightning: Nano and its two "*E" passes. GB200 26.08: 807 TFLOP/s at 28,672 tokens/s.
  CHECK(bridge_hybrid_flops(shipped("nemotron3.5-lightning-30b-a3b"), 8192, 1).model_per_token() ==
        Approx(807e12 / 28672).epsilon(0.001));
}

TEST_CASE("Megatron-Bridge's hybrid formula pads the vocabulary to 128 x tensor-parallel ranks") {
  schema::Transformer t = shipped("nemotron3-nano-30b-a3b");
  t.set_vocab_size(131072 - 1);
  const double logits = 3 * 2 * 2688.0;
  CHECK(bridge_hybrid_flops(t, 8192, 4).model_per_token() -
            bridge_hybrid_flops(shipped("nemotron3-nano-30b-a3b"), 8192, 4).model_per_token() ==
        Approx(0).margin(1));
  t.set_vocab_size(131072 + 1);
  CHECK(bridge_hybrid_flops(t, 8192, 4).model_per_token() -
            bridge_hybrid_flops(shipped("nemotron3-nano-30b-a3b"), 8192, 4).model_per_token() ==
        Approx(logits * 512));
}

}  // namespace
}  // namespace clustersim
