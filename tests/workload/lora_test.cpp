// Tests of LoRA fine-tuning: the adapters' kernels and parameters, a frozen GEMM's backward (its
// data gradient only) and casts, the step's FLOPs against their closed form, and the model
// states (no gradients or optimizer states for the frozen base).
#include "sim/workload/lora.h"

#include <catch2/catch.hpp>

#include "sim/hw/compute_model.h"
#include "sim/parallel/layer_times.h"
#include "sim/parallel/memory_model.h"
#include "sim/workload/fp8_casts.h"
#include "tests/testing/parse_message.h"
#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

namespace s = schema;
using K = LayerOp::Kind;

const s::Transformer& llama70b() { return testing::shipped_model("llama3-70b").transformer(); }

s::Lora lora(const std::string& text) { return testing::parse_message<s::Lora>(text); }

s::TrainingJob lora_job(const std::string& text) {
  return testing::parse_message<s::TrainingJob>(text);
}

// Llama 3 70B's dense layer at 4096 tokens, TP 1.
std::vector<LayerOp> layer() {
  const LayerShape shape{4096, 1, 1, false, true, 1, s::P2P, 2.0};
  return layer_forward_ops(llama70b(), shape, LayerKind::kDense);
}

const LayerOp& named(const std::vector<LayerOp>& ops, const std::string& name) {
  for (const LayerOp& op : ops) {
    if (op.name == name) return op;
  }
  FAIL("no op " << name);
  return ops.front();
}

TEST_CASE("LoRA adapts the targeted GEMMs with x . A . B in 16 bits and freezes every base GEMM") {
  const std::vector<LayerOp> ops =
      with_lora(lora("rank: 16 target_modules: LINEAR_QKV"), layer(), 1);
  int matmuls = 0;
  for (const LayerOp& op : ops) {
    if (op.kind != K::kMatmul) continue;
    ++matmuls;
    // The base GEMMs are frozen; the adapters train.
    CHECK(op.frozen == (op.name.find("adapter") == std::string::npos));
  }
  CHECK(matmuls == 4 + 2);
  // QKV of 8192 -> (64 + 2 x 8) x 128 = 10240: A is 8192 x 16, B 16 x 10240, on 4096 tokens.
  const LayerOp& a = named(ops, "qkv adapter A");
  const LayerOp& b = named(ops, "qkv adapter B");
  CHECK((a.m == 4096 && a.n == 16 && a.k == 8192 && a.sixteen_bit));
  CHECK((b.m == 4096 && b.n == 10240 && b.k == 16 && b.sixteen_bit));
  // Forward: read the base's and the adapter's outputs, write their sum (4096 x 10240). Backward:
  // no kernel for the sum's gradient; the two gradients of the shared input (4096 x 8192) summed.
  CHECK(named(ops, "qkv adapter add").bytes == 3.0 * 2 * 4096 * 10240);
  CHECK(named(ops, "qkv adapter add").backward_bytes == 3.0 * 2 * 4096 * 8192);
  // After QKV (column-parallel), before the output projection and FC2 (row-parallel).
  const std::vector<LayerOp> all = with_lora(lora("rank: 8"), layer(), 1);
  std::vector<std::string> order;
  for (const LayerOp& op : all) {
    if (op.kind == K::kMatmul) order.push_back(op.name);
  }
  CHECK(order == std::vector<std::string>{
                     "qkv", "qkv adapter A", "qkv adapter B", "attention out adapter A",
                     "attention out adapter B", "attention out", "mlp up", "mlp up adapter A",
                     "mlp up adapter B", "mlp down adapter A", "mlp down adapter B", "mlp down"});
}

TEST_CASE("LoRA's dropout is one kernel on each adapter's output, before the add") {
  const std::vector<LayerOp> plain =
      with_lora(lora("rank: 16 target_modules: LINEAR_FC2"), layer(), 1);
  for (const LayerOp& op : plain) CHECK(op.name.find("dropout") == std::string::npos);
  const std::vector<LayerOp> ops =
      with_lora(lora("rank: 16 target_modules: LINEAR_FC2 dropout: 0.1"), layer(), 1);
  CHECK(ops.size() == plain.size() + 1);
  // FC2's output is 4096 x 8192: read 2 bytes, write 2 and a 1-byte mask per element; the
  // backward reads the gradient and the mask and writes the gradient.
  const LayerOp& dropout = named(ops, "mlp down adapter dropout");
  CHECK(dropout.kind == K::kMemory);
  CHECK(dropout.bytes == 5.0 * 4096 * 8192);
  CHECK(dropout.backward_bytes == 5.0 * 4096 * 8192);
  std::vector<std::string> order;
  for (const LayerOp& op : ops) {
    if (op.name.rfind("mlp down", 0) == 0) order.push_back(op.name);
  }
  CHECK(order == std::vector<std::string>{"mlp down adapter A", "mlp down adapter B",
                                          "mlp down adapter dropout", "mlp down adapter add",
                                          "mlp down"});
}

TEST_CASE("LoRA's dropout before the adapter acts on its input, a sequence-parallel shard") {
  const std::string targets = "rank: 16 target_modules: LINEAR_QKV target_modules: LINEAR_PROJ ";
  // Llama 3 70B at TP 4: QKV's input is the gathered 4096 x 8192, which a column-parallel adapter
  // drops as the rank's 1024 x 8192 shard; proj's is 4096 x 2048, already split. Each element:
  // read 2 bytes, write 2 and a 1-byte mask.
  const LayerShape shape{4096, 1, 4, true, true, 1, s::P2P, 2.0};
  const std::vector<LayerOp> ops =
      with_lora(lora(targets + "dropout: 0.1 dropout_position: LORA_DROPOUT_PRE"),
                layer_forward_ops(llama70b(), shape, LayerKind::kDense), 4);
  const LayerOp& qkv = named(ops, "qkv adapter dropout");
  CHECK(qkv.bytes == 5.0 * 1024 * 8192);
  CHECK(qkv.backward_bytes == qkv.bytes);
  CHECK(named(ops, "attention out adapter dropout").bytes == 5.0 * 4096 * 2048);
  std::vector<std::string> order;
  for (const LayerOp& op : ops) {
    if (op.name.rfind("qkv", 0) == 0) order.push_back(op.name);
  }
  CHECK(order == std::vector<std::string>{"qkv", "qkv adapter dropout", "qkv adapter A",
                                          "qkv adapter B", "qkv adapter add"});
  // After the adapter (the default): QKV's output, 4096 x 10240 / 4, at any sequence sharding.
  const std::vector<LayerOp> post = with_lora(lora(targets + "dropout: 0.1"),
                                              layer_forward_ops(llama70b(), shape,
                                                                LayerKind::kDense),
                                              4);
  CHECK(named(post, "qkv adapter dropout").bytes == 5.0 * 4096 * 2560);
}

TEST_CASE("LoRA's trainable parameters are r (k + n) per adapted weight") {
  // Llama 3 70B: QKV 8192 x 10240, proj 8192 x 8192, FC1 8192 x 2 x 28672, FC2 28672 x 8192.
  CHECK(lora_parameters_per_layer(llama70b(), lora("rank: 16 target_modules: LINEAR_QKV"), false) ==
        16.0 * (8192 + 10240));
  CHECK(lora_parameters_per_layer(llama70b(), lora("rank: 16"), false) ==
        16.0 * ((8192 + 10240) + (8192 + 8192) + (8192 + 57344) + (28672 + 8192)));
  CHECK(lora_parameters_per_layer(
            llama70b(), lora("rank: 4 target_modules: LINEAR_FC2 target_modules: LINEAR_PROJ"),
            false) ==
        4.0 * ((8192 + 8192) + (28672 + 8192)));
}

TEST_CASE("with separate projections each of q, k, v and gate, up carries its own adapter") {
  LayerShape shape{4096, 1, 1, false, true, 1, s::P2P, 2.0};
  shape.separate_projections = true;
  const std::vector<LayerOp> ops =
      with_lora(lora("rank: 16"), layer_forward_ops(llama70b(), shape, LayerKind::kDense), 1);
  std::vector<std::string> order;
  for (const LayerOp& op : ops) {
    if (op.kind == K::kMatmul && op.name.find("adapter B") != std::string::npos) {
      order.push_back(op.name);
    }
  }
  CHECK(order == std::vector<std::string>{"q adapter B", "k adapter B", "v adapter B",
                                          "attention out adapter B", "mlp gate adapter B",
                                          "mlp up adapter B", "mlp down adapter B"});
  // Each A reads the whole 4096 x 8192 input; each B writes its projection's width.
  CHECK((named(ops, "k adapter A").k == 8192 && named(ops, "k adapter A").n == 16));
  CHECK(named(ops, "k adapter B").n == 1024);
  CHECK(named(ops, "mlp gate adapter B").n == 28672);
  // r (3 h + (a + 2 kv) d) + r (a d + h) + r (2 h + 2 f) + r (f + h) for Llama 3 70B.
  CHECK(lora_parameters_per_layer(llama70b(), lora("rank: 16"), true) ==
        16.0 * ((3 * 8192 + 10240) + (8192 + 8192) + (2 * 8192 + 57344) + (28672 + 8192)));
  TransformerFlops f = transformer_flops(llama70b(), 4096);
  add_lora_flops(llama70b(), lora_job("lora { rank: 16 } separate_projections: true"), &f);
  CHECK(f.adapter_forward_per_token ==
        2 * lora_parameters_per_layer(llama70b(), lora("rank: 16"), true));
}

TEST_CASE(
    "AutoModel's PEFT TFLOP/s: full-training causal FLOPs times (2 + adapters / frozen) / 3") {
  // Llama 3 8B (8,030,261,248 parameters), rank 16 on QKV 4096 x 6144, proj 4096 x 4096, FC1
  // 4096 x 2 x 14336 and FC2 14336 x 4096 in each of its 32 layers.
  const s::Transformer& t = testing::shipped_model("llama3-8b").transformer();
  const double adapters =
      32 * 16.0 * ((4096 + 6144) + (4096 + 4096) + (4096 + 28672) + (14336 + 4096));
  const double scale = peft_flops_scale(t, lora_job("lora { rank: 16 }"));
  CHECK(scale == Approx((2 + adapters / 8030261248.0) / 3));
  // The published 1-GPU row (AutoModel docs/performance-summary.mdx @ 36044ad3): 32 x 4096 tokens
  // in 10.51 s at 402 TFLOP/s.
  const double flops =
      transformer_flops(t, 4096, AttentionCount::kCausal).model_per_token() * scale * 32 * 4096;
  CHECK(flops / 10.51 / 1e12 == Approx(402).epsilon(0.005));
}

TEST_CASE("a frozen GEMM's backward is its data gradient alone: 2 m n k FLOPs, not 4") {
  const Catalog& c = testing::shipped_catalog();
  const ComputeModel compute(*c.gpus().find("H100-SXM5-80GB")->value, s::BF16,
                             *c.runtimes().find("default")->value, KernelSetting::kTrainingStep);
  LayerOp gemm{K::kMatmul, "qkv", 4096, 10240, 8192};
  const LayerTimes trained = time_layer({gemm}, compute, {}, s::RECOMPUTE_NONE);
  gemm.frozen = true;
  const LayerTimes frozen = time_layer({gemm}, compute, {}, s::RECOMPUTE_NONE);
  const Picoseconds data_gradient = compute.matmul(4096, 8192, 10240, 1, false);
  const Picoseconds weight_gradient = compute.matmul(8192, 10240, 4096, 1, false);
  CHECK(frozen.forward.compute == trained.forward.compute);
  CHECK(frozen.backward.compute == data_gradient);
  CHECK(trained.backward.compute == data_gradient + weight_gradient);
}

TEST_CASE("a frozen GEMM's FP8 casts write one copy each, its MXFP8 weights none per step") {
  LayerOp gemm{K::kMatmul, "qkv", 4096, 10240, 8192};
  gemm.frozen = true;
  // MXFP8: read 2 and write one copy of 1 + 1/32 bytes (not two) per element.
  const Fp8CastBytes casts = fp8_cast_bytes({gemm}, s::MXFP8, true, 1);
  CHECK(casts.forward == Approx((2 + 1 + 1.0 / 32) * 4096 * 8192));
  CHECK(casts.backward == Approx((2 + 1 + 1.0 / 32) * 4096 * 10240));
  CHECK(fp8_weight_cast_bytes(1e9, s::MXFP8, true, true, true) == 0);
  CHECK(fp8_weight_cast_bytes(1e9, s::MXFP8, true, true, false) > 0);
}

TEST_CASE(
    "LoRA's model FLOPs: the frozen weights forward + data gradient, attention and adapters 3x") {
  const TransformerFlops full = transformer_flops(llama70b(), 4096);
  TransformerFlops f = full;
  add_lora_flops(llama70b(), lora_job("lora { rank: 16 target_modules: LINEAR_QKV }"), &f);
  // Per token: 2 x (80 layers' weight GEMMs + logits) + 3 x 80 x (attention + 2 r (k + n)).
  const double l = 80, attention = full.attention_forward_per_token;
  const double weights = l * (full.layer_forward_per_token - attention) + 2.0 * 8192 * 128256;
  const double adapters = 2 * 16.0 * (8192 + 10240);
  CHECK(f.model_per_token() == Approx(2 * weights + 3 * l * (attention + adapters)));
  // Llama 3 70B's weights: 12 + 12 kv / a + 18 f / h times h^2 per layer (Megatron-Bridge's
  // LoRA count), 6 V / (l h) for the logits.
  const double h = 8192;
  CHECK(weights * 3 ==
        Approx(l * h * h * (12 + 12.0 * 8 / 64 + 18.0 * 28672 / h) + 6.0 * 128256 * h));
}

TEST_CASE("LoRA keeps gradients and optimizer states of the adapters only") {
  // Llama 3 70B, TP 1, PP 4 (20 layers on stage 0), DP 2, the distributed optimizer, BF16.
  const s::Model& model = testing::shipped_model("llama3-70b");
  s::Parallelism p = testing::parse_message<s::Parallelism>(
      "tensor_parallel: 1 pipeline_parallel: 4 data_parallel: 2 micro_batch_size: 1 "
      "virtual_stages: 1 zero_stage: 0 schedule: ONE_F_ONE_B recompute: RECOMPUTE_NONE "
      "distributed_optimizer: true");
  const std::string base =
      "global_batch_size: 32 sequence_length: 4096 precision: BF16 "
      "optimizer: ADAM steps: 1 ";
  const auto job = [&](const std::string& extra) {
    return testing::parse_message<s::TrainingJob>(base + extra);
  };
  const MemoryEstimate full = estimate_stage_memory(model, job(""), p, 0, 1e15, {});
  const MemoryEstimate lora = estimate_stage_memory(
      model, job("lora { rank: 16 target_modules: LINEAR_QKV }"), p, 0, 1e15, {});
  const double adapters = 20 * 16.0 * (8192 + 10240);
  CHECK(lora.weights_bytes == Approx(full.weights_bytes + 2 * adapters));
  CHECK(lora.gradients_bytes == Approx(4 * adapters));
  CHECK(lora.optimizer_bytes == Approx(12 * adapters / 2));
  CHECK(full.gradients_bytes / lora.gradients_bytes > 1000);
}

}  // namespace
}  // namespace clustersim
