// The memory model against measured peaks: Megatron-LM's functional tests record
// torch.cuda.max_memory_allocated() ("mem-max-allocated-bytes", the tensors alone: no CUDA
// context, NCCL buffers or allocator reserve) of the last rank (the last pipeline stage), the
// largest value over the recorded steps after the first (whose peak precedes the optimizer's
// lazily created states), from golden_values_dev_<platform>.json beside each test case's
// model_config.yaml in tests/functional_tests/test_cases/, NVIDIA/Megatron-LM @ d98e8a64dd;
// tests/test_utils/recipes/<platform>/<model>.yaml gives the GPUs.
//
// gpt/gpt3_7b_tp4_pp1_memory_speed and gpt/gpt3_7b_tp1_pp4_memory_speed: a 7B GPT at sequence 8192 on
// 8 GPUs (data parallel 2): one DGX H100 (steps 2-25), one DGX A100 (steps 2-6) and two GB200
// trays of 4 (steps 2-25), the same configuration on each: 32 layers, hidden 4096, 32 heads in
// 8 query groups, Megatron's default GELU MLP of 4 x hidden with biases, LayerNorm, learned
// positions, dropout 0.1, untied output layer, vocabulary 131073 padded to a multiple of
// 128 x TP (Megatron's --make-vocab-size-divisible-by); BF16 with fp32 main gradients, the
// distributed optimizer, Transformer Engine's fused attention.
#include <catch2/catch.hpp>

#include <initializer_list>
#include <string>

#include "sim/parallel/memory_model.h"
#include "tests/testing/parse_message.h"

namespace clustersim {
namespace {

namespace s = schema;

s::Model gpt7b(int vocab) {
  return testing::parse_message<s::Model>(
      "name: \"gpt3-7b-functional-test\" transformer { kind: DECODER num_layers: 32 "
      "hidden_size: 4096 num_attention_heads: 32 num_kv_heads: 8 ffn_hidden_size: 16384 "
      "mlp_activation: GELU normalization: LAYERNORM position_embedding: LEARNED "
      "max_sequence_length: 8192 tied_embeddings: false linear_bias: true dropout: true "
      "vocab_size: " +
      std::to_string(vocab) + " }");
}

s::TrainingJob job() {
  return testing::parse_message<s::TrainingJob>(
      "global_batch_size: 8 sequence_length: 8192 precision: BF16 optimizer: ADAM steps: 1");
}

double tensors_bytes(const MemoryEstimate& e) {
  return e.model_state_bytes() + e.activations_bytes + e.logits_bytes;
}

// mem-max-allocated-bytes of each platform's golden values.
struct MeasuredPeak {
  const char* platform;
  double bytes;
};

// The estimate's tensors within 5% of every platform's measured peak.
void check_within_5_percent(const MemoryEstimate& e, std::initializer_list<MeasuredPeak> peaks) {
  for (const MeasuredPeak& m : peaks) {
    INFO(m.platform);
    CHECK(tensors_bytes(e) == Approx(m.bytes).epsilon(0.05));
  }
}

TEST_CASE("Megatron-LM 7B at sequence 8192, TP 4: the measured peaks within 5%") {
  const auto p = testing::parse_message<s::Parallelism>(
      "tensor_parallel: 4 pipeline_parallel: 1 data_parallel: 2 micro_batch_size: 2 "
      "schedule: ONE_F_ONE_B virtual_stages: 1 distributed_optimizer: true "
      "recompute: RECOMPUTE_NONE");
  const MemoryEstimate e = estimate_memory(gpt7b(131584), job(), p, 1e15, {});
  check_within_5_percent(e, {{"dgx_h100", 57143791616.0},
                            {"dgx_a100", 58188115968.0},
                            {"dgx_gb200", 58217476096.0}});
}

TEST_CASE("Megatron-LM 7B at sequence 8192, PP 4 x 8 chunks: the last stage's peaks within 5%") {
  // --num-layers-per-virtual-pipeline-stage 1: 8 chunks of one layer per stage; 4 micro-batches
  // per replica; the last stage holds 2 (p - r - 1) + (v - 1) p + 1 = 29 chunks' activations.
  const auto p = testing::parse_message<s::Parallelism>(
      "tensor_parallel: 1 pipeline_parallel: 4 data_parallel: 2 micro_batch_size: 1 "
      "schedule: INTERLEAVED_ONE_F_ONE_B virtual_stages: 8 distributed_optimizer: true "
      "recompute: RECOMPUTE_NONE");
  const MemoryEstimate last = estimate_stage_memory(gpt7b(131200), job(), p, 3, 1e15, {});
  CHECK(last.in_flight_micro_batches == 4);
  check_within_5_percent(last, {{"dgx_h100", 60720852992.0},
                               {"dgx_a100", 60489064448.0},
                               {"dgx_gb200", 60519342080.0}});
}

TEST_CASE("Megatron-LM 15B release run, TP 8 with sequence parallelism: the peak within 5%") {
  // gpt/gpt3_15b_8t_release (golden_values_dev_dgx_h100.json, model_config.yaml): 32 layers,
  // hidden 6144, 48 heads in 8 query groups, a squared-ReLU MLP of 4 x hidden, LayerNorm
  // (--apply-layernorm-1p), RoPE on half the head, no biases or dropout, untied output layer,
  // Nemotron's 256,000-token vocabulary (already a multiple of 128 x 8); sequence 4096,
  // micro-batch 4, BF16, the distributed optimizer, TE's fused attention, no recomputation.
  // Peak: 28,157,253,632 bytes from step 5 on (to 28,160,194,560). The GPU count is not
  // published; the run's persistent allocation pins it: mem-allocated-bytes, 13,268,858,880
  // between steps, is the weights, fp32 main gradients and the optimizer shard, 11.72 GB plus
  // 23.44 GB / DP, which is data parallel 16 (128 GPUs; 12 would be 13.67 GB, 24 12.70 GB).
  const auto model = testing::parse_message<s::Model>(
      "name: \"gpt3-15b-release-test\" transformer { kind: DECODER num_layers: 32 "
      "hidden_size: 6144 num_attention_heads: 48 num_kv_heads: 8 ffn_hidden_size: 24576 "
      "mlp_activation: SQUARED_RELU normalization: LAYERNORM position_embedding: ROTARY "
      "max_sequence_length: 4096 tied_embeddings: false linear_bias: false dropout: false "
      "vocab_size: 256000 }");
  const auto release_job = testing::parse_message<s::TrainingJob>(
      "global_batch_size: 384 sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 1");
  const auto p = testing::parse_message<s::Parallelism>(
      "tensor_parallel: 8 pipeline_parallel: 1 data_parallel: 16 micro_batch_size: 4 "
      "sequence_parallel: true schedule: ONE_F_ONE_B virtual_stages: 1 "
      "distributed_optimizer: true recompute: RECOMPUTE_NONE");
  const MemoryEstimate e = estimate_memory(model, release_job, p, 1e15, {});
  CHECK(e.model_state_bytes() == Approx(13268858880.0).epsilon(0.01));
  check_within_5_percent(e, {{"dgx_h100", 28157253632.0}});
}

TEST_CASE("Megatron-LM MoE with latent attention, TP 2 PP 2 x 4 chunks EP 4: the peak within 5%") {
  // moe/gpt3_mcore_te_tp2_pp2_ep4_etp1_memory_speed on one DGX H100 (recipes/h100/moe.yaml: 8
  // GPUs, data parallel 2): 16 layers of hidden 1024, 32 heads of DeepSeek's latent attention
  // (q_lora_rank 1536, kv_lora_rank 512, head dims 128 + 64 rotary, values 128) with
  // --qk-layernorm, the first layer a dense SwiGLU MLP of 4096, the others 32 routed experts of
  // 1024 (top 4) and one shared expert of 1024; one multi-token-prediction module; RMSNorm, RoPE,
  // no biases or dropout, untied output layer; GPT-2's 50257 tokens padded to a multiple of
  // 3232 x TP (51712); sequence 4096, micro-batch 4, global batch 32; sequence parallel,
  // --attention-backend unfused (the s x s scores stored), BF16, the distributed optimizer.
  // Measured on the last rank: 57,920,471,040 and 57,920,647,168 bytes at steps 3-29 of the two
  // recorded runs (golden_values_dev_dgx_h100.json, golden_values_dev_dgxh100_dgxc.json). Later
  // steps reach 60.11 GB in one run and 57.96 GB in the other: the aux-loss-free router's expert
  // bias moving the load off balance, run by run; the model's router is balanced.
  const auto model = testing::parse_message<s::Model>(
      "name: \"moe-latent-attention-functional-test\" transformer { kind: DECODER num_layers: 16 "
      "hidden_size: 1024 num_attention_heads: 32 ffn_hidden_size: 4096 mlp_activation: SWIGLU "
      "normalization: RMSNORM position_embedding: ROTARY max_sequence_length: 4096 "
      "tied_embeddings: false linear_bias: false dropout: false qk_norm: true "
      "multi_token_prediction_layers: 1 vocab_size: 51712 "
      "latent_attention { q_lora_rank: 1536 kv_lora_rank: 512 qk_nope_head_dim: 128 "
      "qk_rope_head_dim: 64 v_head_dim: 128 } "
      "moe { num_experts: 32 experts_per_token: 4 expert_ffn_hidden_size: 1024 "
      "num_shared_experts: 1 first_dense_layers: 1 } }");
  const auto moe_job = testing::parse_message<s::TrainingJob>(
      "global_batch_size: 32 sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 1 "
      "flash_attention: false");
  const auto p = testing::parse_message<s::Parallelism>(
      "tensor_parallel: 2 pipeline_parallel: 2 data_parallel: 2 micro_batch_size: 4 "
      "sequence_parallel: true expert_parallel: 4 expert_tensor_parallel: 1 "
      "schedule: INTERLEAVED_ONE_F_ONE_B virtual_stages: 4 distributed_optimizer: true "
      "recompute: RECOMPUTE_NONE");
  const MemoryEstimate last = estimate_stage_memory(model, moe_job, p, 1, 1e15, {});
  check_within_5_percent(last, {{"dgx_h100", 57920471040.0}});
}

}  // namespace
}  // namespace clustersim
