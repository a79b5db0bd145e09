// Tests of serving DeepSeek V4 Flash's compressed sparse attention: the stage's layer groups by
// compress ratio, and one layer's attention work per iteration in closed form (TP 8: 8 query
// heads a rank, f = 4 x 512 x 8 = 16,384 FLOPs a query-entry pair, of which the gather kernel's
// 64-head blocks compute 4 x 512 x 64 = 131,072; 584-byte entries, 132-byte indexer keys, 64
// index heads of 128).
#include "sim/serve/compressed_attention_time.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <tuple>
#include <vector>

#include "sim/workload/layer_ops.h"
#include "sim/workload/parameter_count.h"
#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

namespace s = schema;

const s::Transformer& v4_flash_model() {
  return testing::shipped_catalog().models().find("deepseek-v4-flash")->value->transformer();
}

InferenceShape v4_flash_at(int tensor_parallel) {
  return inference_shape(v4_flash_model(), {s::FP8, s::FP8, s::FP8}, tensor_parallel, 1, 0);
}
InferenceShape v4_flash_tp8() { return v4_flash_at(8); }

constexpr double kPair = 4.0 * 512 * 8;
constexpr double kGatheredPair = 4.0 * 512 * 64;  // the 8 heads padded to the kernel's 64
constexpr double kFlashEntry = 584, kFlashIndexerKey = 132;

// One decoding sequence at `context` tokens.
IterationWork decoding_at(int64_t context) {
  IterationWork w{1, 1, 0, static_cast<double>(context)};
  w.window_decode_context = static_cast<double>(std::min<int64_t>(context, 128));
  w.selected_entries = static_cast<double>(std::min<int64_t>(512, context / 4));
  return w;
}

// A group's matrices as (n, k, expert), sorted.
std::vector<std::tuple<int64_t, int64_t, bool>> matrices(const LayerGroup& g) {
  std::vector<std::tuple<int64_t, int64_t, bool>> out;
  for (const LayerMatmul& m : g.matmuls) out.emplace_back(m.n, m.k, m.expert);
  std::sort(out.begin(), out.end());
  return out;
}

// At TP 8, per layer: q down (1024 of h 4096), q up (8 heads x 512 of 1024), the key-value head
// (512 of h), the rank's output group (1024 of its 8 heads x 512), attention out (h of 1024),
// two hyper-connection projections (4 x 4 + 2 x 4 of 4 x h), the router (256 of h), the shared
// expert's up (2 x 2048 / 8 of h) and down (h of 256), each routed expert's the same; at ratio 4
// the compressor (2 x 2 x 512 of h, its pools overlapping), the indexer's query (64 x 128 of
// 1024), weights (64 of h) and compressor (2 x 2 x 128 of h); at ratio 128 the compressor (2 x
// 512 of h).
TEST_CASE("a stage's layers are grouped by compress ratio, each with its own attention matrices") {
  const InferenceShape shape = v4_flash_tp8();
  REQUIRE(shape.groups.size() == 3);  // every layer has experts
  const std::vector<std::tuple<int64_t, int64_t, bool>> common = {
      {1024, 4096, false}, {4096, 1024, false}, {512, 4096, false},  {1024, 4096, false},
      {4096, 1024, false}, {24, 16384, false},  {24, 16384, false},  {256, 4096, false},
      {512, 4096, false},  {4096, 256, false},  {512, 4096, true},   {4096, 256, true}};
  const std::vector<std::vector<std::tuple<int64_t, int64_t, bool>>> own = {
      {}, {{2048, 4096, false}, {8192, 1024, false}, {64, 4096, false}, {512, 4096, false}},
      {{1024, 4096, false}}};
  const int ratios[] = {0, 4, 128}, layers[] = {2, 21, 20};
  for (int i = 0; i < 3; ++i) {
    const LayerGroup& g = shape.groups[i];
    INFO(ratios[i]);
    CHECK(g.compress_ratio == ratios[i]);
    CHECK(g.layers == layers[i]);
    LayerGroup expected;
    for (const auto& [n, k, expert] : common) expected.matmuls.push_back({n, k, expert});
    for (const auto& [n, k, expert] : own[i]) expected.matmuls.push_back({n, k, expert});
    CHECK(matrices(g) == matrices(expected));
  }
  CHECK(shape.query_heads == 8);
  CHECK(shape.attention_flops_per_pair == kPair);
  CHECK(shape.window_tokens == 128);
  CHECK(shape.windowed_layers == 0);
}

// The groups' matrices hold the model: at TP 1 in 16 bits, twice its 284,332,230,231 parameters
// (parameter_count) but the norm vectors' few million (each layer's q and kv norms, the
// compressors' and the indexer's, the hyper-connections' scales and biases, the attention sinks)
// and what the shape stores at 16 bits anyway.
TEST_CASE("the ratio groups' weights are the model's parameters") {
  const s::Model& m = *testing::shipped_catalog().models().find("deepseek-v4-flash")->value;
  const InferenceShape shape = inference_shape(m.transformer(), {}, 1, 1, 0);
  CHECK(shape.weight_bytes == Approx(2.0 * static_cast<double>(parameter_count(m))).epsilon(2e-5));
}

TEST_CASE("decode at 128k: the window, the selected or all compressed entries, the indexer's scan") {
  const InferenceShape shape = v4_flash_tp8();
  const IterationWork w = decoding_at(131072);
  const CompressedAttentionWork window = compressed_attention_work(shape, w, 0);
  CHECK(window.read_bytes == 128 * kFlashEntry);
  CHECK(window.read_flops == 128 * kGatheredPair);
  CHECK(window.indexer_flops == 0);
  CHECK(window.prompt_flops == 0);
  const CompressedAttentionWork sparse = compressed_attention_work(shape, w, 4);
  CHECK(sparse.read_bytes == (128 + 512) * kFlashEntry);
  CHECK(sparse.read_flops == (128 + 512) * kGatheredPair);
  CHECK(sparse.indexer_bytes == 32768 * (kFlashIndexerKey + 4));  // the keys, the FP32 scores
  CHECK(sparse.indexer_flops == 2.0 * 64 * 128 * 32768);
  const CompressedAttentionWork pooled = compressed_attention_work(shape, w, 128);
  CHECK(pooled.read_bytes == (128 + 1024) * kFlashEntry);
  CHECK(pooled.read_flops == (128 + 1024) * kGatheredPair);
  CHECK(pooled.indexer_bytes == 0);
}

// Past 2048 tokens a ratio-4 layer reads the same 640 entries; only the indexer's scan grows,
// linearly; a window-only layer's work is the same at every context past its window.
TEST_CASE("what grows with the context in decode is the indexer's scan and the 1/128 entries") {
  const InferenceShape shape = v4_flash_tp8();
  const CompressedAttentionWork a = compressed_attention_work(shape, decoding_at(131072), 4);
  const CompressedAttentionWork b = compressed_attention_work(shape, decoding_at(1048576), 4);
  CHECK(b.read_bytes == a.read_bytes);
  CHECK(b.indexer_bytes == 8 * a.indexer_bytes);
  CHECK(b.indexer_flops == 8 * a.indexer_flops);
  CHECK(compressed_attention_work(shape, decoding_at(1048576), 0).read_bytes ==
        compressed_attention_work(shape, decoding_at(4096), 0).read_bytes);
  CHECK(compressed_attention_work(shape, decoding_at(1048576), 128).read_bytes ==
        (128 + 8192) * kFlashEntry);
}

// A 4096-token prompt: the causal window pairs, plus at ratio 128 the causal pairs / 128; at
// ratio 4 its queries' selected entries gathered, and the scoring of the causal pairs / 4.
TEST_CASE("prefill: the window's pairs, the compressed pairs, the selected entries gathered") {
  const InferenceShape shape = v4_flash_tp8();
  IterationWork w{4096, 1};
  add_prompt_chunk(&w, 0, 4096, 128);
  w.selected_entries = 1572352;  // indexer_selections(512, 0, 4096)
  const double window_pairs = causal_pairs(4096, 128), pairs = causal_pairs(4096, 0);
  CHECK(w.window_attention_pairs == window_pairs);
  CHECK(compressed_attention_work(shape, w, 0).prompt_flops == window_pairs * kPair);
  CHECK(compressed_attention_work(shape, w, 0).read_bytes == 0);
  CHECK(compressed_attention_work(shape, w, 128).prompt_flops ==
        Approx((window_pairs + pairs / 128) * kPair));
  const CompressedAttentionWork sparse = compressed_attention_work(shape, w, 4);
  CHECK(sparse.prompt_flops == window_pairs * kPair);
  CHECK(sparse.read_bytes == 1572352 * kFlashEntry);
  CHECK(sparse.indexer_flops == Approx(2.0 * 64 * 128 * pairs / 4));
  CHECK(sparse.indexer_bytes == Approx(4 * pairs / 4));  // no decoding token: no keys read
}


// The gather kernel computes 64-head blocks, so a rank's FLOPs for its reads are the same at TP 1
// (64 heads), 2, 4 and 8 (32, 16 and 8 heads padded to 64); its bytes too (every rank reads the
// one key-value head).
TEST_CASE("the gather kernel's FLOPs a rank are 64 heads' at every tensor-parallel degree") {
  const IterationWork w = decoding_at(131072);
  const InferenceShape whole = v4_flash_at(1);
  REQUIRE(whole.query_heads == 64);
  const CompressedAttentionWork unpadded = compressed_attention_work(whole, w, 4);
  CHECK(unpadded.read_flops == (128 + 512) * kGatheredPair);
  for (const int tp : {2, 4, 8}) {
    INFO(tp);
    const InferenceShape shape = v4_flash_at(tp);
    CHECK(shape.query_heads == 64 / tp);
    CHECK(compressed_attention_work(shape, w, 4).read_flops == unpadded.read_flops);
    CHECK(compressed_attention_work(shape, w, 4).read_bytes == unpadded.read_bytes);
  }
}

// The serving model's decode read against FlashMLA's sparse decoding kernel at the shape its rates
// were published at: deepseek-ai/FlashMLA@9241ae3ef9bac614dd25e45e507e089f888280e0
// docs/20250929-hopper-fp8-sparse-deep-dive.md "Performance", batch 128, 128 heads, s_q 2 (256
// decoding queries), top-2048, d_qk 576, d_v 512, 656-byte FP8 entries, in the kernel's FLOP count
// 2 x heads x (576 + 512) a pair: 410 TFLOP/s on an H800 SXM5, and 250 for the kernel before it,
// whose 64-head thread blocks each dequantized every entry (the crossover that splits the
// dequantization between a 128-head query's two blocks is what lifts it to 410). A query of 64
// heads or fewer, V4 Flash's at every TP, has one block (csrc/sm90/decode/sparse_fp8/config.h:
// CLUSTER_SIZE = NUM_HEADS / 64) and no partner to share with: the 250 regime.
// On the H100 SXM's fits (the H800's silicon: the deep dive's 989 TFLOP/s and 132 SMs, and its
// 3.35 TB/s; the catalog's H800 has no fitted efficiencies) under the tensorrt-llm runtime.
ComputeModel h100_serving_compute() {
  const Catalog& catalog = testing::shipped_catalog();
  const s::Gpu& gpu = *catalog.gpus().find("H100-SXM5-80GB")->value;
  const s::ServingRuntime& serving = *catalog.serving_runtimes().find("tensorrt-llm")->value;
  const auto fit = std::find_if(serving.gpu().begin(), serving.gpu().end(),
                                [&](const s::ServingGpuFit& f) { return f.gpu() == gpu.name(); });
  REQUIRE(fit != serving.gpu().end());
  return ComputeModel::serving(gpu, s::FP8, *catalog.runtimes().find("default")->value,
                               fit->compute_fraction(), fit->memory_fraction());
}

TEST_CASE("the decode read runs FlashMLA's sparse decoding at its published H800 rate") {
  InferenceShape shape;
  shape.query_heads = 128;
  shape.head_dim = 512;
  shape.decode_attention_flops_per_pair = 2.0 * 128 * (576 + 512);
  shape.compressed_entry_bytes = 656;
  IterationWork w{256, 256};
  w.selected_entries = 256.0 * 2048;
  const ComputeModel compute = h100_serving_compute();
  const CompressedAttentionWork work = compressed_attention_work(shape, w, 4);
  CHECK(work.read_flops == w.selected_entries * shape.decode_attention_flops_per_pair);
  // Compute-bound, as the deep dive says: 425 FLOPs a byte.
  CHECK(compute.fused_attention(work.read_flops).seconds() >
        4 * compute.memory_bound(work.read_bytes).seconds());
  const double tflops =
      work.read_flops / compressed_attention_time(compute, shape, w, 4).seconds() / 1e12;
  CHECK(tflops == Approx(250).epsilon(0.15));  // a 64-head block dequantizing every entry
  CHECK(tflops < 410);  // the 128-head crossover kernel, which no V4 Flash rank runs
}

}  // namespace
}  // namespace clustersim
