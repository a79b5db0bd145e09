// Tests of DeepSeek V4's serving KV cache: closed forms on DeepSeek V4 Flash (43 layers: 2 of
// ratio 0, 21 of ratio 4, 20 of ratio 128; a 128-token window; head_dim 512 with 64 rotary; index
// keys of 128; top-512), against DeepSeek-V3's latent cache.
#include "sim/workload/compressed_kv_cache.h"

#include <algorithm>
#include <catch2/catch.hpp>

#include "sim/workload/inference_shape.h"
#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

namespace s = schema;

const s::Transformer& catalog_model(const char* name) {
  return testing::shipped_catalog().models().find(name)->value->transformer();
}

constexpr double kEntry = 448 + 2 * 64 + 7 + 1;  // FP8 non-rotary, BF16 rotary, scales, pad
constexpr double kIndexerKey = 128 + 4;           // FP8, one FP32 scale

// Window entries of every layer, plus each ratio-4 layer's s / 4 entries and indexer keys and
// each ratio-128 layer's s / 128 entries, for s >= 128.
double flash_sequence_bytes(int64_t s) {
  return 43 * 128 * kEntry + 21 * static_cast<double>(s / 4) * (kEntry + kIndexerKey) +
         20 * static_cast<double>(s / 128) * kEntry;
}

TEST_CASE("an entry is stored as vLLM's FP8 sparse cache stores it, an indexer key in FP8") {
  const s::Transformer& t = catalog_model("deepseek-v4-flash");
  CHECK(compressed_entry_bytes(t, s::FP8) == 584);
  CHECK(compressed_entry_bytes(t, s::BF16) == 1024);  // 512 16-bit elements
  CHECK(indexer_key_bytes(t) == 132);
}

TEST_CASE("a layer holds its window, its compressed entries and, at ratio 4, its indexer keys") {
  const s::Transformer& t = catalog_model("deepseek-v4-flash");
  for (int64_t c : {4096, 131072, 1048576}) {
    INFO(c);
    CHECK(compressed_kv_layer_bytes(t, 0, c, s::FP8) == 128 * kEntry);
    CHECK(compressed_kv_layer_bytes(t, 4, c, s::FP8) ==
          128 * kEntry + static_cast<double>(c / 4) * (kEntry + kIndexerKey));
    CHECK(compressed_kv_layer_bytes(t, 128, c, s::FP8) ==
          128 * kEntry + static_cast<double>(c / 128) * kEntry);
  }
  // Shorter than the window: its tokens only; entries whole ones (floor).
  CHECK(compressed_kv_layer_bytes(t, 0, 100, s::FP8) == 100 * kEntry);
  CHECK(compressed_kv_layer_bytes(t, 4, 103, s::FP8) == 103 * kEntry + 25 * (kEntry + kIndexerKey));
  CHECK(compressed_kv_layer_bytes(t, 128, 127, s::FP8) == 127 * kEntry);
}

// 18,984,960 bytes at 4k, 507,874,304 (484 MiB) at 128k, 4,040,494,080 (3.76 GiB) at 1M tokens:
// the per-token and per-sequence parts the serving memory counts add up to the layers' sum.
TEST_CASE("a sequence's KV cache at 4k, 128k and 1M tokens") {
  const s::Transformer& t = catalog_model("deepseek-v4-flash");
  const CompressedKvCache cache = compressed_kv_cache(t, 0, 43, s::FP8);
  CHECK(cache.bytes_per_sequence == 43 * 128 * kEntry);
  CHECK(cache.bytes_per_token == Approx(21 * (kEntry + kIndexerKey) / 4 + 20 * kEntry / 128));
  CHECK(cache.bytes_per_token == Approx(3850.25));
  const std::vector<std::pair<int64_t, double>> totals = {
      {4096, 18984960}, {131072, 507874304}, {1048576, 4040494080}};
  for (const auto& [c, bytes] : totals) {
    INFO(c);
    CHECK(flash_sequence_bytes(c) == bytes);
    double layers = 0;
    for (int layer = 0; layer < 43; ++layer) {
      const int ratio = layer < 2 ? 0 : (layer % 2 == 0 ? 4 : 128);
      layers += compressed_kv_layer_bytes(t, ratio, c, s::FP8);
    }
    CHECK(layers == bytes);
    CHECK(cache.bytes_per_token * static_cast<double>(c) + cache.bytes_per_sequence ==
          Approx(bytes).epsilon(1e-12));
  }
}

// DeepSeek-V3 caches 61 layers x (512 latent + 64 rotary) elements a token: 35,136 bytes in FP8,
// 9.1 times V4 Flash's 3,850 at long context; at 4k the windows' 3.2 MB a sequence still leave
// it 7.6 times smaller.
TEST_CASE("V4 Flash's cache per token is far below DeepSeek-V3's latent cache at long context") {
  const TensorFormats fp8{s::FP8, s::FP8, s::FP8};
  const InferenceShape v3 = inference_shape(catalog_model("deepseek-v3"), fp8, 8, 1, 0);
  const InferenceShape v4 = inference_shape(catalog_model("deepseek-v4-flash"), fp8, 8, 1, 0);
  CHECK(v3.kv_bytes_per_token == 61 * 576);
  CHECK(v3.kv_bytes_per_sequence == 0);
  CHECK(v4.kv_bytes_per_token == Approx(3850.25));
  CHECK(v4.kv_bytes_per_sequence == 43 * 128 * kEntry);
  const auto ratio = [&](double c) {
    return v3.kv_bytes_per_token * c / (v4.kv_bytes_per_token * c + v4.kv_bytes_per_sequence);
  };
  CHECK(ratio(4096) == Approx(7.58).epsilon(0.005));
  CHECK(ratio(131072) > 9.0);
  CHECK(ratio(1048576) > 9.1);
}

// Sum over p of min(512, floor(p / 4)) against the direct sum.
TEST_CASE("the entries the indexer selects for a chunk's queries, closed form") {
  const auto direct = [](int64_t past, int64_t chunk) {
    double sum = 0;
    for (int64_t p = past + 1; p <= past + chunk; ++p) sum += std::min<int64_t>(512, p / 4);
    return sum;
  };
  for (const auto& [past, chunk] : std::vector<std::pair<int64_t, int64_t>>{
           {0, 1}, {0, 3}, {0, 4}, {0, 4096}, {1000, 1}, {2047, 1}, {2048, 1}, {131071, 1},
           {1500, 3000}, {5, 2042}, {0, 2047}, {0, 2048}}) {
    INFO(past << " + " << chunk);
    CHECK(indexer_selections(512, past, chunk) == direct(past, chunk));
  }
  CHECK(indexer_selections(512, 0, 4096) == 1572352);
  CHECK(indexer_selections(512, 131071, 1) == 512);  // a decoding token at 128k: top-512
  CHECK(indexer_selections(512, 999, 1) == 250);     // at 1000 tokens: all 250 entries
}

}  // namespace
}  // namespace clustersim
