// Bytes of activations a transformer layer keeps for its backward pass, per micro-batch and per
// GPU, under tensor parallelism, sequence parallelism and activation recomputation.
#pragma once

#include "sim/io/schema/job.pb.h"
#include "sim/io/schema/model.pb.h"
#include "sim/io/schema/parallelism.pb.h"
#include "sim/workload/mamba_layer.h"

namespace clustersim {

// Bytes per element of each linear layer's input kept for its weight gradient: 2, narrower under
// FP8 and FP4 (Transformer Engine keeps its narrow copy; fp8_casts.h gemm_input_bytes), none for a
// frozen weight. A Mamba-2 mixer's in_proj input counts as qkv, its out_proj input as projection;
// a latent attention's latents as qkv; routed experts' inputs as mlp_up and mlp_down.
struct SavedGemmInputs {
  double qkv = 2;         // the attention's QKV projection input
  double projection = 2;  // the attention's output-projection input
  double mlp_up = 2;      // the MLP's up (and gate) projection input
  double mlp_down = 2;    // the MLP's down projection input
};

// What `job` keeps: every input at gemm_input_bytes(job); under LoRA (lora.h) none for a frozen
// base weight (Transformer Engine's linear modules save their input only for a weight that
// requires a gradient: transformer_engine/pytorch/module/linear.py, `if weight.requires_grad`
// around saved_inputmat), and a targeted layer's input in 16 bits for its adapter's first GEMM
// (Megatron-Bridge's adapters are Megatron-Core linear layers, not FP8 ones).
SavedGemmInputs saved_gemm_inputs(const schema::TrainingJob& job);

struct LayerActivationSpec {
  int sequence_length = 0;
  int micro_batch_size = 0;
  int tensor_parallel = 1;
  bool sequence_parallel = false;
  schema::Recompute recompute = schema::RECOMPUTE_NONE;
  bool flash_attention = false;  // fused attention: no s x s tensors are stored
  int context_parallel = 1;      // each rank stores its 1/context_parallel of the tokens
  // Bytes per element of the GEMM inputs kept for the weight gradient (saved_gemm_inputs).
  SavedGemmInputs gemm_inputs = {};
  // Bytes per element of the MLP activation function's saved input: 2, or 1 in FP8
  // (job.fp8_activation_input_store).
  double activation_input_bytes = 2;
  // A mixture-of-experts layer (else a dense one: ffn_hidden_size): its routed experts store,
  // per token copy, the expert MLP's tensors at expert_ffn_hidden_size and the permuted input
  // (gathered over expert_tensor_parallel), and shared experts their dense MLP's.
  bool experts = false;
  int expert_tensor_parallel = 1;
  // Routed copies the GPU receives over a balanced router's (ExpertLoad::busiest_rank).
  double expert_rows = 1;
  // Latent attention's Q, K and V rerun from the latents, not stored
  // (parallelism.recompute_latent_up_projection).
  bool recompute_latent_up = false;
  // Selective recomputation of an expert layer (recompute_modules RECOMPUTE_MOE: it keeps its
  // input alone) or of its routed experts' activation (RECOMPUTE_MOE_ACT: the down projection's
  // input not kept).
  bool recompute_experts = false;
  bool recompute_expert_activation = false;
  // A hybrid model's layer (its one block; `experts` then says nothing): else attention and MLP.
  bool hybrid = false;
  HybridBlock block = HybridBlock::kAttention;
};

// Bytes one layer stores for one micro-batch on one GPU (16-bit activations, 1-byte dropout
// masks). Derived tensor by tensor (activation_memory.cpp); for a GPT layer (multi-head
// attention, 4h GELU MLP, LayerNorm, dropout) it equals Korthikanti et al. 2022:
//   no parallelism   s b h (34 + 5 a s / h)
//   tensor parallel  s b h (10 + 24/t + 5 a s / (h t));  with sequence parallelism: / t overall
//   selective        the 5 a s / h term is recomputed, not stored;  full: 2 s b h (/t with SP)
// Under context parallelism every token count is 1 / context_parallel (fused attention only).
// Requires: a transformer that passed the catalog checks.
double layer_activation_bytes(const schema::Transformer& t, const LayerActivationSpec& spec);

// Of them, an expert layer's routed experts' activation input (the up projection's output, the
// fused grouped MLP's FC1 output: what Megatron-Core's fine-grained offload of "fused_group_mlp"
// moves to host memory) for one micro-batch on one GPU; 0 where the layer does not keep it (full
// recomputation, the expert layer recomputed) or has no experts.
double expert_activation_input_bytes(const schema::Transformer& t, const LayerActivationSpec& spec);

}  // namespace clustersim
