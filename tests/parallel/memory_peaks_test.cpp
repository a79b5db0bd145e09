// The memory model against measured peaks: Megatron-LM's functional tests record
// torch.cuda.max_memory_allocated() ("mem-max-allocated-bytes", the tensors alone: no CUDA
// context, NCCL buffers or allocator reserve) of the last rank (the last pipeline stage) on one
// DGX H100 (8 GPUs), for a 7B GPT at sequence 8192:
//   tests/functional_tests/test_cases/gpt/gpt3_7b_tp4_pp1_memory_speed and
//   gpt3_7b_tp1_pp4_memory_speed (model_config.yaml and golden_values_dev_dgx_h100.json),
//   NVIDIA/Megatron-LM @ d98e8a64dd, steps 2-25: 57,143,791,616 and 60,720,852,992 bytes;
//   tests/test_utils/recipes/h100/gpt.yaml runs both on 1 node x 8 GPUs (data parallel 2).
// The model: 32 layers, hidden 4096, 32 heads in 8 query groups, Megatron's default GELU MLP of
// 4 x hidden with biases, LayerNorm, learned positions, dropout 0.1, untied output layer,
// vocabulary 131073 padded to a multiple of 128 x TP (Megatron's --make-vocab-size-divisible-by);
// BF16 with fp32 main gradients, the distributed optimizer, Transformer Engine's fused attention.
#include <catch2/catch.hpp>

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

TEST_CASE("Megatron-LM 7B at sequence 8192, TP 4: the measured peak within 5%") {
  const auto p = testing::parse_message<s::Parallelism>(
      "tensor_parallel: 4 pipeline_parallel: 1 data_parallel: 2 micro_batch_size: 2 "
      "schedule: ONE_F_ONE_B virtual_stages: 1 distributed_optimizer: true "
      "recompute: RECOMPUTE_NONE");
  const MemoryEstimate e = estimate_memory(gpt7b(131584), job(), p, 1e15, {});
  CHECK(tensors_bytes(e) == Approx(57143791616.0).epsilon(0.05));
}

TEST_CASE("Megatron-LM 7B at sequence 8192, PP 4 x 8 chunks: the last stage's peak within 5%") {
  // --num-layers-per-virtual-pipeline-stage 1: 8 chunks of one layer per stage; 4 micro-batches
  // per replica; the last stage holds 2 (p - r - 1) + (v - 1) p + 1 = 29 chunks' activations.
  const auto p = testing::parse_message<s::Parallelism>(
      "tensor_parallel: 1 pipeline_parallel: 4 data_parallel: 2 micro_batch_size: 1 "
      "schedule: INTERLEAVED_ONE_F_ONE_B virtual_stages: 8 distributed_optimizer: true "
      "recompute: RECOMPUTE_NONE");
  const MemoryEstimate last = estimate_stage_memory(gpt7b(131200), job(), p, 3, 1e15, {});
  CHECK(last.in_flight_micro_batches == 4);
  CHECK(tensors_bytes(last) == Approx(60720852992.0).epsilon(0.05));
}

}  // namespace
}  // namespace clustersim
