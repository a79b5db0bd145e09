// Tests of the per-GPU memory model: model states per ZeRO stage (2 + 4 + 12 bytes per parameter),
// pipeline in-flight activations, uneven stages, and the OOM report.
#include "sim/parallel/memory_model.h"

#include <catch2/catch.hpp>

#include "sim/parallel/activation_memory.h"
#include "sim/util/units.h"
#include "sim/workload/lora.h"
#include "sim/workload/parameter_count.h"
#include "tests/testing/parse_message.h"
#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

namespace s = schema;

using testing::shipped_model;

s::TrainingJob job(int global_batch, int seq) {
  return testing::parse_message<s::TrainingJob>(
      "global_batch_size: " + std::to_string(global_batch) +
      " sequence_length: " + std::to_string(seq) + " precision: BF16 optimizer: ADAM steps: 1");
}

// A fully resolved plan (as sweep configurations are); `extra` overrides fields.
s::Parallelism plan(int tp, int pp, int dp, int mbs, const std::string& extra = "") {
  s::Parallelism p = testing::parse_message<s::Parallelism>(
      "tensor_parallel: " + std::to_string(tp) + " pipeline_parallel: " + std::to_string(pp) +
      " data_parallel: " + std::to_string(dp) + " micro_batch_size: " + std::to_string(mbs) +
      " virtual_stages: 1 zero_stage: 0 schedule: ONE_F_ONE_B recompute: RECOMPUTE_NONE");
  p.MergeFrom(testing::parse_message<s::Parallelism>(extra));
  return p;
}

TEST_CASE("routed experts' states split over EP, their optimizer shards over the expert DP") {
  // Mixtral 8x7B on 8 GPUs, TP 1, DP 8, EP 4 with the distributed optimizer: each GPU holds the
  // dense parameters and 2 of the 8 experts of every layer; Adam's 12 bytes of the dense ones
  // are sharded over DP 8, the experts' over their expert data-parallel group of 2.
  const TransformerParameters params =
      transformer_parameters(shipped_model("mixtral-8x7b").transformer());
  const double routed = 32.0 * params.routed_experts_per_layer;
  const double dense = static_cast<double>(params.total()) - routed;
  const MemoryEstimate e =
      estimate_memory(shipped_model("mixtral-8x7b"), job(64, 4096),
                      plan(1, 1, 8, 1, "expert_parallel: 4 distributed_optimizer: true"), 1e15, {});
  CHECK(e.weights_bytes == Approx(2 * (dense + routed / 4)));
  CHECK(e.gradients_bytes == Approx(4 * (dense + routed / 4)));
  CHECK(e.optimizer_bytes == Approx(12 * (dense / 8 + routed / 4 / 2)));
}

TEST_CASE("the GPU of a hot expert stores its extra rows and receives them in the dispatch") {
  // Mixtral 8x7B on 8 GPUs, EP 8: one expert per GPU. Each routed copy stores the gated expert
  // MLP's gate and up outputs and their product (3 x 2 bytes per element of the 14336 width) and
  // its 2-byte permuted input of 4096;
  // 4096 tokens x 2 copies per layer, 32 layers in flight at once (one micro-batch, one stage).
  // The hot expert's GPU holds 1.5 times the copies; its dispatch receive buffer too.
  auto routed = [](const std::string& routing) {
    s::TrainingJob j = job(8, 4096);
    j.MergeFrom(testing::parse_message<s::TrainingJob>(routing));
    return estimate_memory(shipped_model("mixtral-8x7b"), j, plan(1, 1, 8, 1, "expert_parallel: 8"),
                           1e15, {})
        .activations_bytes;
  };
  const double copies = 4096.0 * 2, per_copy = 6.0 * 14336 + 2.0 * 4096;
  CHECK(routed("expert_routing { max_violation: 0.5 }") - routed("") ==
        Approx(0.5 * copies * (32 * per_copy + 2.0 * 4096)));
}

TEST_CASE("mixed-precision Adam keeps 2 + 4 + 12 bytes per parameter") {
  const auto b = state_bytes_per_parameter(s::BF16, s::ADAM);
  CHECK(b.weights == 2);
  CHECK(b.gradients == 4);
  CHECK(b.optimizer == 12);
  const auto fp32 = state_bytes_per_parameter(s::FP32, s::ADAM);  // no master copy
  CHECK(fp32.weights + fp32.gradients + fp32.optimizer == 16);
}

TEST_CASE("ZeRO stages shard optimizer states, then gradients, then weights over DP") {
  // Llama-2-7B, TP 1, PP 1, DP 8: P = 6,738,415,616 parameters on every GPU.
  const double params = 6738415616.0, dp = 8;
  auto states = [&](const std::string& extra) {
    return estimate_memory(shipped_model("llama2-7b"), job(64, 4096), plan(1, 1, 8, 1, extra), 1e15,
                           {})
        .model_state_bytes();
  };
  CHECK(states("") == Approx(params * 18));
  CHECK(states("zero_stage: 1") == Approx(params * (2 + 4 + 12 / dp)));
  CHECK(states("distributed_optimizer: true") ==
        Approx(params * (6 + 12 / dp)));  // Megatron's table
  CHECK(states("zero_stage: 2") == Approx(params * (2 + 16 / dp)));
  CHECK(states("zero_stage: 3") == Approx(params * 18 / dp));
}

TEST_CASE("the distributed optimizer shards over data x context parallel, BF16 main grads halve") {
  const double params = 6738415616.0;  // Llama-2-7B on every GPU (TP 1, PP 1)
  auto states = [&](const std::string& extra) {
    return estimate_memory(shipped_model("llama2-7b"), job(64, 4096), plan(1, 1, 4, 1, extra), 1e15,
                           {});
  };
  const MemoryEstimate cp = states("distributed_optimizer: true context_parallel: 2");
  CHECK(cp.optimizer_bytes == Approx(params * 12 / 8));
  CHECK(cp.gradients_bytes == Approx(params * 4));  // Megatron-Core keeps the whole buffer
  const MemoryEstimate bf16 =
      states("distributed_optimizer: true gradient_reduce_in_fp32: false");
  CHECK(bf16.gradients_bytes == Approx(params * 2));
}

TEST_CASE("context parallel 2 halves each rank's activations and logits") {
  const auto& llama = shipped_model("llama3-8b");
  const auto one = estimate_memory(llama, job(64, 8192), plan(1, 1, 4, 1), 1e15, {});
  const auto two =
      estimate_memory(llama, job(64, 8192), plan(1, 1, 4, 1, "context_parallel: 2"), 1e15, {});
  CHECK(two.activations_bytes == Approx(one.activations_bytes / 2));
  CHECK(two.logits_bytes == Approx(one.logits_bytes / 2));
}

TEST_CASE("the loss holds the 16-bit logits and their fp32 copy, 6 bytes an element") {
  const auto& llama = shipped_model("llama3-8b");
  const auto e = estimate_memory(llama, job(64, 8192), plan(2, 1, 4, 1), 1e15, {});
  CHECK(e.logits_bytes == Approx(6.0 * 8192 * llama.transformer().vocab_size() / 2));
}

TEST_CASE("Transformer Engine's cross entropy keeps only the 16-bit logits, 2 bytes an element") {
  const auto& llama = shipped_model("llama3-8b");
  s::TrainingJob te = job(64, 8192);
  te.set_transformer_engine_cross_entropy(true);
  const auto e = estimate_memory(llama, te, plan(2, 1, 4, 1), 1e15, {});
  CHECK(e.logits_bytes == Approx(2.0 * 8192 * llama.transformer().vocab_size() / 2));
}

TEST_CASE("PyTorch's cross entropy keeps log_softmax's output, 4 bytes an element, 10 upcast") {
  const auto& llama = shipped_model("llama3-8b");
  const auto logits_bytes = [&](s::TorchCrossEntropy loss) {
    s::TrainingJob torch = job(64, 8192);
    torch.set_torch_cross_entropy(loss);
    return estimate_memory(llama, torch, plan(2, 1, 4, 1), 1e15, {}).logits_bytes;
  };
  const double logits = 8192.0 * llama.transformer().vocab_size() / 2;
  CHECK(logits_bytes(s::SIXTEEN_BIT_LOGITS) == Approx(4.0 * logits));
  CHECK(logits_bytes(s::FP32_UPCAST) == Approx(10.0 * logits));
}

TEST_CASE("multi-token prediction keeps a copy of the embedding on the last stage") {
  // Megatron-Core builds the embedding where pre_process or mtp_process: with PP 2 the last stage
  // holds the modules' weights and vocabulary x hidden more, in 16 bits.
  s::Model mtp = shipped_model("llama3-8b");
  mtp.mutable_transformer()->set_multi_token_prediction_layers(1);
  const auto last = [&](const s::Model& m) {
    return estimate_stage_memory(m, job(64, 8192), plan(1, 2, 4, 1), 1, 1e15, {});
  };
  const s::Transformer& t = mtp.transformer();
  const double added = static_cast<double>(transformer_parameters(t).multi_token_prediction) +
                       static_cast<double>(t.vocab_size()) * t.hidden_size();
  CHECK(last(mtp).weights_bytes - last(shipped_model("llama3-8b")).weights_bytes ==
        Approx(2 * added));
}

// An FP8 job of `batch` sequences of 8,192 tokens, with `extra` job fields.
s::TrainingJob fp8_job(const std::string& extra, int batch = 64) {
  return testing::parse_message<s::TrainingJob>(
      "global_batch_size: " + std::to_string(batch) +
      " sequence_length: 8192 precision: FP8 optimizer: ADAM steps: 1 " + extra);
}

TEST_CASE("FP8: Transformer Engine's weight copies, 1-byte FP8 weights and GEMM inputs") {
  const auto& llama = shipped_model("llama3-8b");
  const auto p = plan(1, 1, 8, 1, "distributed_optimizer: true");
  const auto bf16 = estimate_memory(llama, job(64, 8192), p, 1e15, {});
  const auto cached = estimate_memory(llama, fp8_job(""), p, 1e15, {});
  const auto native = estimate_memory(llama, fp8_job("fp8_parameters: true"), p, 1e15, {});
  const double linear = static_cast<double>(transformer_parameters(llama.transformer()).layers);
  CHECK(bf16.weight_cache_bytes == 0);
  CHECK(cached.weight_cache_bytes == Approx(2 * linear));  // an FP8 copy and its transpose
  CHECK(cached.weights_bytes == bf16.weights_bytes);
  CHECK(native.weights_bytes == Approx(bf16.weights_bytes - linear));  // 1 byte instead of 2
  CHECK(native.weight_cache_bytes == Approx(linear));                  // the transposes
  CHECK(cached.activations_bytes < bf16.activations_bytes);
}

TEST_CASE("FP8 weight copies where the GPU's FP8 GEMMs take either layout: no transposes") {
  // Transformer Engine's Float8Quantizer creates no transpose where non-TN FP8 GEMMs run
  // (Blackwell): per-tensor FP8 keeps the FP8 copy alone, FP8 weights nothing beside them; MXFP8's
  // column-wise copy is a quantization of its own, kept on any GPU (1 byte an element each:
  // narrow_weight_bytes).
  const auto& llama = shipped_model("llama3-8b");
  const auto p = plan(1, 1, 8, 1, "distributed_optimizer: true");
  RuntimeMemory any_layout;
  any_layout.fp8_gemm_any_layout = true;
  const double linear = static_cast<double>(transformer_parameters(llama.transformer()).layers);
  CHECK(estimate_memory(llama, fp8_job(""), p, 1e15, any_layout).weight_cache_bytes ==
        Approx(linear));
  CHECK(estimate_memory(llama, fp8_job("fp8_parameters: true"), p, 1e15, any_layout)
            .weight_cache_bytes == 0);
  CHECK(estimate_memory(llama, fp8_job("fp8_recipe: MXFP8"), p, 1e15, any_layout)
            .weight_cache_bytes == Approx(2 * linear));
}

TEST_CASE("FP8 weights' transposes made at each use are not held") {
  const auto& llama = shipped_model("llama3-8b");
  const auto job = testing::parse_message<s::TrainingJob>(
      "global_batch_size: 64 sequence_length: 8192 precision: FP8 optimizer: ADAM steps: 1 "
      "fp8_parameters: true fp8_weight_transpose_per_use: true");
  const auto p = plan(1, 1, 8, 1, "distributed_optimizer: true");
  CHECK(estimate_memory(llama, job, p, 1e15, {}).weight_cache_bytes == 0);
}

TEST_CASE("the MLP activation's input kept in FP8 halves what SwiGLU saves of it") {
  // Llama 3 8B, one sequence of 8192 at TP 1: the gate and up outputs, 2 x 14336 a token, saved
  // in 1 byte instead of 2.
  const auto& llama = shipped_model("llama3-8b");
  const auto p = plan(1, 1, 8, 1);
  const auto plain = estimate_memory(llama, fp8_job("", 8), p, 1e15, {});
  const auto stored =
      estimate_memory(llama, fp8_job("fp8_activation_input_store: true", 8), p, 1e15, {});
  CHECK(plain.layer_activations_bytes - stored.layer_activations_bytes ==
        Approx(8192.0 * 2 * 14336));
}

TEST_CASE("16-bit states under FP8: BF16 moments, and a BF16 master shard beside FP8 weights") {
  // Apex's distributed_fused_adam with optim.dtype bf16 under the distributed optimizer, DP 8:
  // moments 2 + 2 bytes over the shards; with FP8 weights its copy of the shard, 2 more.
  const auto& llama = shipped_model("llama3-8b");
  const double params = static_cast<double>(transformer_parameters(llama.transformer()).total());
  const auto p = plan(1, 1, 8, 1, "distributed_optimizer: true");
  const auto bf16_weights =
      estimate_memory(llama, fp8_job("sixteen_bit_states: true"), p, 1e15, {});
  CHECK(bf16_weights.optimizer_bytes == Approx(params * 4 / 8));
  CHECK(bf16_weights.gradients_bytes == Approx(params * 2));
  const auto fp8_weights =
      estimate_memory(llama, fp8_job("sixteen_bit_states: true fp8_parameters: true"), p, 1e15, {});
  CHECK(fp8_weights.optimizer_bytes == Approx(params * 6 / 8));
}

TEST_CASE("BF16 optimizer moments beside fp32 master weights and gradients") {
  // DeepSeek-V3's recipe (arXiv:2412.19437 section 3.3.3): Adam's moments 2 + 2 bytes, the
  // master copy 4, over the distributed optimizer's 8 shards; gradients fp32; SGD with momentum
  // its one moment 2 beside the master's 4.
  const auto& llama = shipped_model("llama3-8b");
  const double params = static_cast<double>(transformer_parameters(llama.transformer()).total());
  const auto bf16_job = [](const std::string& optimizer, const std::string& extra) {
    return testing::parse_message<s::TrainingJob>(
        "global_batch_size: 64 sequence_length: 8192 precision: BF16 steps: 1 optimizer: " +
        optimizer + " " + extra);
  };
  const auto p = plan(1, 1, 8, 1, "distributed_optimizer: true");
  const auto fp32 = estimate_memory(llama, bf16_job("ADAM", ""), p, 1e15, {});
  const auto bf16 =
      estimate_memory(llama, bf16_job("ADAM", "bf16_optimizer_moments: true"), p, 1e15, {});
  CHECK(fp32.optimizer_bytes == Approx(params * 12 / 8));
  CHECK(bf16.optimizer_bytes == Approx(params * 8 / 8));
  CHECK(bf16.gradients_bytes == fp32.gradients_bytes);
  CHECK(bf16.weights_bytes == fp32.weights_bytes);
  const auto momentum = estimate_memory(
      llama, bf16_job("SGD_MOMENTUM", "bf16_optimizer_moments: true"), p, 1e15, {});
  CHECK(momentum.optimizer_bytes == Approx(params * 6 / 8));
}

TEST_CASE("ZeRO-3 keeps FP8 weight copies only with keep_fp8_transpose_cache") {
  // Megatron FSDP: the 1-byte weights shard over DP 8 as the 16-bit ones do; the transposes of the
  // gathered weights live as long as those (not counted) unless the cache is kept, then whole.
  const auto& llama = shipped_model("llama3-8b");
  const auto fp8 = testing::parse_message<s::TrainingJob>(
      "global_batch_size: 64 sequence_length: 8192 precision: FP8 fp8_parameters: true "
      "optimizer: ADAM steps: 1");
  const auto sharded = estimate_memory(llama, fp8, plan(1, 1, 8, 1, "zero_stage: 3"), 1e15, {});
  const auto kept = estimate_memory(
      llama, fp8, plan(1, 1, 8, 1, "zero_stage: 3 keep_fp8_transpose_cache: true"), 1e15, {});
  const double linear = static_cast<double>(transformer_parameters(llama.transformer()).layers);
  CHECK(sharded.weight_cache_bytes == 0);
  CHECK(kept.weight_cache_bytes == Approx(linear));
  CHECK(kept.weights_bytes == sharded.weights_bytes);
  CHECK(kept.model_state_bytes() - sharded.model_state_bytes() == Approx(linear));
}

TEST_CASE("FSDP2 holds two layers' unsharded 16-bit weights beside the shards") {
  // Llama 3 8B over DP 8: the shards as ZeRO-3's, plus 2 x 2 bytes x one layer's weights (the
  // layer computing and the one prefetched).
  const auto& llama = shipped_model("llama3-8b");
  const auto zero3 =
      estimate_memory(llama, job(64, 4096), plan(1, 1, 8, 1, "zero_stage: 3"), 1e15, {});
  const auto fsdp2 = estimate_memory(llama, job(64, 4096),
                                     plan(1, 1, 8, 1, "zero_stage: 3 fsdp2: true"), 1e15, {});
  const s::Transformer& t = llama.transformer();
  const double layer = static_cast<double>(transformer_parameters(t).layers) / t.num_layers();
  CHECK(fsdp2.weights_bytes - zero3.weights_bytes == Approx(2 * 2 * layer));
  CHECK(fsdp2.gradients_bytes == zero3.gradients_bytes);
  CHECK(fsdp2.optimizer_bytes == zero3.optimizer_bytes);
  // LoRA at rank 16 on every projection: Adam's 12 bytes of the adapters over DP 8; their 2-byte
  // weights sharded and, in the two unsharded layers, whole.
  s::TrainingJob lora = job(64, 4096);
  lora.MergeFrom(testing::parse_message<s::TrainingJob>("lora { rank: 16 }"));
  const auto adapted =
      estimate_memory(llama, lora, plan(1, 1, 8, 1, "zero_stage: 3 fsdp2: true"), 1e15, {});
  const double adapters = lora_parameters_per_layer(t, lora.lora(), false) * t.num_layers();
  CHECK(adapted.optimizer_bytes == Approx(12 * adapters / 8));
  CHECK(adapted.weights_bytes - fsdp2.weights_bytes ==
        Approx(2 * adapters / 8 + 2 * 2 * adapters / t.num_layers()));
  // One GPU: nothing sharded, nothing gathered.
  const auto alone =
      estimate_memory(llama, job(8, 4096), plan(1, 1, 1, 1, "zero_stage: 3"), 1e15, {});
  CHECK(
      estimate_memory(llama, job(8, 4096), plan(1, 1, 1, 1, "zero_stage: 3 fsdp2: true"), 1e15, {})
          .weights_bytes == alone.weights_bytes);
}

TEST_CASE("FSDP2 of expert layers: the experts' states sharded over the expert DP group") {
  // Mixtral 8x7B on 8 GPUs, EP 4 (2 of the 8 experts of every layer per GPU), FSDP2: the dense
  // weights, gradients and Adam states over DP 8, the experts' over their expert data-parallel
  // group of EDP = 8 / 4 = 2 (2, 4 and 12 bytes a parameter), plus two layers' unsharded 16-bit
  // weights, their experts included; at EP 8 (EDP 1) each GPU holds its one expert a layer whole
  // and never gathers it.
  const s::Model& mixtral = shipped_model("mixtral-8x7b");
  const TransformerParameters params = transformer_parameters(mixtral.transformer());
  const int layers = mixtral.transformer().num_layers();
  const double routed = static_cast<double>(layers) * params.routed_experts_per_layer;
  const double dense = static_cast<double>(params.total()) - routed;
  const double in_layers = static_cast<double>(params.layers) - routed;  // dense share of layers
  const MemoryEstimate ep4 = estimate_memory(
      mixtral, job(64, 4096), plan(1, 1, 8, 1, "expert_parallel: 4 zero_stage: 3 fsdp2: true"),
      1e15, {});
  CHECK(ep4.weights_bytes ==
        Approx(2 * (dense / 8 + routed / 4 / 2) + 2 * 2 * (in_layers + routed / 4) / layers));
  CHECK(ep4.gradients_bytes == Approx(4 * (dense / 8 + routed / 4 / 2)));
  CHECK(ep4.optimizer_bytes == Approx(12 * (dense / 8 + routed / 4 / 2)));
  const MemoryEstimate ep8 = estimate_memory(
      mixtral, job(64, 4096), plan(1, 1, 8, 1, "expert_parallel: 8 zero_stage: 3 fsdp2: true"),
      1e15, {});
  CHECK(ep8.weights_bytes ==
        Approx(2 * (dense / 8 + routed / 8) + 2 * 2 * in_layers / layers));
  CHECK(ep8.optimizer_bytes == Approx(12 * (dense / 8 + routed / 8)));
  // The forward's gather kept for the backward: every module's 16-bit weights whole at once
  // (embedding and head too); deferred synchronization adds every gradient unsharded in fp32.
  const MemoryEstimate kept = estimate_memory(
      mixtral, job(64, 4096),
      plan(1, 1, 8, 1,
           "expert_parallel: 4 zero_stage: 3 fsdp2: true fsdp2_keep_forward_gather: true "
           "fsdp2_defer_gradient_sync: true gradient_reduce_in_fp32: true"),
      1e15, {});
  CHECK(kept.weights_bytes == Approx(2 * (dense / 8 + routed / 4 / 2) + 2 * (dense + routed / 4)));
  CHECK(kept.gradients_bytes ==
        Approx(4 * (dense / 8 + routed / 4 / 2) + 4 * (dense + routed / 4)));
  CHECK(kept.optimizer_bytes == ep4.optimizer_bytes);
}

TEST_CASE("hybrid sharding holds its group's shard: twice ZeRO-3's states with half the group") {
  // Llama 3 8B over DP 8 sharded in groups of 4 (2 replicas): weights, gradients and optimizer
  // states per GPU twice those over all 8; FSDP2's two unsharded layers unchanged.
  const auto& llama = shipped_model("llama3-8b");
  const auto full = estimate_memory(llama, job(64, 4096),
                                    plan(1, 1, 8, 1, "zero_stage: 3 fsdp2: true"), 1e15, {});
  const auto hybrid = estimate_memory(
      llama, job(64, 4096), plan(1, 1, 8, 1, "zero_stage: 3 fsdp2: true data_parallel_shard: 4"),
      1e15, {});
  const s::Transformer& t = llama.transformer();
  const double layer = static_cast<double>(transformer_parameters(t).layers) / t.num_layers();
  CHECK(hybrid.weights_bytes - 2 * 2 * layer == Approx(2 * (full.weights_bytes - 2 * 2 * layer)));
  CHECK(hybrid.gradients_bytes == Approx(2 * full.gradients_bytes));
  CHECK(hybrid.optimizer_bytes == Approx(2 * full.optimizer_bytes));
}

TEST_CASE("Hybrid-FSDP: the group's shards, the experts whole, the optimizer over all ranks") {
  // Mixtral 8x7B on 8 GPUs, EP 4, groups of 4 ranks (each one replica of every expert), 2 groups:
  // dense weights and gradients over the group of 4, the experts (2 of 8 a layer) whole; Adam's
  // states over all 8 ranks, the experts' over their expert data-parallel group of 2; FSDP2's two
  // gathered layers without their experts (nothing of them gathered).
  const s::Model& mixtral = shipped_model("mixtral-8x7b");
  const TransformerParameters params = transformer_parameters(mixtral.transformer());
  const int layers = mixtral.transformer().num_layers();
  const double routed = static_cast<double>(layers) * params.routed_experts_per_layer;
  const double dense = static_cast<double>(params.total()) - routed;
  const double in_layers = static_cast<double>(params.layers) - routed;
  const std::string hybrid =
      "expert_parallel: 4 zero_stage: 3 fsdp2: true data_parallel_shard: 4 "
      "shard_optimizer_across_replicas: true";
  const MemoryEstimate e =
      estimate_memory(mixtral, job(64, 4096), plan(1, 1, 8, 1, hybrid), 1e15, {});
  CHECK(e.weights_bytes == Approx(2 * (dense / 4 + routed / 4) + 2 * 2 * in_layers / layers));
  CHECK(e.gradients_bytes == Approx(4 * (dense / 4 + routed / 4)));
  CHECK(e.optimizer_bytes == Approx(12 * (dense / 8 + routed / 4 / 2)));
}

TEST_CASE("offloading the fused grouped MLP's FC1 output frees all expert layers' but one") {
  // Nemotron 3 Nano (52 layers, 23 of them experts, squared ReLU: one activation input of
  // expert_ffn_hidden_size a routed copy, 6 copies a token) at 8192 tokens, one micro-batch in
  // flight: 2 bytes x 8192 x 1856 x 6 a layer, in host memory for 22 of the 23.
  const s::Model& nano = shipped_model("nemotron3-nano-30b-a3b");
  const std::string base =
      "expert_parallel: 8 zero_stage: 3 fsdp2: true fused_expert_mlp: true "
      "recompute_modules: [RECOMPUTE_MOE_ACT]";
  const MemoryEstimate kept = estimate_memory(nano, job(8, 8192), plan(1, 1, 8, 1, base), 1e15, {});
  const MemoryEstimate offloaded = estimate_memory(
      nano, job(8, 8192),
      plan(1, 1, 8, 1, base + " activation_offload_modules: [OFFLOAD_FUSED_EXPERT_MLP]"), 1e15, {});
  const double fc1 = 2.0 * 8192 * 1856 * 6;
  CHECK(offloaded.offloaded_module_bytes == Approx(fc1));
  CHECK(offloaded.chunk_expert_layers == 23);
  CHECK(offloaded.offloaded_activations_bytes == Approx(23 * fc1));
  CHECK(kept.activations_bytes - offloaded.activations_bytes == Approx(22 * fc1));
  // A rerun expert layer keeps its input only: nothing to offload.
  LayerActivationSpec spec;
  spec.sequence_length = 8192;
  spec.micro_batch_size = 1;
  CHECK(expert_activation_input_bytes(nano.transformer(), spec) == Approx(fc1));
  spec.recompute_experts = true;
  CHECK(expert_activation_input_bytes(nano.transformer(), spec) == 0);
}

TEST_CASE("recomputing N layers of each chunk keeps only those layers' inputs") {
  const auto& gpt = shipped_model("gpt-18b");  // 40 layers, 10 per stage
  const auto none = estimate_stage_memory(gpt, job(512, 2048), plan(8, 4, 1, 1), 0, 1e15, {});
  const auto full = estimate_stage_memory(
      gpt, job(512, 2048), plan(8, 4, 1, 1, "recompute: RECOMPUTE_FULL"), 0, 1e15, {});
  const auto four = estimate_stage_memory(
      gpt, job(512, 2048), plan(8, 4, 1, 1, "recompute: RECOMPUTE_FULL recompute_num_layers: 4"),
      0, 1e15, {});
  // 4 micro-batches in flight x (4 recomputed layers + 6 kept).
  CHECK(four.activations_bytes ==
        Approx(0.4 * full.activations_bytes + 0.6 * none.activations_bytes));
}

TEST_CASE("1F1B holds p micro-batches on the first stage, one on the last") {
  const auto& gpt = shipped_model("gpt-18b");  // 40 layers
  const auto first = estimate_stage_memory(gpt, job(512, 2048), plan(8, 4, 1, 1), 0, 1e15, {});
  const auto last = estimate_stage_memory(gpt, job(512, 2048), plan(8, 4, 1, 1), 3, 1e15, {});
  CHECK(first.in_flight_micro_batches == 4);
  CHECK(last.in_flight_micro_batches == 1);
  CHECK(first.layers == 10);
  CHECK(first.activations_bytes == Approx(4 * last.activations_bytes));
  // Korthikanti: the first stage stores p x L/p = L layers' worth.
  const double per_layer =
      layer_activation_bytes(gpt.transformer(), {2048, 1, 8, false, s::RECOMPUTE_NONE, true});
  CHECK(first.activations_bytes == Approx(40 * per_layer));
}

TEST_CASE("interleaving multiplies the first stage's activations by 1 + (p-1)/(p v)") {
  const auto& gpt = shipped_model("gpt-18b");
  const double p = 4, v = 2;
  const auto e = estimate_stage_memory(
      gpt, job(512, 2048), plan(8, 4, 1, 1, "schedule: INTERLEAVED_ONE_F_ONE_B virtual_stages: 2"),
      0, 1e15, {});
  const double per_layer =
      layer_activation_bytes(gpt.transformer(), {2048, 1, 8, false, s::RECOMPUTE_NONE, true});
  CHECK(e.activations_bytes == Approx(40 * per_layer * (1 + (p - 1) / (p * v))));
}

TEST_CASE("uneven splits put the extra layers on the first stages") {
  const auto& gpt = shipped_model("gpt-3.6b");  // 30 layers over 4 stages: 8, 8, 7, 7
  int layers[4];
  for (int stage = 0; stage < 4; ++stage) {
    layers[stage] =
        estimate_stage_memory(gpt, job(512, 2048), plan(1, 4, 1, 1), stage, 1e15, {}).layers;
  }
  CHECK(std::vector<int>(layers, layers + 4) == std::vector<int>{8, 8, 7, 7});
}

TEST_CASE("GPT-3 175B with TP 1 and PP 1 on 8 A100 80GB is OOM by terabytes") {
  const double capacity = 80 * kBytesPerGibibyte;
  const auto e =
      estimate_memory(shipped_model("gpt3-175b"), job(1536, 2048), plan(1, 1, 8, 1), capacity, {});
  CHECK_FALSE(e.fits());
  // 174.6 B parameters x 18 bytes alone is 2927 GiB.
  CHECK(e.model_state_bytes() / kBytesPerGibibyte ==
        Approx(174604259328.0 * 18 / kBytesPerGibibyte));
  CHECK(e.missing_bytes() == Approx(e.total_bytes() - capacity));
  CHECK(e.missing_bytes() / kBytesPerGibibyte > 2800);
}

TEST_CASE("runtime memory adds the context, one buffer set per communicator and a fraction of the "
          "per-step tensors") {
  const auto runtime = testing::parse_message<s::Runtime>(
      "name: \"r\" cuda_context_gib: 0.5 communicator_gib: 0.25 allocator_overhead_fraction: 0.1");
  const RuntimeMemory r = runtime_memory(runtime, plan(8, 1, 4, 1));  // TP and DP groups
  CHECK(r.fixed_bytes == Approx((0.5 + 2 * 0.25) * kBytesPerGibibyte));
  CHECK(r.fragmentation_fraction == 0.1);
  const auto e =
      estimate_memory(shipped_model("llama2-7b"), job(64, 4096), plan(8, 1, 4, 1), 1e15, r);
  // The model states (allocated once) add nothing to the allocator's reserve.
  CHECK(e.model_state_bytes() > 0);
  CHECK(e.runtime_bytes == Approx(r.fixed_bytes + 0.1 * (e.activations_bytes + e.logits_bytes)));
}

TEST_CASE("FSDP2's gathered weights and deferred unsharded gradients count in the reserve") {
  // Allocated and freed every step like the activations: the reserve's fraction applies to them,
  // not to the shards kept across steps.
  const auto runtime = testing::parse_message<s::Runtime>(
      "name: \"r\" cuda_context_gib: 0 communicator_gib: 0 allocator_overhead_fraction: 0.1");
  const auto& llama = shipped_model("llama3-8b");
  const s::Parallelism zero3 = plan(1, 1, 8, 1, "zero_stage: 3");
  const s::Parallelism fsdp2 = plan(1, 1, 8, 1,
                                    "zero_stage: 3 fsdp2: true fsdp2_keep_forward_gather: true "
                                    "fsdp2_defer_gradient_sync: true");
  const auto sharded =
      estimate_memory(llama, job(64, 4096), zero3, 1e15, runtime_memory(runtime, zero3));
  const auto gathered =
      estimate_memory(llama, job(64, 4096), fsdp2, 1e15, runtime_memory(runtime, fsdp2));
  const double extra = gathered.model_state_bytes() - sharded.model_state_bytes();
  CHECK(sharded.per_step_state_bytes == 0);
  CHECK(gathered.per_step_state_bytes == Approx(extra));
  CHECK(gathered.runtime_bytes - sharded.runtime_bytes == Approx(0.1 * extra));
}

}  // namespace
}  // namespace clustersim
