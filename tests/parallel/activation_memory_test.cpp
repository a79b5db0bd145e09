// Tests of per-layer activation memory against Korthikanti et al. 2022, Table 2, for a GPT layer
// (multi-head attention, 4h GELU MLP, LayerNorm, dropout), and of how the other shapes move it.
#include "sim/parallel/activation_memory.h"

#include <catch2/catch.hpp>

#include "tests/testing/parse_message.h"

namespace clustersim {
namespace {

// GPT-3 175B's layer shape: h = 12288, a = 96.
schema::Transformer gpt_layer() {
  return testing::parse_message<schema::Transformer>(R"(
    kind: DECODER num_layers: 96 hidden_size: 12288 num_attention_heads: 96 ffn_hidden_size: 49152
    mlp_activation: GELU normalization: LAYERNORM position_embedding: LEARNED vocab_size: 51200
    max_sequence_length: 2048 dropout: true)");
}

double bytes(const schema::Transformer& t, int tp, bool sp, schema::Recompute recompute,
             bool flash = false) {
  return layer_activation_bytes(t, {2048, 1, tp, sp, recompute, flash});
}

TEST_CASE("GPT layer activations equal Korthikanti et al.'s Table 2 in every row") {
  const auto t = gpt_layer();
  const double s = 2048, b = 1, h = 12288, a = 96, tp = 8;
  const double sbh = s * b * h;
  // no parallelism: sbh (34 + 5as/h)
  CHECK(bytes(t, 1, false, schema::RECOMPUTE_NONE) == Approx(sbh * (34 + 5 * a * s / h)));
  // tensor parallel: sbh (10 + 24/t + 5as/(ht))
  CHECK(bytes(t, 8, false, schema::RECOMPUTE_NONE) ==
        Approx(sbh * (10 + 24 / tp + 5 * a * s / (h * tp))));
  // tensor + sequence parallel: sbh/t (34 + 5as/h)
  CHECK(bytes(t, 8, true, schema::RECOMPUTE_NONE) == Approx(sbh / tp * (34 + 5 * a * s / h)));
  // selective recomputation: sbh (10 + 24/t), and 34 sbh/t with sequence parallelism
  CHECK(bytes(t, 8, false, schema::RECOMPUTE_SELECTIVE) == Approx(sbh * (10 + 24 / tp)));
  CHECK(bytes(t, 8, true, schema::RECOMPUTE_SELECTIVE) == Approx(34 * sbh / tp));
  // full recomputation: the layer input, 2 sbh
  CHECK(bytes(t, 8, false, schema::RECOMPUTE_FULL) == Approx(2 * sbh));
}

TEST_CASE("flash attention stores no s x s tensors, only a log-sum-exp per head") {
  const auto t = gpt_layer();
  const double s = 2048, h = 12288, a = 96;
  CHECK(bytes(t, 1, false, schema::RECOMPUTE_NONE, true) == Approx(s * h * 34 + 4 * s * a));
}

TEST_CASE("without dropout the masks and dropout outputs are not stored") {
  auto t = gpt_layer();
  t.set_dropout(false);
  const double s = 2048, h = 12288, a = 96;
  // Two hidden-size masks (1 byte each) and, of the 5as^2b, the mask (1) and dropout output (2).
  CHECK(bytes(t, 1, false, schema::RECOMPUTE_NONE) == Approx(s * h * 32 + 2 * a * s * s));
}

TEST_CASE("latent attention's up-projection recomputation frees Q, K and V, keeps the latents") {
  // DeepSeek-V3's attention (a = 128, nope + rope = 192, v = 128) on s = 2048 tokens, TP 2:
  // Q and K 2 x 2 s a 192 and V 2 s a 128 bytes, split over the TP ranks, are no longer stored.
  auto mla = gpt_layer();
  mla.set_num_attention_heads(128);
  *mla.mutable_latent_attention() = testing::parse_message<schema::MultiHeadLatentAttention>(
      "q_lora_rank: 1536 kv_lora_rank: 512 qk_nope_head_dim: 128 qk_rope_head_dim: 64 "
      "v_head_dim: 128");
  LayerActivationSpec spec{2048, 1, 2, true, schema::RECOMPUTE_NONE, true};
  const double kept = layer_activation_bytes(mla, spec);
  spec.recompute_latent_up = true;
  const double s = 2048, a = 128;
  CHECK(kept - layer_activation_bytes(mla, spec) ==
        Approx((2 * 2 * s * a * 192 + 2 * s * a * 128) / 2));
}

TEST_CASE("grouped-query attention stores smaller K and V, a gated MLP stores three f tensors") {
  auto mha = gpt_layer();
  auto gqa = mha;
  gqa.set_num_kv_heads(8);
  const double s = 2048, d = 128, a = 96, k = 8;
  // K and V: 2 bytes x s x (a - k) x d each fewer.
  CHECK(bytes(mha, 1, false, schema::RECOMPUTE_SELECTIVE) -
            bytes(gqa, 1, false, schema::RECOMPUTE_SELECTIVE) ==
        Approx(2 * 2 * s * (a - k) * d));
  auto gated = mha;
  gated.set_mlp_activation(schema::SWIGLU);
  // GELU keeps 2 tensors of f (activation input and output), SwiGLU 3 (gate and up outputs and
  // their product; the fused kernel recomputes the activation): 2 bytes x s x f more.
  CHECK(bytes(gated, 1, false, schema::RECOMPUTE_SELECTIVE) -
            bytes(mha, 1, false, schema::RECOMPUTE_SELECTIVE) ==
        Approx(2 * s * 49152.0));
}

TEST_CASE("LoRA keeps no input of a frozen linear layer and a targeted one's in 16 bits") {
  schema::TrainingJob job;
  job.set_precision(schema::FP8);
  job.set_fp8_recipe(schema::MXFP8);
  const SavedGemmInputs fp8 = saved_gemm_inputs(job);
  CHECK((fp8.qkv == 1 && fp8.projection == 1 && fp8.mlp_up == 1 && fp8.mlp_down == 1));
  job.mutable_lora()->set_rank(16);
  job.mutable_lora()->add_target_modules(schema::LINEAR_QKV);
  job.mutable_lora()->add_target_modules(schema::LINEAR_FC2);
  const SavedGemmInputs lora = saved_gemm_inputs(job);
  CHECK((lora.qkv == 2 && lora.projection == 0 && lora.mlp_up == 0 && lora.mlp_down == 2));
  // On GPT-3's layer at TP 8 with SP, in 16 bits: adapting QKV only drops the MLP input (a
  // boundary tensor, 2Th / 8), the output-projection input 2Tad / 8 and the MLP-down input
  // 2Tf / 8, and nothing else.
  const auto t = gpt_layer();
  LayerActivationSpec spec{2048, 1, 8, true, schema::RECOMPUTE_NONE, true};
  const double full = layer_activation_bytes(t, spec);
  spec.gemm_inputs = {2, 0, 0, 0};
  const double tokens = 2048, h = 12288, f = 4 * h;
  CHECK(full - layer_activation_bytes(t, spec) ==
        Approx((2 * tokens * h + 2 * tokens * h + 2 * tokens * f) / 8));
}

}  // namespace
}  // namespace clustersim
