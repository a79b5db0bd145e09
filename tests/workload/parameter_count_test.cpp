// Tests of parameter counts against published exact counts, and of how each shape field moves them.
#include "sim/workload/parameter_count.h"

#include <catch2/catch.hpp>

#include "tests/testing/parse_message.h"

namespace clustersim {
namespace {

schema::Model model_from(const std::string& text) {
  return testing::parse_message<schema::Model>(text);
}

// Llama-2-7B's shape, written here independently of models/ so that a bad edit there is caught
// by the catalog's published-count check and a bad formula here.
const char* kLlama2_7b = R"(transformer {
  kind: DECODER num_layers: 32 hidden_size: 4096 num_attention_heads: 32 ffn_hidden_size: 11008
  mlp_activation: SWIGLU normalization: RMSNORM position_embedding: ROTARY vocab_size: 32000
  max_sequence_length: 4096 })";

TEST_CASE("Llama-2-7B has 6,738,415,616 parameters (Meta's published count)") {
  // Embedding 32000*4096, 32 x (4*4096^2 + 3*4096*11008 + 2*4096), final norm 4096, output head.
  CHECK(parameter_count(model_from(kLlama2_7b)) == 6738415616);
}

TEST_CASE("tying the output head to the embedding removes vocab x hidden parameters") {
  schema::Model tied = model_from(kLlama2_7b);
  tied.mutable_transformer()->set_tied_embeddings(true);
  CHECK(parameter_count(model_from(kLlama2_7b)) - parameter_count(tied) == 32000LL * 4096);
}

TEST_CASE("grouped-query attention shrinks K and V projections by heads / kv heads") {
  schema::Model gqa = model_from(kLlama2_7b);
  gqa.mutable_transformer()->set_num_kv_heads(8);
  // Per layer K and V lose 2 * 4096 * 4096 * (1 - 8/32).
  CHECK(parameter_count(model_from(kLlama2_7b)) - parameter_count(gqa) ==
        32LL * 2 * 4096 * 4096 * 3 / 4);
}

TEST_CASE("Mixtral-8x7B: 8 SwiGLU experts and a router per layer give 46,702,792,704") {
  CHECK(parameter_count(model_from(R"(transformer {
    kind: DECODER num_layers: 32 hidden_size: 4096 num_attention_heads: 32 num_kv_heads: 8
    ffn_hidden_size: 14336 mlp_activation: SWIGLU normalization: RMSNORM
    position_embedding: ROTARY vocab_size: 32000 max_sequence_length: 32768
    moe { num_experts: 8 experts_per_token: 2 } })")) == 46702792704);
}

TEST_CASE("active parameters of a MoE layer count only the routed experts") {
  const auto p = transformer_parameters(model_from(R"(transformer {
    kind: DECODER num_layers: 1 hidden_size: 16 num_attention_heads: 2 ffn_hidden_size: 32
    mlp_activation: GELU normalization: LAYERNORM position_embedding: ROTARY vocab_size: 10
    max_sequence_length: 8 moe { num_experts: 4 experts_per_token: 1 } })")
                                            .transformer());
  const int64_t expert = 2 * 16 * 32;  // GELU MLP, no biases
  CHECK(p.per_layer - p.active_per_layer == 3 * expert);
}

TEST_CASE("BERT-large backbone with pooler is 335,141,888, pre-training heads add 1,084,220") {
  // keras-hub bert_large_en_uncased lists 335,141,888 (backbone + pooler). BertForPreTraining
  // adds the MLM transform (1024^2 + 1024 + 2*1024), MLM bias (30522) and NSP (2*1024 + 2)
  // and drops nothing, i.e. 336,226,108 in all; without any head it is 334,092,288.
  schema::Model bert = model_from(R"(transformer {
    kind: ENCODER num_layers: 24 hidden_size: 1024 num_attention_heads: 16 ffn_hidden_size: 4096
    mlp_activation: GELU normalization: LAYERNORM position_embedding: LEARNED vocab_size: 30522
    max_sequence_length: 512 tied_embeddings: true linear_bias: true token_type_vocab_size: 2 })");
  CHECK(parameter_count(bert) == 335141888 - (1024 * 1024 + 1024));
  bert.mutable_transformer()->set_pretraining_heads(true);
  CHECK(parameter_count(bert) == 336226108);
}

TEST_CASE("ResNet-50 as a layer list has torchvision's 25,557,032 parameters") {
  // Bottleneck stage: first block with projection shortcut, then identity blocks.
  auto stage = [](int mid, int out, int stride, int blocks) {
    std::string conv =
        "conv { out_channels: %d kernel: %d stride: %d padding: %d batch_norm: true "
        "activation: ACT_RELU }";
    auto c = [&](int ch, int k, int s, int p) {
      char buf[200];
      std::snprintf(buf, sizeof buf, conv.c_str(), ch, k, s, p);
      return std::string("body { ") + buf + " } ";
    };
    std::string body = c(mid, 1, 1, 0) + c(mid, 3, stride, 1) + c(out, 1, 1, 0);
    std::string first = "layer { residual { " + body +
                        "shortcut { conv { out_channels: " + std::to_string(out) +
                        " kernel: 1 stride: " + std::to_string(stride) +
                        " batch_norm: true } } activation: ACT_RELU } }\n";
    std::string rest = "layer { residual { " + c(mid, 1, 1, 0) + c(mid, 3, 1, 1) + c(out, 1, 1, 0) +
                       "repeat: " + std::to_string(blocks - 1) + " activation: ACT_RELU } }\n";
    return first + rest;
  };
  const std::string text =
      "cnn { input_height: 224 input_width: 224 input_channels: 3\n"
      "layer { conv { out_channels: 64 kernel: 7 stride: 2 padding: 3 "
      "batch_norm: true activation: ACT_RELU } }\n"
      "layer { pool { kind: MAX kernel: 3 stride: 2 padding: 1 } }\n" +
      stage(64, 256, 1, 3) + stage(128, 512, 2, 4) + stage(256, 1024, 2, 6) +
      stage(512, 2048, 2, 3) +
      "layer { pool { kind: GLOBAL_AVERAGE } }\n"
      "layer { linear { out_features: 1000 bias: true } } }";
  CHECK(parameter_count(model_from(text)) == 25557032);
}

}  // namespace
}  // namespace clustersim
