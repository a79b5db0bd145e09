// Tests of sim/workload/inference_shape: what serving holds and computes per token on one rank,
// for dense, grouped-query, mixture-of-experts and latent-attention models.
#include "sim/workload/inference_shape.h"

#include <catch2/catch.hpp>

#include "sim/workload/parameter_count.h"
#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

namespace s = schema;

const s::Transformer& model(const char* name) {
  return testing::shipped_catalog().models().find(name)->value->transformer();
}

constexpr TensorFormats kSixteenBit{s::FP16, s::FP16, s::FP16};

// On one GPU at 16 bits the weights are 2 bytes per parameter of the main model (the router's
// load-balancing bias is not a parameter; the multi-token prediction module is not loaded).
TEST_CASE("serving holds every parameter of the main model once on one GPU") {
  for (const char* name :
       {"deepseek-v3", "kimi-k2", "qwen3-235b-a22b", "mixtral-8x7b", "llama3-8b"}) {
    const s::Transformer& t = model(name);
    const InferenceShape shape = inference_shape(t, kSixteenBit, 1, 1, 0);
    INFO(name);
    CHECK(shape.weight_bytes == Approx(2.0 * transformer_parameters(t).total()).epsilon(1e-9));
  }
}

// DeepSeek-V3's 3 dense layers come first: a two-stage pipeline (31 + 30 layers) has them on the
// first stage only, and with them the model's first expert layer (its fourth).
TEST_CASE("a mixture of experts' dense first layers are their own layer group") {
  const s::Transformer& t = model("deepseek-v3");
  const InferenceShape first = inference_shape(t, kSixteenBit, 8, 2, 0);
  REQUIRE(first.groups.size() == 2);
  CHECK(first.groups[0].layers == 3);
  CHECK(first.groups[1].layers == 28);
  CHECK(first.first_expert_layer);
  const InferenceShape second = inference_shape(t, kSixteenBit, 8, 2, 1);
  REQUIRE(second.groups.size() == 1);
  CHECK(second.groups[0].layers == 30);
  CHECK(second.groups[0].matmuls.back().n == t.hidden_size());  // the shared expert's down
  CHECK_FALSE(second.first_expert_layer);
  CHECK_FALSE(inference_shape(model("llama3-8b"), kSixteenBit, 1, 1, 0).first_expert_layer);
}

// A mixture-of-experts layer's grouped GEMMs keep k copies of each token: Mixtral 8x7B (h 4096,
// expert width 14336, top 2) at TP 2 and 16 bits holds per token the layer's 4 h (input, residual,
// norm and attention outputs) and, for each of its 2 routed copies, the permuted input h, the
// gated up projection 2 x 7168, the activation 7168 and the down projection's output h:
//   2 bytes x (4 x 4096 + 2 x (2 x 4096 + 3 x 7168)) = 151,552 bytes;
// Llama-2 7B's dense MLP (width 11008, one GPU) 2 x (4 x 4096 + 3 x 11008) = 98,816.
TEST_CASE("a mixture of experts' activations hold k copies of each token") {
  CHECK(inference_shape(model("mixtral-8x7b"), kSixteenBit, 2, 1, 0).activation_bytes_per_token ==
        151552);
  CHECK(inference_shape(model("llama2-7b"), kSixteenBit, 1, 1, 0).activation_bytes_per_token ==
        98816);
}

// Latent attention caches kv_lora_rank + rope = 576 elements per token and layer on every
// tensor-parallel rank (all heads share it); its absorbed decode scores 576 and sums 512 per
// query head and pair, its prompt attention 2 (128 + 64) + 2 x 128.
TEST_CASE("latent attention caches the latent whole on every rank") {
  const s::Transformer& t = model("deepseek-v3");
  for (int tp : {1, 8}) {
    const InferenceShape shape = inference_shape(t, {s::FP8, s::FP8, s::FP8}, tp, 1, 0);
    CHECK(shape.latent_kv_width == 576);
    CHECK(shape.kv_bytes_per_token == 61 * 576 * 1.0);
    CHECK(shape.decode_attention_flops_per_pair == 2.0 * (576 + 512) * 128 / tp);
    CHECK(shape.attention_flops_per_pair == 2.0 * (192 + 128) * 128 / tp);
  }
}

// Qwen3-235B-A22B has 4 KV heads: at TP 8 each rank keeps one (replicated twice), so its cache is
// 2 x 94 x 1 x 128 x 2 bytes a token and its QKV projection 64 / 8 + 2 heads wide.
TEST_CASE("tensor parallelism beyond the KV heads replicates them") {
  const s::Transformer& t = model("qwen3-235b-a22b");
  const InferenceShape shape = inference_shape(t, kSixteenBit, 8, 1, 0);
  CHECK(shape.kv_heads == 1);
  CHECK(shape.kv_bytes_per_token == 2.0 * 94 * 1 * 128 * 2);
  CHECK(shape.groups[0].matmuls[0].n == (64 / 8 + 2) * 128);
  CHECK(serving_tensor_parallel_problem(t, 8).empty());
  CHECK(serving_tensor_parallel_problem(t, 3) ==
        "3 does not divide the model's num_attention_heads (64)");
  CHECK(serving_tensor_parallel_problem(model("llama3-70b"), 16).empty());
}

TEST_CASE("tensor parallelism must divide the KV heads or be a multiple of them") {
  s::Transformer t = model("qwen3-30b-a3b");
  t.set_num_attention_heads(48);
  t.set_num_kv_heads(12);
  t.set_hidden_size(4608);
  CHECK(serving_tensor_parallel_problem(t, 8) ==
        "8 neither divides the model's num_kv_heads (12) nor is a multiple of them (each rank "
        "keeps whole KV heads)");
  CHECK(serving_tensor_parallel_problem(t, 24).empty());
}

TEST_CASE("tensor parallelism must split the expert width for serving") {
  s::Transformer t = model("qwen3-30b-a3b");
  t.mutable_moe()->set_expert_ffn_hidden_size(772);
  CHECK(serving_tensor_parallel_problem(t, 8) ==
        "8 does not divide the model's moe.expert_ffn_hidden_size (772)");
  CHECK(serving_tensor_parallel_problem(t, 4).empty());
}

}  // namespace
}  // namespace clustersim
