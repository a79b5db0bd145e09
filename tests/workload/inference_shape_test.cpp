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

// Expert parallelism inside the tensor-parallel group (TensorRT-LLM's moe_expert_parallel_size x
// moe_tensor_parallel_size = tensor_parallel_size): Mixtral 8x7B at TP 8 EP 8 holds one whole
// expert per GPU and layer (3 x 4096 x 14336 parameters: gated up and down), EP 2 four experts
// each a quarter; TP splitting holds an eighth of all 8. The bytes per GPU are the same (8
// divides evenly) and only the expert matrices' widths change.
TEST_CASE("expert parallelism holds whole experts on each rank") {
  const s::Transformer& t = model("mixtral-8x7b");
  const InferenceShape tp = inference_shape(t, kSixteenBit, 8, 1, 0);
  const InferenceShape ep = inference_shape(t, kSixteenBit, 8, 1, 0, 8);
  const InferenceShape hybrid = inference_shape(t, kSixteenBit, 8, 1, 0, 2);
  CHECK(ep.expert_parallel == 8);
  const auto expert_parameters = [](const InferenceShape& shape) {
    double per_expert = 0;
    for (const LayerMatmul& m : shape.groups.back().matmuls) {
      if (m.expert) per_expert += static_cast<double>(m.n) * static_cast<double>(m.k);
    }
    return per_expert;
  };
  CHECK(expert_parameters(ep) == 3.0 * 4096 * 14336);
  CHECK(expert_parameters(hybrid) == 3.0 * 4096 * 14336 / 4);
  CHECK(expert_parameters(tp) == 3.0 * 4096 * 14336 / 8);
  // Per GPU 32 layers x 8 / EP experts x each one's share: the same bytes at every EP.
  CHECK(ep.weight_bytes == tp.weight_bytes);
  CHECK(hybrid.weight_bytes == tp.weight_bytes);
}

// Balanced routing at EP = TP: each rank runs m k / EP token copies through whole experts, TP
// splitting m k copies through 1 / TP of each: the same expert FLOPs per GPU. Qwen3-235B-A22B
// (128 experts, top 8, expert width 1536) at TP 4.
TEST_CASE("balanced routing at EP = TP computes the same expert FLOPs per GPU as TP") {
  const s::Transformer& t = model("qwen3-235b-a22b");
  const InferenceShape tp = inference_shape(t, kSixteenBit, 4, 1, 0);
  const InferenceShape ep = inference_shape(t, kSixteenBit, 4, 1, 0, 4);
  const double copies = 1024.0 * 8;  // 1024 tokens
  const auto flops = [](const InferenceShape& shape, double rows) {
    double f = 0;
    for (const LayerMatmul& m : shape.groups.back().matmuls) {
      if (m.expert) f += 2.0 * rows * static_cast<double>(m.n) * static_cast<double>(m.k);
    }
    return f;
  };
  CHECK(flops(ep, copies / 4) == flops(tp, copies));
  CHECK(flops(ep, copies / 4) == 2.0 * copies / 4 * 3 * 4096 * 1536);
}

// Expert parallelism's workspace: each routed copy's up projection and activation at the
// experts' own width / (TP / EP): Mixtral 8x7B at TP 2 EP 2 (whole experts) holds per token
// 2 bytes x (4 x 4096 + 2 x (2 x 4096 + 3 x 14336)) = 237,568 bytes (TP 2 alone: 151,552), as
// TensorRT-LLM's MoE workspace is sized for every token's k copies on each rank.
TEST_CASE("expert parallelism's workspace holds its copies at the whole expert width") {
  CHECK(inference_shape(model("mixtral-8x7b"), kSixteenBit, 2, 1, 0, 2)
            .activation_bytes_per_token == 237568);
}

TEST_CASE("expert parallelism must split a model's experts") {
  CHECK(serving_expert_parallel_problem(model("llama3-8b"), 1).empty());
  CHECK(serving_expert_parallel_problem(model("llama3-8b"), 2) ==
        "2: the model has no experts to split (it has no moe block)");
  CHECK(serving_expert_parallel_problem(model("mixtral-8x7b"), 3) ==
        "3 does not divide the model's moe.num_experts (8)");
  CHECK(serving_expert_parallel_problem(model("deepseek-v3"), 8).empty());
}

}  // namespace
}  // namespace clustersim
