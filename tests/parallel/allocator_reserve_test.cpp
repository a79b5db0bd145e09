// The runtime term of the memory model (topologies/runtime.textproto) against a hand computation
// and against Megatron-LM's report_memory lines ("memory (MB) | allocated | max allocated |
// reserved | max reserved", MiB of torch.cuda's counters), which separate the tensors between
// steps (allocated: the model states), at the peak (max allocated) and what the caching allocator
// holds (reserved). Reserved minus max allocated is the allocator's reserve: free blocks in its
// cached segments, left by the tensors allocated and freed every step.
//
// open-sci-ref 1.7B (LAION-AI open-sci-ref-0.01, its Megatron-LM reference runs on Leonardo's
// A100 64GB, 2025-03-31; the command line in the log): 24 layers, hidden 2048, SwiGLU of 8192, 32
// heads, qk-layernorm, RMSNorm, RoPE, Megatron's defaults for the rest (biases, dropout 0.1, tied
// embeddings), GPT-NeoX-20B's 50,277 tokens padded to 50,304; sequence 4096, micro-batch 4,
// global batch 1008 on 252 GPUs (TP 1, PP 1, DP 252), BF16, the distributed optimizer, flash
// attention, --recompute-activations (selective). Rank 0 after 50 iterations: allocated 9909.08,
// max allocated 50277.16, reserved 53386.0 MiB.
#include <catch2/catch.hpp>

#include "sim/parallel/memory_model.h"
#include "sim/util/units.h"
#include "tests/testing/parse_message.h"
#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

namespace s = schema;

constexpr double kMebibyte = 1024.0 * 1024.0;

s::Model open_sci_ref_1_7b() {
  return testing::parse_message<s::Model>(
      "name: \"open-sci-ref-1.7b\" transformer { kind: DECODER num_layers: 24 hidden_size: 2048 "
      "num_attention_heads: 32 ffn_hidden_size: 8192 mlp_activation: SWIGLU "
      "normalization: RMSNORM position_embedding: ROTARY max_sequence_length: 4096 "
      "tied_embeddings: true linear_bias: true dropout: true qk_norm: true vocab_size: 50304 }");
}

s::TrainingJob open_sci_ref_job() {
  return testing::parse_message<s::TrainingJob>(
      "global_batch_size: 1008 sequence_length: 4096 precision: BF16 optimizer: ADAM steps: 1");
}

s::Parallelism open_sci_ref_plan() {
  return testing::parse_message<s::Parallelism>(
      "tensor_parallel: 1 pipeline_parallel: 1 data_parallel: 252 micro_batch_size: 4 "
      "schedule: ONE_F_ONE_B virtual_stages: 1 distributed_optimizer: true "
      "recompute: RECOMPUTE_SELECTIVE");
}

const s::Runtime& shipped_runtime() {
  return *testing::shipped_catalog().runtimes().find("default")->value;
}

TEST_CASE("the shipped runtime term by hand: context, one buffer set per group, 5% of per-step") {
  // The open-sci-ref plan has one communicator of more than one GPU (data parallel 252).
  const RuntimeMemory r = runtime_memory(shipped_runtime(), open_sci_ref_plan());
  CHECK(r.fixed_bytes == Approx((0.37 + 0.64) * kBytesPerGibibyte));
  const MemoryEstimate e =
      estimate_memory(open_sci_ref_1_7b(), open_sci_ref_job(), open_sci_ref_plan(), 1e15, r);
  // 1.01 GiB plus 5% of the activations and logits (36.15 GiB): 2.82 GiB; nothing of the
  // 9.66 GiB of model states (counted on them too it was 3.30 GiB).
  CHECK(e.model_state_bytes() / kBytesPerGibibyte == Approx(9.656).epsilon(0.001));
  CHECK((e.activations_bytes + e.logits_bytes) / kBytesPerGibibyte ==
        Approx(36.152).epsilon(0.001));
  CHECK(e.runtime_bytes / kBytesPerGibibyte == Approx(1.01 + 0.05 * 36.152).epsilon(0.001));
}

TEST_CASE("open-sci-ref 1.7B on A100 64GB: states, peak and allocator reserve against its log") {
  const RuntimeMemory r = runtime_memory(shipped_runtime(), open_sci_ref_plan());
  const MemoryEstimate e =
      estimate_memory(open_sci_ref_1_7b(), open_sci_ref_job(), open_sci_ref_plan(), 1e15, r);
  // Between steps: weights 2 + fp32 gradients 4 + optimizer 12 / 252 bytes of 1.7138 B
  // parameters ("Number of parameters in most loaded shard in billions: 1.7138"), within 1%.
  CHECK(e.model_state_bytes() / kMebibyte == Approx(9909.08).epsilon(0.01));
  // The peak's tensors 6.7% under (46,908 MiB): outside results/memory_peaks.md's 5%, not found
  // here (the loss's fp32 temporaries over a 50,304-token vocabulary are the suspect).
  const double per_step = e.activations_bytes + e.logits_bytes;
  CHECK((e.model_state_bytes() + per_step) / kMebibyte == Approx(50277.16).epsilon(0.08));
  // Measured reserve 53386.0 - 50277.16 = 3108.8 MiB, 7.7% of the measured per-step tensors
  // (50277.16 - 9909.08 MiB). The catalog's 5% of those is 2018 MiB, 35% under; of every tensor
  // it would be 2514 MiB.
  const double fraction = r.fragmentation_fraction;
  const double measured_reserve = 53386.0 - 50277.16;
  CHECK(fraction * (50277.16 - 9909.08) == Approx(measured_reserve).epsilon(0.40));
  // The model's own reserve (5% of its per-step tensors), 1851 MiB: 40% under.
  CHECK((e.runtime_bytes - r.fixed_bytes) / kMebibyte == Approx(1851.0).epsilon(0.01));
}

TEST_CASE("Qwen3-30B-A3B at PP 4 EP 2 on GH200: the measured reserve, a fraction of per-step") {
  // swiss-ai's Megatron-LM fork (merge-260109), Megatron-Bridge's Qwen3 recipe, 2 nodes: PP 4,
  // EP 2, DP 2, TP 1, micro-batch 4, sequence 4096, after 2 iterations (MiB):
  //   rank 6: allocated 53199.10, max allocated 84019.37, reserved 84732.0
  //   rank 2: allocated 50314.08, max allocated 81835.08, reserved 82324.0
  //   rank 4: allocated 50317.25, max allocated 71306.04, reserved 71744.0
  // The model's reserve is the catalog's fraction of the per-step tensors (max allocated minus
  // allocated); the measured one is 1.6-2.3% of them, under it, and far under 5% of every tensor
  // (4201, 4092 and 3565 MiB).
  struct Rank {
    double allocated, max_allocated, reserved;
  };
  const double fraction =
      runtime_memory(shipped_runtime(), open_sci_ref_plan()).fragmentation_fraction;
  for (const Rank& rank : {Rank{53199.10, 84019.37, 84732.0}, Rank{50314.08, 81835.08, 82324.0},
                           Rank{50317.25, 71306.04, 71744.0}}) {
    const double measured = rank.reserved - rank.max_allocated;
    const double per_step = rank.max_allocated - rank.allocated;
    CHECK(measured < fraction * per_step);
    CHECK(measured > 0.3 * fraction * per_step);
    CHECK(measured < 0.25 * fraction * rank.max_allocated);
  }
}

}  // namespace
}  // namespace clustersim
