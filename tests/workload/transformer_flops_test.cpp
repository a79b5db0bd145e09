// Tests of per-token FLOPs against Narayanan et al. SC'21's closed form for GPT models.
#include "sim/workload/transformer_flops.h"

#include <catch2/catch.hpp>

#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

TEST_CASE("GPT model FLOPs equal 72 B s l h^2 (1 + s/6h + V/12lh) for every SC'21 Table 1 model") {
  for (const char* name : {"gpt-1.7b", "gpt-18b", "gpt-145b", "gpt-1t"}) {
    INFO(name);
    const auto& t = testing::shipped_catalog().models().find(name)->value->transformer();
    const double s = 2048, l = t.num_layers(), h = t.hidden_size(), v = t.vocab_size();
    const TransformerFlops f = transformer_flops(t, 2048, AttentionCount::kFullSquare);
    // Per token (B s tokens): 72 l h^2 (1 + s/6h + V/12lh).
    CHECK(f.model_per_token() == Approx(72 * l * h * h * (1 + s / (6 * h) + v / (12 * l * h))));
    // With full recomputation (the paper's Eq. 3): 96 l h^2 (1 + s/6h + V/16lh).
    CHECK(f.with_full_recompute_per_token() ==
          Approx(96 * l * h * h * (1 + s / (6 * h) + v / (16 * l * h))));
  }
}

TEST_CASE("causal attention FLOPs are half the full count plus the diagonal") {
  // A decoder's query i attends to keys 0..i: s (s + 1) / 2 pairs of the s^2, per head
  // 2 x 2 x head_dim FLOPs each.
  const auto& llama = testing::shipped_catalog().models().find("llama3-8b")->value->transformer();
  const double s = 8192, a = 32, d = 128;
  const TransformerFlops full = transformer_flops(llama, 8192, AttentionCount::kFullSquare);
  const TransformerFlops causal = transformer_flops(llama, 8192);
  CHECK(full.attention_forward_per_token == Approx(4 * s * a * d));
  CHECK(causal.attention_forward_per_token * s == Approx(4 * a * d * (s * s / 2 + s / 2)));
  CHECK(full.layer_forward_per_token - causal.layer_forward_per_token ==
        Approx(4 * a * d * (s - 1) / 2));
  // An encoder's attention is bidirectional: counted whole either way.
  const auto& bert = testing::shipped_catalog().models().find("bert-large")->value->transformer();
  CHECK(transformer_flops(bert, 512).attention_forward_per_token ==
        transformer_flops(bert, 512, AttentionCount::kFullSquare).attention_forward_per_token);
}

TEST_CASE("a sliding window counts w (w + 1) / 2 + (s - w) w pairs in its layers") {
  // gpt-oss-120b: 64 heads of 64, every other layer (18 of 36) within a window of 128 tokens.
  const auto& oss = testing::shipped_catalog().models().find("gpt-oss-120b")->value->transformer();
  const double s = 4096, w = 128, a = 64, d = 64;
  const double band = (w * (w + 1) / 2 + (s - w) * w) / s, full = (s + 1) / 2;
  CHECK(transformer_flops(oss, 4096).attention_forward_per_token ==
        Approx(4 * a * d * (band + full) / 2));
  // A sequence no longer than the window attends causally everywhere.
  CHECK(transformer_flops(oss, 128).attention_forward_per_token == Approx(4 * a * d * 129 / 2.0));
}

TEST_CASE("chunked layers count the sum of their chunks' causal pairs") {
  // Llama 4 Scout: 40 heads of 128; 36 of 48 layers within chunks of 8192, 12 global. At 32768
  // tokens each chunked query sees (4 x 8192 x 8193 / 2) / 32768 keys on average.
  const auto& scout =
      testing::shipped_catalog().models().find("llama4-scout")->value->transformer();
  const double s = 32768, c = 8192, a = 40, d = 128;
  const double chunked = 4 * c * (c + 1) / 2 / s, full = (s + 1) / 2;
  CHECK(transformer_flops(scout, 32768).attention_forward_per_token ==
        Approx(4 * a * d * (36 * chunked + 12 * full) / 48));
  // At 8192 tokens the chunk is the sequence: every layer plain causal.
  CHECK(transformer_flops(scout, 8192).attention_forward_per_token ==
        Approx(4 * a * d * 8193 / 2.0));
}

TEST_CASE("a MoE layer counts only the routed experts, plus the router") {
  const auto& mixtral =
      testing::shipped_catalog().models().find("mixtral-8x7b")->value->transformer();
  const double h = 4096, f = 14336;
  const TransformerFlops flops = transformer_flops(mixtral, 4096);
  auto dense = mixtral;
  dense.clear_moe();
  const TransformerFlops dense_flops = transformer_flops(dense, 4096);
  CHECK(flops.layer_forward_per_token - dense_flops.layer_forward_per_token ==
        Approx(2 * h * f * 3 + 2 * h * 8));  // one more expert of 3 matrices, router to 8
}

TEST_CASE("Megatron-Bridge v0.3's formula gives the 27.2 GFLOP a token of gpt-oss's 26.02 rows") {
  // flop_utils.py: 12 l h (f k) for the experts (two matrices: the gate is not SiLU), 12 l h^2
  // (1 + g/a + s/2h) (a d / h) for attention over s/2 keys in every layer, 6 h V for the logits;
  // no router. 14.33 + 9.36 + 3.47 GFLOP; the tables print 219 TFLOP/s at 8,047 tokens/s.
  const auto& oss = testing::shipped_catalog().models().find("gpt-oss-120b")->value->transformer();
  const double l = 36, h = 2880, f = 2880, k = 4, s = 4096, a = 64, g = 8, d = 64, v = 201088;
  const double published =
      12 * l * h * f * k + 12 * l * h * h * (1 + g / a + s / h / 2) * (a * d / h) + 6 * h * v;
  const TransformerFlops bridge =
      transformer_flops(oss, 4096, AttentionCount::kCausal, FlopsFormula::kBridgeV03);
  CHECK(bridge.model_per_token() == Approx(published));
  CHECK(bridge.model_per_token() == Approx(27.16e9).epsilon(0.001));
  // The exact count: three expert matrices, the windows' band, the router: 32.7 GFLOP.
  CHECK(transformer_flops(oss, 4096).model_per_token() == Approx(32.70e9).epsilon(0.002));
  // A SiLU-gated model loses only its router under the formula.
  const auto& qwen =
      testing::shipped_catalog().models().find("qwen3-30b-a3b")->value->transformer();
  const double router = 3 * 48 * 2 * 2048.0 * 128, diagonal = 3 * 48 * 2 * 32 * 128.0;
  CHECK(transformer_flops(qwen, 4096).model_per_token() -
            transformer_flops(qwen, 4096, AttentionCount::kCausal, FlopsFormula::kBridgeV03)
                .model_per_token() ==
        Approx(router + diagonal));
}

}  // namespace
}  // namespace clustersim
