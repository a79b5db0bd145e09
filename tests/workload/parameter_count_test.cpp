// Tests of parameter counts against published exact counts, and of how each shape field moves them.
#include "sim/workload/parameter_count.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "sim/workload/layer_ops.h"
#include "sim/workload/moe_layer.h"
#include "tests/testing/parse_message.h"
#include "tests/testing/shipped_catalog.h"

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

// A small MoE model: h 16, 4 heads, ffn 64 (dense), experts of 8, 2 layers.
const char* kSmallMoe = R"(transformer {
  kind: DECODER num_layers: 2 hidden_size: 16 num_attention_heads: 4 ffn_hidden_size: 64
  mlp_activation: SWIGLU normalization: RMSNORM position_embedding: ROTARY vocab_size: 10
  max_sequence_length: 8 moe { num_experts: 4 experts_per_token: 2 expert_ffn_hidden_size: 8 } })";

TEST_CASE("shared experts run for every token, dense first layers keep the dense MLP") {
  const schema::Model base = model_from(kSmallMoe);
  const auto p0 = transformer_parameters(base.transformer());
  const int64_t expert = 3 * 16 * 8, dense_mlp = 3 * 16 * 64;
  schema::Model shared = base;
  shared.mutable_transformer()->mutable_moe()->set_num_shared_experts(1);
  const auto p1 = transformer_parameters(shared.transformer());
  CHECK(p1.per_layer - p0.per_layer == expert);
  CHECK(p1.active_per_layer - p0.active_per_layer == expert);
  schema::Model first_dense = base;
  first_dense.mutable_transformer()->mutable_moe()->set_first_dense_layers(1);
  const auto p2 = transformer_parameters(first_dense.transformer());
  // One layer trades 4 experts and the 16 x 4 router for the dense MLP.
  CHECK(p2.layers - p0.layers == dense_mlp - 4 * expert - 16 * 4);
  CHECK(p2.active_layers - p0.active_layers == dense_mlp - 2 * expert - 16 * 4);
}

TEST_CASE("latent attention counts DeepSeek-V3's 187,107,328 attention parameters per layer") {
  // Q: 7168*1536 + 1536 + 1536*128*192; KV: 7168*(512+64) + 512 + 512*128*(128+128);
  // output: 128*128*7168 (DeepSeek-V2 section 2.1 with DeepSeek-V3's ranks).
  const schema::Model mla = model_from(R"(transformer {
    kind: DECODER num_layers: 1 hidden_size: 7168 num_attention_heads: 128 ffn_hidden_size: 1
    mlp_activation: GELU normalization: RMSNORM position_embedding: ROTARY vocab_size: 1
    max_sequence_length: 8 latent_attention { q_lora_rank: 1536 kv_lora_rank: 512
    qk_nope_head_dim: 128 qk_rope_head_dim: 64 v_head_dim: 128 } })");
  const int64_t norms = 2 * 7168, mlp = 2 * 7168;
  CHECK(transformer_parameters(mla.transformer()).per_layer - norms - mlp == 187107328);
}

TEST_CASE("QK norms, attention sinks and a router bias add head_dim, heads and experts") {
  const schema::Model base = model_from(kSmallMoe);
  schema::Model extra = base;
  extra.mutable_transformer()->set_qk_norm(true);
  extra.mutable_transformer()->set_attention_sinks(true);
  extra.mutable_transformer()->mutable_moe()->set_router_bias(true);
  CHECK(parameter_count(extra) - parameter_count(base) == 2 * (2 * 4 + 4 + 4));
}

TEST_CASE("QKV biases add (heads + 2 kv heads) x head_dim a layer: Qwen2.5's published counts") {
  // Qwen2.5 7B: 28 layers x (28 + 2 x 4) x 128 = 129,024 biases; the shipped files' totals equal
  // the Hugging Face safetensors counts (models/qwen2_5.textproto).
  const schema::Model& qwen = testing::shipped_model("qwen2.5-7b");
  schema::Model plain = qwen;
  plain.mutable_transformer()->set_qkv_bias(false);
  CHECK(parameter_count(qwen) - parameter_count(plain) == 28 * (28 + 2 * 4) * 128);
  CHECK(parameter_count(qwen) == 7615616512);
  CHECK(parameter_count(testing::shipped_model("qwen2.5-32b")) == 32763876352);
}

TEST_CASE("multi-token prediction modules are counted apart from the model") {
  schema::Model mtp = model_from(kSmallMoe);
  mtp.mutable_transformer()->set_multi_token_prediction_layers(1);
  const auto p = transformer_parameters(mtp.transformer());
  CHECK(p.total() == parameter_count(model_from(kSmallMoe)));
  // A MoE layer, three RMSNorms, the 2h x h projection.
  CHECK(p.multi_token_prediction == p.per_layer + 3 * 16 + 2 * 16 * 16);
}

// The shipped MoE models against their publishers' figures. Each publication is cited in the
// model's file; figures there are rounded: `digits` significant digits.
struct Published {
  const char* model;
  double total, active;  // parameters; active 0: not published in a reproducible form
  bool active_without_embedding;
};

TEST_CASE("shipped MoE models reproduce their published total and active parameters") {
  const Published published[] = {
      {"mixtral-8x7b", 46702792704, 12.9e9, false},  // Mistral AI: 46.7B, 12.9B per token
      {"mixtral-8x22b", 141e9, 39e9, false},         // Mistral AI: 141B, 39B active
      {"deepseek-v3", 671e9, 37e9, true},            // DeepSeek-V3 report: 671B, 37B
      {"qwen3-30b-a3b", 30.5e9, 0, false},           // Qwen3 card: 30.5B (3.3B: see the file)
      {"qwen3-235b-a22b", 235e9, 22e9, false},       // Qwen3 card: 235B, 22B
      {"gpt-oss-120b", 116.83e9, 5.13e9, true},      // gpt-oss model card: 116.83B, 5.13B
      {"kimi-k2", 1e12, 32e9, true},                 // Kimi-K2 card: 1T, 32B
  };
  for (const Published& p : published) {
    INFO(p.model);
    const schema::Model& m = *testing::shipped_catalog().models().find(p.model)->value;
    const double total = static_cast<double>(parameter_count(m));
    // Within 0.5% of each total; Kimi-K2's "1T" is one significant digit (1.026T).
    CHECK(std::abs(total / p.total - 1) < (p.total == 1e12 ? 0.05 : 0.005));
    if (p.active == 0) continue;
    const double active =
        static_cast<double>(active_parameter_count(m, !p.active_without_embedding));
    // Two-digit figures (37B, 22B, 39B, 32B) are met to their rounding, within 1.1%.
    CHECK(std::abs(active / p.active - 1) < 0.011);
  }
}

TEST_CASE("Llama 4's text models reproduce the cards' figures") {
  // Per layer: attention h (a d + 2 k d) + a d h = 62,914,560, two norms 2 h; an expert
  // 3 h f = 125,829,120 (f = 8192), a dense MLP 3 h 16384, the router h E; embedding and output
  // 2 V h = 2,068,971,520 and the final norm.
  const auto& models = testing::shipped_catalog().models();
  const double attention = 62914560.0 + 2 * 5120, expert = 125829120.0, ends = 2068971520.0 + 5120;
  // Scout: 48 layers of 16 routed experts, one shared, router 5120 x 16.
  const schema::Model& scout = *models.find("llama4-scout")->value;
  CHECK(parameter_count(scout) == 48 * (attention + 17 * expert + 5120 * 16) + ends);
  CHECK(parameter_count(scout) == 107769861120);  // the card's 109B adds the vision encoder
  CHECK(std::abs(active_parameter_count(scout, true) / 17e9 - 1) < 0.011);  // 17.17B
  // Maverick: experts (128 routed, one shared) in the odd layers, a dense MLP of 16384 between.
  const schema::Model& maverick = *models.find("llama4-maverick")->value;
  CHECK(moe_layer_count(maverick.transformer()) == 24);
  CHECK(layer_kind(maverick.transformer(), 0) == LayerKind::kDense);
  CHECK(layer_kind(maverick.transformer(), 1) == LayerKind::kExperts);
  CHECK(moe_layers_in(maverick.transformer(), 2, 3) == 1);  // layer 3
  CHECK(parameter_count(maverick) ==
        48 * attention + 24 * (129 * expert + 5120 * 128) + 24 * 3 * 5120 * 16384.0 + ends);
  CHECK(std::abs(parameter_count(maverick) / 400e9 - 1) < 0.005);              // 400.71B
  CHECK(std::abs(active_parameter_count(maverick, true) / 17e9 - 1) < 0.011);  // 17.18B
}

TEST_CASE("DeepSeek V4 Flash's shape gives its card's 284B and 13B, each layer by its ratio") {
  const schema::Model& flash =
      *testing::shipped_catalog().models().find("deepseek-v4-flash")->value;
  const schema::Transformer& t = flash.transformer();
  // h 4096, 64 heads of d 512, q_lora 1024, o_lora 1024 in 8 groups, 64 sinks.
  const double h = 4096, d = 512, q = 1024, v = 129280;
  const double attention = h * q + q + q * 64 * d + h * d + d + (64 * d / 8) * (8 * 1024) +
                           8 * 1024 * h + 64;
  // Compressors: ratio 4 overlaps (2 x dim per entry), ratio 128 does not; wkv, wgate, the
  // position bias, the norm. The indexer: 64 x 128 queries from q, 64 weights from h, its own
  // ratio-4 compressor at 128.
  const double compressor4 = 2 * h * 2 * d + 4 * 2 * d + d;
  const double compressor128 = 2 * h * d + 128 * d + d;
  const double indexer = q * 64 * 128 + h * 64 + (2 * h * 2 * 128 + 4 * 2 * 128 + 128);
  // Two hyper-connections a layer over 4 streams: 4h -> 16 + 8 mixes, their bias, 3 scales.
  const double hyper = 2 * (4 * h * 24 + 24 + 3);
  const double expert = 3 * h * 2048;
  const double layer = attention + 2 * h + hyper + 257 * expert + h * 256;  // + router
  const double ends = v * h + (v * h + h) + (16 * h + 4 + 1);  // embedding; head; contraction
  // 2 window-only layers, 21 of ratio 4, 20 of ratio 128.
  const double total = ends + 43 * layer + 21 * (compressor4 + indexer) + 20 * compressor128;
  CHECK(static_cast<double>(parameter_count(flash)) == total);
  CHECK(parameter_count(flash) == 284332230231);
  CHECK(std::abs(static_cast<double>(parameter_count(flash)) / 284e9 - 1) < 0.005);
  // Active, the embedding excluded: 13.27B, which "13B" rounds (2.1% over; 13.80B with the
  // table would not).
  const double active = static_cast<double>(active_parameter_count(flash, false));
  CHECK(active == total - v * h - 43 * 250 * expert);
  CHECK(active >= 12.5e9);
  CHECK(active < 13.5e9);
  CHECK(static_cast<double>(active_parameter_count(flash, true)) >= 13.5e9);
  // Each layer carries its own ratio's compressed keys; the pipeline split sees them.
  CHECK(layer_parameters(t, 0, 1).all == layer);
  CHECK(layer_parameters(t, 2, 1).all == layer + compressor4 + indexer);
  CHECK(layer_parameters(t, 3, 1).all == layer + compressor128);
  CHECK(layer_parameters(t, 0, 43).all == total - ends);
  // The MTP module: a window-only layer, three norms, e_proj and h_proj, its own contraction.
  const auto p = transformer_parameters(t);
  CHECK(static_cast<double>(p.multi_token_prediction) == layer + 3 * h + 2 * h * h + 16 * h + 5);
  const MultiTokenPredictionParameters mtp = multi_token_prediction_parameters(t, p);
  CHECK(mtp.layers.all == layer);
  CHECK(mtp.other == 3 * h + 2 * h * h + 16 * h + 5);
}

TEST_CASE("DeepSeek-V3's multi-token-prediction module is 11.6B (685B - 671B with copies)") {
  // README of deepseek-ai/DeepSeek-V3: 14B of MTP weights, which include copies of the
  // 129280 x 7168 embedding and output head (1.853B).
  const auto p = transformer_parameters(
      testing::shipped_catalog().models().find("deepseek-v3")->value->transformer());
  const double copies = 2.0 * 129280 * 7168;
  CHECK(std::abs((p.multi_token_prediction + copies) / 14e9 - 1) < 0.05);
  CHECK(p.multi_token_prediction == 11610067968);
}

}  // namespace
}  // namespace clustersim
