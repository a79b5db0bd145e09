// Tests of sim/serve/iteration_model: closed forms of decode and prefill iterations.
#include "sim/serve/iteration_model.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "sim/net/collective.h"
#include "sim/workload/expert_rank_load.h"
#include "sim/workload/inference_shape.h"
#include "tests/serve/serve_fixture.h"
#include "tests/testing/cluster.h"

namespace clustersim {
namespace {

namespace s = schema;
using testing::single_gpu_inputs;

// Decode at batch 1 streams every weight once: with B = HBM x memory_fraction and o the GPU's
// 16-bit matmul overhead (the runtime's default where the GPU has no fitted entry),
//   t = host + L (W_layer / B + 4 o + o_layer + KV_read / B + elementwise / B) + W_head / B + o
// (the matmuls' activations are a few KB; their compute, a tile of 16 rows, is below the memory
// time on the H100).
double batch1_decode_closed_form_s(const IterationInputs& in, const IterationModel& model,
                                   double context) {
  const InferenceShape& shape = model.largest_stage();
  const double bandwidth = in.gpu->memory_bandwidth_gb_per_s() * 1e9 * in.fit.memory_fraction();
  double layer_weights = 0;
  for (const LayerMatmul& m : shape.groups[0].matmuls) layer_weights += 2.0 * m.n * m.k;
  const double kv_read = context * 2 * shape.kv_heads * shape.head_dim * 2;
  double overhead_s = in.runtime->default_matmul_overhead_us() * 1e-6;
  for (const s::MatmulEfficiency& e : in.gpu->matmul_efficiency()) {
    if (e.precision() == sixteen_bit_format(*in.gpu)) overhead_s = e.overhead_us() * 1e-6;
  }
  return in.serving->iteration_overhead_us() * 1e-6 +
         shape.layers *
             ((layer_weights + kv_read + shape.groups[0].memory_bytes_per_token) / bandwidth +
              4 * overhead_s + in.fit.layer_overhead_us() * 1e-6) +
         2.0 * shape.vocab_shard * shape.hidden / bandwidth + overhead_s;
}

TEST_CASE("decode at batch 1 is weight-bandwidth bound") {
  const IterationInputs in = single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {});
  const IterationModel model(in);
  CHECK(model.iteration({1, 1, 0, 128}).seconds() ==
        Approx(batch1_decode_closed_form_s(in, model, 128)).epsilon(0.002));
}

// The H20 has 148 TFLOP/s against 4 TB/s: a 128-row tile's compute would take 3x the weights'
// stream at batch 1 (Llama-2-7B 20 ms a token, and INT4 weight-only no faster than FP16); in
// 16-row tiles a decode step stays within a few percent of the stream (its default fit's
// compute_fraction makes the largest GEMMs' 16 rows nearly as long as their bytes), and INT4
// weights, a quarter of the bytes, make it faster.
TEST_CASE("on a GPU of few FLOPs per byte decode at batch 1 still streams its weights") {
  const IterationInputs in = single_gpu_inputs("llama2-7b", "H20-SXM-96GB", {});
  const IterationModel fp16(in);
  const double fp16_s = fp16.iteration({1, 1, 0, 128}).seconds();
  CHECK(fp16_s == Approx(batch1_decode_closed_form_s(in, fp16, 128)).epsilon(0.05));
  const IterationModel int4(single_gpu_inputs("llama2-7b", "H20-SXM-96GB", {s::INT4, s::FP16, s::FP16}));
  CHECK(int4.iteration({1, 1, 0, 128}).seconds() < 0.8 * fp16_s);
}

// A serving GEMM's tile holds its tokens in the narrowest of 16, 32, 64 and 128 rows.
TEST_CASE("serving GEMMs of few tokens fill tiles of 16 to 128 rows") {
  CHECK(serving_row_tile(1) == 16);
  CHECK(serving_row_tile(16) == 16);
  CHECK(serving_row_tile(17) == 32);
  CHECK(serving_row_tile(64) == 64);
  CHECK(serving_row_tile(65) == 128);
  CHECK(serving_row_tile(128) == 128);
  CHECK(serving_row_tile(5000) == 128);
}

// One token picks 8 of DeepSeek-V3's 256 routed experts: a decode step at batch 1 streams, per
// expert layer, the attention's matrices, the router, those 8 experts and the shared one, and per
// dense layer its MLP (FP8 weights, context 0: no KV read), each expert layer with the fit's
// expert_layer_overhead_us o_expert besides:
//   t = host + sum over groups of L_g (W_g / B + n_g o + elementwise_g / B) + L o_layer
//       + L_expert o_expert + W_head / B + o
TEST_CASE("a mixture of experts' decode at batch 1 streams only the experts a token picks") {
  const IterationInputs in =
      single_gpu_inputs("deepseek-v3", "H100-SXM5-80GB", {s::FP8, s::FP8, s::FP8});
  const IterationModel model(in);
  const InferenceShape& shape = model.largest_stage();
  REQUIRE(shape.groups.size() == 2);
  const double bandwidth = in.gpu->memory_bandwidth_gb_per_s() * 1e9 * in.fit.memory_fraction();
  const double overhead_s = 5.4e-6;  // H100 matmul overhead_us (gpus.textproto)
  double expected = in.serving->iteration_overhead_us() * 1e-6 +
                    shape.layers * in.fit.layer_overhead_us() * 1e-6 +
                    shape.groups[1].layers * in.fit.expert_layer_overhead_us() * 1e-6 +
                    2.0 * shape.vocab_shard * shape.hidden / bandwidth + overhead_s;
  double all_experts_bytes = 0;
  for (const LayerGroup& g : shape.groups) {
    double bytes = g.memory_bytes_per_token;
    for (const LayerMatmul& m : g.matmuls) {
      bytes += (m.expert ? 8.0 : 1.0) * m.n * m.k;
      all_experts_bytes += g.layers * (m.expert ? 256.0 : 1.0) * m.n * m.k;
    }
    expected += g.layers * (bytes / bandwidth + g.matmuls.size() * overhead_s);
  }
  const double t = model.iteration({1, 1, 0, 0}).seconds();
  CHECK(t == Approx(expected).epsilon(0.002));
  CHECK(t < 0.1 * all_experts_bytes / bandwidth);
}

// Latent attention's absorbed decode scores each query head against the 576-wide latent: at
// long contexts its FLOPs, not its one read of the latent, set the time (DeepSeek-V3 on one H100:
// 128 heads x 2 (576 + 512) FLOPs against 576 bytes a context token).
TEST_CASE("latent attention's decode is the longer of its latent read and its FLOPs") {
  const IterationInputs in =
      single_gpu_inputs("deepseek-v3", "H100-SXM5-80GB", {s::FP8, s::FP8, s::FP8});
  const IterationModel model(in);
  const InferenceShape& shape = model.largest_stage();
  const double context = 64 * 4096.0;
  const double short_s = model.iteration({64, 64, 0, 0}).seconds();
  const double long_s = model.iteration({64, 64, 0, context}).seconds();
  const double bandwidth = in.gpu->memory_bandwidth_gb_per_s() * 1e9 * in.fit.memory_fraction();
  const double read_s = context * 576 / bandwidth;
  const double attention_rate = 989e12 * 0.332 * in.fit.compute_fraction();  // as above
  const double flops_s = context * shape.decode_attention_flops_per_pair / attention_rate;
  REQUIRE(flops_s > read_s);
  CHECK(long_s - short_s == Approx(shape.layers * flops_s).epsilon(1e-4));
}

// gpt-oss-120b attends within its last 128 tokens in 18 of its 36 layers: against the same model
// without the window, a decode step of 64 sequences of context 4096 reads, in each of those
// layers, 64 x (4096 - 128) tokens fewer; a prompt of 1024 scores pairs(1024) at 1024 keys there
// against the pairs within 128 at 128 keys, each at the H100's fitted causal forward rate for its
// keys S, 0.567 x S / (S + 387) of the 16-bit peak x the serving compute fraction.
TEST_CASE("sliding-window layers stop attention at the window") {
  IterationInputs in =
      single_gpu_inputs("gpt-oss-120b", "H100-SXM5-80GB", {s::FP8, s::FP8, s::FP8});
  const IterationModel windowed(in);
  s::Transformer dense_attention = *in.model;
  dense_attention.clear_sliding_window();
  in.model = &dense_attention;
  const IterationModel full(in);
  const InferenceShape& shape = windowed.largest_stage();
  REQUIRE(shape.windowed_layers == 18);
  REQUIRE(shape.window_tokens == 128);
  const double bandwidth = in.gpu->memory_bandwidth_gb_per_s() * 1e9 * in.fit.memory_fraction();
  const double heads_read =
      windowed.grouped_attention()
          ? shape.kv_heads
          : shape.kv_heads + (shape.query_heads - shape.kv_heads) *
                                 (in.fit.has_fp8_kv_reread_fraction() ? in.fit.fp8_kv_reread_fraction()
                                                                      : in.fit.kv_reread_fraction());
  IterationWork decode{64, 64, 0, 64 * 4096.0};
  decode.window_decode_context = 64 * 128.0;
  const double saved_s = 18 * 64 * (4096.0 - 128) * 2 * heads_read * 64 * 1 / bandwidth;
  CHECK(full.iteration(decode).seconds() - windowed.iteration(decode).seconds() ==
        Approx(saved_s).epsilon(1e-4));
  IterationWork prompt{1024, 1, 0, 0};
  add_prompt_chunk(&prompt, 0, 1024, 128);
  const double full_pairs = 1024 * 1025 / 2.0,
               window_pairs = 128 * 129 / 2.0 + (1024 - 128) * 128.0;
  REQUIRE(prompt.window_attention_pairs == window_pairs);
  const double peak_rate = 989e12 * 0.567 * in.fit.compute_fraction();
  const auto prompt_s = [&](double pairs, double keys) {
    return pairs * (1 + 387 / keys) * shape.attention_flops_per_pair / peak_rate;
  };
  CHECK(full.iteration(prompt).seconds() - windowed.iteration(prompt).seconds() ==
        Approx(18 * (prompt_s(full_pairs, 1024) - prompt_s(window_pairs, 128))).epsilon(1e-4));
}

TEST_CASE("FP8 weights halve the bytes a decode step streams") {
  const IterationModel fp16(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  TensorFormats fp8{s::FP8, s::FP8, s::FP8};
  const IterationInputs in = single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", fp8);
  const IterationModel eight(in);
  const InferenceShape& shape = eight.largest_stage();
  double layer_weights = 0;
  for (const LayerMatmul& m : shape.groups[0].matmuls)
    layer_weights += 1.0 * m.n * m.k;  // FP8 bytes
  const double bandwidth = in.gpu->memory_bandwidth_gb_per_s() * 1e9 * in.fit.memory_fraction();
  // At context 0 (no KV read) the difference is the layers' saved bytes, the 1-byte activations
  // moving a few KB less.
  const double saved = fp16.iteration({1, 1, 0, 0}).seconds() - eight.iteration({1, 1, 0, 0}).seconds();
  CHECK(saved == Approx(shape.layers * layer_weights / bandwidth).epsilon(0.01));
}

// A long prefill is compute bound: 2 x parameters FLOPs per token at the serving matmul rate, and
// the causal attention's 4 d heads FLOPs per query-key pair at the fitted fused-attention rate for
// its 2048 keys, and the elementwise kernels' traffic at the serving memory rate.
TEST_CASE("a long prefill runs at the fitted tensor-core rate") {
  const IterationInputs in = single_gpu_inputs("llama2-13b", "H100-SXM5-80GB", {});
  const IterationModel model(in);
  const InferenceShape& shape = model.largest_stage();
  const int64_t tokens = 16384;  // 8 prompts of 2048
  double layer_parameters = 0, layer_outputs = 0;
  for (const LayerMatmul& m : shape.groups[0].matmuls) {
    layer_parameters += 1.0 * m.n * m.k;
    layer_outputs += 1.0 * m.n;  // Hopper writes each GEMM's 16-bit output after its main loop
  }
  // H100 BF16 matmul_efficiency 0.815 of 989 TFLOP/s, x the serving compute fraction.
  const double rate = 989e12 * 0.815 * in.fit.compute_fraction();
  const double pairs = 8 * 2048.0 * 2049 / 2;
  // The H100's causal forward curve at 2048 keys: 0.567 x 2048 / (2048 + 387) of the 16-bit peak,
  // x the serving compute fraction.
  const double attention_rate = 989e12 * 0.567 * 2048 / (2048 + 387) * in.fit.compute_fraction();
  const double bandwidth = in.gpu->memory_bandwidth_gb_per_s() * 1e9 * in.fit.memory_fraction();
  const double expected_s =
      shape.layers * (2 * layer_parameters * tokens / rate + 2 * layer_outputs * tokens / bandwidth +
                      pairs * shape.attention_flops_per_pair / attention_rate +
                      tokens * shape.groups[0].memory_bytes_per_token / bandwidth);
  IterationWork work{tokens, 8, 0, 0};
  for (int prompt = 0; prompt < 8; ++prompt) add_prompt_chunk(&work, 0, 2048);
  REQUIRE(work.attention_pairs == pairs);
  const double t = model.iteration(work).seconds();
  CHECK(t > expected_s);
  CHECK(t < expected_s * 1.01);  // overheads and the output projection
}

// A mixed iteration of in-flight batching (TensorRT-LLM's micro-batch scheduler packs generation
// and context requests into one forward, cpp/tensorrt_llm/batch_manager/microBatchScheduler.cpp)
// runs every linear layer once over all its tokens (one GEMM of P + D rows), then attention as
// two kernels: the context FMHA over the P prompt tokens' causal pairs and the generation kernel
// reading the D decoding sequences' KV cache. So, with T(m, pairs, context) the iteration time:
//   T(P + D, pairs, C) = T(P + D, 0, 0) + L pairs f_pair / R_prompt(P)
//                        + L max(C 2 k d b / B, C f_decode / R_fused)
// (R_prompt(S) the fitted causal forward rate at S keys, R_fused the flat fused-attention rate, B
// the serving bandwidth, k KV heads of d, b bytes each), and
// the GEMMs are those of P + D rows, tiles of 128 rows filled to (P + D) / (128 ceil((P + D) /
// 128)): within 0.5% of that closed form, and 5% below charging the decode rows' GEMMs apart
// (their weights streamed a second time).
TEST_CASE("a mixed iteration costs the GEMMs of all its tokens plus both attentions") {
  const IterationInputs in = single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {});
  const IterationModel model(in);
  const InferenceShape& shape = model.largest_stage();
  const int64_t prompt = 2048, decodes = 48;
  const double pairs = prompt * (prompt + 1.0) / 2, context = decodes * 3000.0;
  const int64_t logits = decodes + 1;
  const double bandwidth = in.gpu->memory_bandwidth_gb_per_s() * 1e9 * in.fit.memory_fraction();
  // H100 flash_attention_fraction 0.332 of the 16-bit peak (its causal forward curve 0.567 x S /
  // (S + 387) for the prompt), x the serving compute fraction.
  const double fused_rate = 989e12 * 0.332 * in.fit.compute_fraction();
  const double prompt_rate = 989e12 * 0.567 * prompt / (prompt + 387) * in.fit.compute_fraction();
  const double prefill_attention_s =
      shape.layers * pairs * shape.attention_flops_per_pair / prompt_rate;
  const double decode_attention_s =
      shape.layers * std::max(context * 2 * shape.kv_heads * shape.head_dim * 2 / bandwidth,
                              context * shape.decode_attention_flops_per_pair / fused_rate);
  const double linear_s = model.iteration({prompt + decodes, logits, 0, 0}).seconds();
  IterationWork mixed{prompt + decodes, logits, 0, context};
  add_prompt_chunk(&mixed, 0, prompt);
  REQUIRE(mixed.attention_pairs == pairs);
  const double mixed_s = model.iteration(mixed).seconds();
  CHECK(mixed_s == Approx(linear_s + prefill_attention_s + decode_attention_s).epsilon(1e-6));
  // Decode attention is its own kernel: its cost does not depend on the prompt beside it.
  const double decode_alone_s = model.iteration({decodes, decodes, 0, context}).seconds() -
                                model.iteration({decodes, decodes, 0, 0}).seconds();
  CHECK(decode_alone_s == Approx(decode_attention_s).epsilon(1e-6));

  // The GEMMs of m = P + D rows at the H100's BF16 rate (matmul_efficiency 0.815 of 989 TFLOP/s,
  // x the serving compute fraction), each with its serial 16-bit output write and 5.4 us overhead.
  const auto tile_use = [](double size) { return size / (std::ceil(size / 128) * 128); };
  const double rate = 989e12 * 0.815 * in.fit.compute_fraction();
  const auto gemms_s = [&](double m) {
    double s = 0;
    for (const LayerMatmul& mm : shape.groups[0].matmuls) {
      const double compute =
          2 * m * mm.n * mm.k / (rate * tile_use(m) * tile_use(mm.n)) + 2 * m * mm.n / bandwidth;
      const double memory = (2 * m * mm.k + 2.0 * mm.k * mm.n + 2 * m * mm.n) / bandwidth;
      s += std::max(compute, memory) + 5.4e-6;
    }
    return shape.layers * s;
  };
  const double m = prompt + decodes;
  const double rest_s = shape.layers * (m * shape.groups[0].memory_bytes_per_token / bandwidth +
                                        in.fit.layer_overhead_us() * 1e-6);
  const double together_s = gemms_s(m) + rest_s;
  CHECK(tile_use(m) == Approx(2096.0 / 2176));
  CHECK(linear_s > together_s);
  CHECK(linear_s < together_s * 1.005);  // the output projection of 49 rows, host overhead
  const double apart_s = gemms_s(prompt) + gemms_s(decodes) + rest_s;
  CHECK(linear_s < apart_s * 0.96);
}

// The all-reduce of m tokens' hidden states is collective.h's simulated time at powers of two plus
// the runtime's allreduce_overhead_us, linear between them; a decode step pays two per layer on
// top of streaming its weight shard.
TEST_CASE("tensor-parallel iterations add two all-reduces per layer timed by the network") {
  IterationInputs in = single_gpu_inputs("llama2-70b", "H100-SXM5-80GB", {});
  in.tensor_parallel = 4;
  const auto topology = testing::shipped_cluster("aws.p5.48xlarge", 1, 4);
  in.topology = topology.get();
  in.max_tokens = 1024;
  const IterationModel tp4(in);
  Collective c;
  c.gpus = {0, 1, 2, 3};
  const double overhead_s = in.serving->allreduce_overhead_us() * 1e-6;
  REQUIRE(overhead_s > 0);
  const auto simulated = [&](int64_t tokens) {
    c.bytes = tokens * 8192.0 * 2;
    return collective_time(*topology, c).seconds() + overhead_s;
  };
  CHECK(tp4.allreduce(64).seconds() == Approx(simulated(64)).epsilon(1e-9));
  CHECK(tp4.allreduce(96).seconds() ==
        Approx((simulated(64) + simulated(128)) / 2).epsilon(1e-6));
  const InferenceShape& shape = tp4.largest_stage();
  const double bandwidth = in.gpu->memory_bandwidth_gb_per_s() * 1e9 * in.fit.memory_fraction();
  const double streamed_s = shape.weight_bytes / bandwidth;
  const double t = tp4.iteration({1, 1, 0, 128}).seconds();
  CHECK(t > streamed_s + shape.layers * (2 * tp4.allreduce(1).seconds() +
                                         in.fit.layer_overhead_us() * 1e-6));
}

// With attention and MLP in parallel (GPT-J) their row-parallel outputs are summed before one
// all-reduce: the same layer with sequential blocks takes L x allreduce(m) longer, nothing else.
TEST_CASE("parallel attention and MLP take one all-reduce per layer") {
  IterationInputs in = single_gpu_inputs("gpt-j-6b", "H100-SXM5-80GB", {});
  REQUIRE(in.model->parallel_attention_mlp());
  in.tensor_parallel = 2;
  const auto topology = testing::shipped_cluster("aws.p5.48xlarge", 1, 2);
  in.topology = topology.get();
  in.max_tokens = 1024;
  const IterationModel parallel(in);
  s::Transformer sequential_model = *in.model;
  sequential_model.set_parallel_attention_mlp(false);
  in.model = &sequential_model;
  const IterationModel sequential(in);
  CHECK(parallel.largest_stage().allreduces_per_layer == 1);
  CHECK(sequential.largest_stage().allreduces_per_layer == 2);
  for (const int64_t m : {1, 256}) {
    IterationWork work{m, m, 0, m > 1 ? 0.0 : 128.0};
    if (m > 1) add_prompt_chunk(&work, 0, m);
    const double difference =
        sequential.iteration(work).seconds() - parallel.iteration(work).seconds();
    CHECK(difference == Approx(28 * parallel.allreduce(m).seconds()).epsilon(1e-6));
  }
}

// Mistral 7B (32 query heads over 8 KV heads of 128: 4 per KV head, not the grouped kernel's 8)
// decodes with the masked kernel, which reads each KV head once per query head: the first read
// from memory, the 3 others at kv_reread_fraction f of it. Between f = 1 and f = 0.25:
//   L x C x 2 (K, V) x (a - k) x d x bytes x (1 - 0.25) / bandwidth.
TEST_CASE("the masked kernel's re-reads of a shared KV head cost kv_reread_fraction of a read") {
  IterationInputs in = single_gpu_inputs("mistral-7b", "L40S-PCIE-48GB", {});
  in.fit.set_kv_reread_fraction(1);
  const IterationModel every_read(in);
  in.fit.set_kv_reread_fraction(0.25);
  const IterationModel cached(in);
  REQUIRE_FALSE(cached.grouped_attention());
  const InferenceShape& shape = cached.largest_stage();
  REQUIRE(shape.query_heads == 32);
  REQUIRE(shape.kv_heads == 8);
  const double context = 64 * 2048.0;  // 64 sequences of 2048 tokens
  const double bandwidth = in.gpu->memory_bandwidth_gb_per_s() * 1e9 * in.fit.memory_fraction();
  const double saved_s = 32 * context * 2 * 24 * 128 * 2 * 0.75 / bandwidth;
  IterationWork work{64, 64, 0, context};
  work.window_decode_context = context;  // every layer attends within 4,096 tokens: all 2,048
  CHECK(every_read.iteration(work).seconds() - cached.iteration(work).seconds() ==
        Approx(saved_s).epsilon(1e-6));
}

// An FP8 cache's re-reads cost the fit's fp8_kv_reread_fraction, a 16-bit cache's its
// kv_reread_fraction: with f8 = 1 and f = 0.25 the FP8-cache model is the one whose every re-read
// costs a read (kv_reread_fraction 1), the FP16-cache model the one at 0.25, the FP8 fraction
// ignored; without fp8_kv_reread_fraction an FP8 cache takes kv_reread_fraction.
TEST_CASE("an FP8 KV cache's re-reads cost fp8_kv_reread_fraction, a 16-bit one's kv_reread_fraction") {
  const TensorFormats fp8_cache{s::FP8, s::FP8, s::FP8}, fp16_cache{s::FP8, s::FP8, s::FP16};
  IterationInputs in = single_gpu_inputs("mistral-7b", "H100-SXM5-80GB", fp8_cache);
  in.fit.set_kv_reread_fraction(1);
  in.fit.clear_fp8_kv_reread_fraction();
  const IterationModel fp8_every_read(in);
  in.fit.set_kv_reread_fraction(0.25);
  const IterationModel fp8_shared(in);
  in.fit.set_fp8_kv_reread_fraction(1);
  const IterationModel fp8_own(in);
  in.formats = fp16_cache;
  const IterationModel fp16_own(in);
  in.fit.clear_fp8_kv_reread_fraction();
  const IterationModel fp16_shared(in);
  REQUIRE_FALSE(fp8_own.grouped_attention());
  IterationWork work{64, 64, 0, 64 * 2048.0};
  work.window_decode_context = work.decode_context;  // all 2,048 tokens inside Mistral's window
  CHECK(fp8_own.iteration(work) == fp8_every_read.iteration(work));
  CHECK(fp8_shared.iteration(work) < fp8_own.iteration(work));
  CHECK(fp16_own.iteration(work) == fp16_shared.iteration(work));
  // The FP8 cache's re-reads at 1 against 0.25: L x C x 2 x (a - k) x d x 1 byte x 0.75 / bandwidth.
  const double bandwidth = in.gpu->memory_bandwidth_gb_per_s() * 1e9 * in.fit.memory_fraction();
  CHECK(fp8_own.iteration(work).seconds() - fp8_shared.iteration(work).seconds() ==
        Approx(32 * 64 * 2048.0 * 2 * 24 * 128 * 1 * 0.75 / bandwidth).epsilon(1e-6));
}

// TensorRT-LLM 1.0's decode attention (the shipped "tensorrt-llm-1.0", extending "tensorrt-llm")
// is the grouped kernel for every group of at most 32 query heads per KV head: Llama 3 8B (4 per
// KV head) reads each KV head once there, once per query head under 0.9.0's kernel of exactly 8;
// the later release keeps the base's fits, so a decode of it is faster by exactly the re-reads.
TEST_CASE("a runtime with a grouped kernel for groups up to N reads a KV head once for each") {
  const TensorFormats fp8{s::FP8, s::FP8, s::FP8};
  IterationInputs in = single_gpu_inputs("llama3-8b", "H100-SXM5-80GB", fp8);
  const IterationModel release_0_9(in);
  const s::ServingRuntime& later =
      *testing::shipped_catalog().serving_runtimes().find("tensorrt-llm-1.0")->value;
  REQUIRE(later.grouped_attention_max_query_heads_per_kv() == 32);
  REQUIRE_FALSE(later.has_grouped_attention_query_heads_per_kv());
  REQUIRE(later.gpu_size() == in.serving->gpu_size());  // the base's fits, taken whole
  CHECK(later.iteration_overhead_us() == in.serving->iteration_overhead_us());
  in.serving = &later;
  const IterationModel release_1_0(in);
  REQUIRE_FALSE(release_0_9.grouped_attention());
  REQUIRE(release_1_0.grouped_attention());
  // The 3 re-reads of each KV head at the FP8 cache's fraction f8:
  //   L x C x 2 (K, V) x (a - k) x d x 1 byte x f8 / bandwidth.
  const double context = 512 * 1024.0;
  const IterationWork work{512, 512, 0, context};
  const double bandwidth = in.gpu->memory_bandwidth_gb_per_s() * 1e9 * in.fit.memory_fraction();
  CHECK(release_0_9.iteration(work).seconds() - release_1_0.iteration(work).seconds() ==
        Approx(32 * context * 2 * 24 * 128 * 1 * in.fit.fp8_kv_reread_fraction() / bandwidth)
            .epsilon(1e-6));
  // Llama 3.1 405B at one GPU: 128 query heads over 8, 16 per KV head, grouped under 1.0 only.
  IterationInputs big = single_gpu_inputs("llama3-405b", "H200-SXM-141GB", fp8);
  REQUIRE_FALSE(IterationModel(big).grouped_attention());
  big.serving = &later;
  CHECK(IterationModel(big).grouped_attention());
}

// A static batch's prefill pays the runtime's static_prefill_overhead_us once, on top of the same
// kernels as any prefill of those tokens.
TEST_CASE("a static batch's prefill adds the runtime's context-phase overhead") {
  const IterationInputs in = single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {});
  REQUIRE(in.serving->static_prefill_overhead_us() > 0);
  const IterationModel model(in);
  IterationWork work{256, 2, 0, 0};
  add_prompt_chunk(&work, 0, 128);
  add_prompt_chunk(&work, 0, 128);
  const double chunked_s = model.iteration(work).seconds();
  work.static_prefill = true;
  CHECK(model.iteration(work).seconds() - chunked_s ==
        Approx(in.serving->static_prefill_overhead_us() * 1e-6).epsilon(1e-9));
}

// Mixtral 8x7B (top-2 of 8 experts, 32 expert layers) decoding a batch of 16: uniform routing
// touches E (1 - (1 - k/E)^16) = 7.92 experts per layer; an engine of fake weights the same 2 in
// its first layer and expert 0 alone in the 31 others. Every expert touched streams its weights
// once, so the steps differ by
//   (32 x touched - 2 - 31) x (2 f h + f h) x 2 bytes / bandwidth,
// the expert GEMMs being memory bound at 32 / touched rows. At one token uniform routing touches
// 2 experts a layer, so the difference is that of the 31 later layers, 31 x (2 - 1) experts.
TEST_CASE("fake weights route every token to the same k experts, then to expert 0 alone") {
  IterationInputs in = single_gpu_inputs("mixtral-8x7b", "H100-SXM5-80GB", {});
  const IterationModel uniform(in);
  in.fake_weights = true;
  const IterationModel fake(in);
  const InferenceShape& shape = fake.largest_stage();
  REQUIRE(shape.num_experts == 8);
  REQUIRE(shape.experts_per_token == 2);
  REQUIRE(shape.first_expert_layer);
  const double touched = experts_touched(8, 2, 16);
  const double expert_bytes = 3.0 * 14336 * 4096 * 2;
  const double bandwidth = in.gpu->memory_bandwidth_gb_per_s() * 1e9 * in.fit.memory_fraction();
  const IterationWork batch{16, 16, 0, 16 * 128.0};
  CHECK(uniform.iteration(batch).seconds() - fake.iteration(batch).seconds() ==
        Approx((32 * touched - 2 - 31) * expert_bytes / bandwidth).epsilon(0.02));
  const IterationWork one{1, 1, 0, 128};
  CHECK(uniform.iteration(one).seconds() - fake.iteration(one).seconds() ==
        Approx(31 * expert_bytes / bandwidth).epsilon(0.02));
}

// TensorRT-LLM 0.9.0's expert GEMMs issue mma.sync (expert_matmuls_sync_mma), which reaches 2/3
// of a Hopper GPU's tensor-core peak (sync_mma_fraction 0.667): a compute-bound prefill of Mixtral
// (16384 tokens, 2 x 16384 rows over the experts of each layer, rows and columns whole tiles)
// takes, per layer, the expert FLOPs F = 2 x 2 m (2 f h + h f) longer by F / (r x 0.667) - F / r,
// r the FP16 rate (989 TFLOP/s x 0.815 x compute_fraction x expert_matmul_fraction). On the A100,
// whose native instruction mma.sync is, the flag changes nothing.
TEST_CASE("expert GEMMs issuing mma.sync run at the GPU's sync_mma_fraction of its rate") {
  const IterationWork prefill = testing::prompts(8, 2048, true);
  for (const char* gpu : {"H100-SXM5-80GB", "A100-SXM4-80GB"}) {
    IterationInputs in = single_gpu_inputs("mixtral-8x7b", gpu, {});
    in.fake_weights = true;
    REQUIRE(in.serving->expert_matmuls_sync_mma());
    const double sync_s = IterationModel(in).iteration(prefill).seconds();
    s::ServingRuntime native = *in.serving;
    native.set_expert_matmuls_sync_mma(false);
    in.serving = &native;
    const double native_s = IterationModel(in).iteration(prefill).seconds();
    if (std::string(gpu) == "A100-SXM4-80GB") {
      CHECK(sync_s == native_s);
      continue;
    }
    REQUIRE(in.gpu->sync_mma_fraction() == 0.667);
    const double flops = 32 * 2 * 2 * 16384.0 * (2.0 * 14336 * 4096 + 4096.0 * 14336);
    const double rate =
        989e12 * 0.815 * in.fit.compute_fraction() * in.fit.expert_matmul_fraction();
    CHECK(sync_s - native_s == Approx(flops / (rate * 0.667) - flops / rate).epsilon(1e-4));
  }
}

// The fit's expert_matmul_fraction scales the expert GEMMs' compute rate alone: the same
// compute-bound A100 prefill (FP16 at 312 TFLOP/s x 0.808 x compute_fraction) at a fraction of
// 0.5 takes the expert FLOPs F once more, F / rate; the dense matmuls and a memory-bound decode
// step's expert weights do not move.
TEST_CASE("the expert GEMMs run at the fit's expert_matmul_fraction of the compute rate") {
  IterationInputs in = single_gpu_inputs("mixtral-8x7b", "A100-SXM4-80GB", {});
  in.fake_weights = true;
  in.fit.set_expert_matmul_fraction(1.0);
  const IterationModel whole(in);
  in.fit.set_expert_matmul_fraction(0.5);
  const IterationModel half(in);
  const IterationWork prefill = testing::prompts(8, 2048, true);
  const double flops = 32 * 2 * 2 * 16384.0 * (2.0 * 14336 * 4096 + 4096.0 * 14336);
  const double rate = 312e12 * 0.808 * in.fit.compute_fraction();
  CHECK(half.iteration(prefill).seconds() - whole.iteration(prefill).seconds() ==
        Approx(flops / rate).epsilon(1e-4));
  const IterationWork decode{1, 1, 0, 128};
  CHECK(half.iteration(decode).count() == whole.iteration(decode).count());
}

// The fit's expert_layer_overhead_us is paid once per expert layer and iteration, whatever the
// tokens and however they route: Mixtral's 32 expert layers at 20 us against none add 640 us to a
// decode step and to a prefill alike; a dense model's steps do not move.
TEST_CASE("each expert layer pays the fit's expert_layer_overhead_us") {
  for (const bool fake : {false, true}) {
    IterationInputs in = single_gpu_inputs("mixtral-8x7b", "H100-SXM5-80GB", {});
    in.fake_weights = fake;
    in.fit.set_expert_layer_overhead_us(0);
    const IterationModel none(in);
    in.fit.set_expert_layer_overhead_us(20);
    const IterationModel some(in);
    for (const IterationWork& work :
         {IterationWork{1, 1, 0, 128}, testing::prompts(2, 2048, true)}) {
      CHECK(some.iteration(work).count() - none.iteration(work).count() ==
            Picoseconds::from_microseconds(32 * 20.0).count());
    }
  }
  IterationInputs dense = single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {});
  dense.fit.set_expert_layer_overhead_us(0);
  const IterationModel without(dense);
  dense.fit.set_expert_layer_overhead_us(20);
  CHECK(IterationModel(dense).iteration({1, 1, 0, 128}).count() ==
        without.iteration({1, 1, 0, 128}).count());
}

// Its expert GEMMs' tiles have 32 rows at the fewest (expert_matmul_row_tile). 200 tokens of a
// fake-weight engine put 200 rows on each of 2 experts in the first layer (224 rows of 32-row
// tiles, 256 of 128-row ones) and 400 on expert 0 in the 31 others (416 against 512). Compute-
// bound on the A100 (FP16 at 312 TFLOP/s x 0.808 x compute_fraction x expert_matmul_fraction),
// with F the expert FLOPs of one layer the narrow tiles take
//   F / rate x ((256 - 224) / 200 + 31 x (512 - 416) / 400)
// less.
TEST_CASE("expert GEMMs fill tiles of the runtime's expert row tile") {
  IterationInputs in = single_gpu_inputs("mixtral-8x7b", "A100-SXM4-80GB", {});
  in.fake_weights = true;
  REQUIRE(in.serving->expert_matmul_row_tile() == 32);
  const IterationWork prefill = testing::prompts(1, 200, true);
  const double narrow_s = IterationModel(in).iteration(prefill).seconds();
  s::ServingRuntime wide = *in.serving;
  wide.clear_expert_matmul_row_tile();
  in.serving = &wide;
  const double wide_s = IterationModel(in).iteration(prefill).seconds();
  const double flops = 2 * 2 * 200.0 * (2.0 * 14336 * 4096 + 4096.0 * 14336);
  const double rate = 312e12 * 0.808 * in.fit.compute_fraction() * in.fit.expert_matmul_fraction();
  CHECK(wide_s - narrow_s ==
        Approx(flops / rate * (32.0 / 200 + 31 * 96.0 / 400)).epsilon(1e-4));
}

TEST_CASE("FP4 weights take half a byte per parameter") {
  const s::Transformer& t =
      testing::shipped_catalog().models().find("llama2-7b")->value->transformer();
  const InferenceShape fp4 = inference_shape(t, {s::FP4, s::FP4, s::FP8}, 1, 1, 0);
  const InferenceShape fp16 = inference_shape(t, {s::FP16, s::FP16, s::FP16}, 1, 1, 0);
  // Layers shrink 4x; embedding, output projection and norms stay 16-bit.
  const double sixteen_bit = 2.0 * 32000 * 4096 * 2 + 2.0 * (2 * 32 + 1) * 4096;
  CHECK(fp4.weight_bytes - sixteen_bit == Approx((fp16.weight_bytes - sixteen_bit) / 4));
  CHECK(fp4.kv_bytes_per_token == fp16.kv_bytes_per_token / 2);
}

// Expert parallelism at batch 1: DeepSeek-V3's token picks 8 of 256 experts; TP 8 streams an
// eighth of each of the 8 (one expert's bytes per GPU and layer), EP 8 holds 32 whole experts per
// GPU and the busiest rank streams the expected most of them, busiest_expert_rank's 2.54 (a
// seeded simulation of the routing: 2.58). The all-reduces and attention are the same: per expert
// layer (58) the step grows by (2.54 - 1) experts of 3 x 7168 x 2048 FP8 bytes over HBM.
TEST_CASE("expert parallelism's busiest rank streams whole experts in decode") {
  IterationInputs in = single_gpu_inputs("deepseek-v3", "H200-SXM-141GB", {s::FP8, s::FP8, s::FP8});
  const auto topology = testing::shipped_cluster("aws.p5en.48xlarge", 1, 8);
  in.topology = topology.get();
  in.tensor_parallel = 8;
  in.max_tokens = 1024;
  const IterationModel tp(in);
  in.expert_parallel = 8;
  const IterationModel ep(in);
  const double busiest = busiest_expert_rank(256, 8, 8, 1).experts;
  CHECK(busiest == Approx(2.544).epsilon(1e-3));
  const double bandwidth = in.gpu->memory_bandwidth_gb_per_s() * 1e9 * in.fit.memory_fraction();
  const double expert_bytes = 3.0 * 7168 * 2048;
  const IterationWork one{1, 1, 0, 0};
  CHECK(ep.iteration(one).seconds() - tp.iteration(one).seconds() ==
        Approx(58 * (busiest - 1) * expert_bytes / bandwidth).epsilon(0.02));
  CHECK(ep.largest_stage().weight_bytes == tp.largest_stage().weight_bytes);
  CHECK(ep.allreduce(1) == tp.allreduce(1));
}

// A large prefill at EP = TP: the same expert FLOPs per GPU (inference_shape_test), the busiest
// rank's copies within 1% of the even share, in GEMMs a whole expert wide (Qwen3-235B's 1536
// columns, not TP 8's 192): no slower than tensor parallelism, and not by much faster.
TEST_CASE("a large batch at EP = TP is no slower than tensor parallelism") {
  IterationInputs in = single_gpu_inputs("qwen3-235b-a22b", "H200-SXM-141GB", {s::FP8, s::FP8, s::FP8});
  const auto topology = testing::shipped_cluster("aws.p5en.48xlarge", 1, 8);
  in.topology = topology.get();
  in.tensor_parallel = 8;
  in.max_tokens = 16384;
  const IterationModel tp(in);
  in.expert_parallel = 8;
  const IterationModel ep(in);
  const IterationWork batch = testing::prompts(16, 1024);
  const double ratio = ep.iteration(batch).seconds() / tp.iteration(batch).seconds();
  CHECK(ratio < 1);
  CHECK(ratio > 0.85);
}

// A benchmark engine's fake weights under expert parallelism: Mixtral 8x7B at TP 2 EP 2, experts
// 0-3 on rank 0. Every token's 2 experts (0 and 1) in the first expert layer and expert 0 in the
// 31 later ones all sit on rank 0, which streams them whole where TP 2 streams their halves: per
// decode step (1 + 31 / 2) whole experts more (3 x 14336 x 4096 x 2 bytes each) over HBM.
TEST_CASE("fake weights under expert parallelism all land on the first rank") {
  IterationInputs in = single_gpu_inputs("mixtral-8x7b", "H100-SXM5-80GB", {});
  const auto topology = testing::shipped_cluster("aws.p5.48xlarge", 1, 2);
  in.topology = topology.get();
  in.tensor_parallel = 2;
  in.max_tokens = 1024;
  in.fake_weights = true;
  const IterationModel tp(in);
  in.expert_parallel = 2;
  const IterationModel ep(in);
  const double expert_bytes = 3.0 * 14336 * 4096 * 2;
  const double bandwidth = in.gpu->memory_bandwidth_gb_per_s() * 1e9 * in.fit.memory_fraction();
  const IterationWork batch{16, 16, 0, 16 * 128.0};
  CHECK(ep.iteration(batch).seconds() - tp.iteration(batch).seconds() ==
        Approx(16.5 * expert_bytes / bandwidth).epsilon(0.02));
}

}  // namespace
}  // namespace clustersim
