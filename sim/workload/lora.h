// LoRA fine-tuning (job.proto Lora) on a dense transformer: the kernels of a layer whose base
// weights are frozen and whose targeted linear layers carry rank-r adapters, the adapters'
// parameters and the step's FLOPs.
//
// A frozen linear layer's backward is its data-gradient GEMM only: Megatron-Core gives gradient
// buffers only to parameters that require a gradient, and Transformer Engine's linear modules run
// the weight-gradient GEMM only for a weight that requires one (transformer_engine/pytorch/module/
// linear.py, layernorm_linear.py: wgrad under ctx.requires_wgrad). An adapter of a base weight of
// k x n on the rank runs x . A (k x r) then . B (r x n), in 16 bits (Megatron-Bridge v0.5.0
// src/megatron/bridge/peft/lora_layers.py and utils.py ParallelLinearAdapter: Megatron-Core
// linear layers, not Transformer Engine's FP8 ones), forward and backward (both GEMMs trainable),
// and its output is added into the base layer's (read both, write the sum; in the backward the
// sum's gradient reaches both as it is, and the two gradients of their shared input are summed:
// autograd's accumulation). Each adapter is split over tensor parallelism with its base weight (A
// on the base's input rows, B on its output columns); the all-gather or all-reduce of the r-wide
// activation between them (r x tokens, 16-bit) is left out, as is alpha (a scale). With a
// dropout probability (Lora.dropout; Bridge's default 0), a dropout kernel on the adapter's
// output before the add (AutoModel's LinearLoRA, dropout_position "post"), or on its input
// before x . A (Lora.dropout_position LORA_DROPOUT_PRE: NeMo's ParallelLinearAdapter, which
// drops a column-parallel adapter's input while it is still the rank's sequence-parallel shard);
// its 1-byte mask is not counted in the activation memory.
#pragma once

#include <vector>

#include "sim/io/schema/job.pb.h"
#include "sim/io/schema/model.pb.h"
#include "sim/workload/layer_ops.h"
#include "sim/workload/transformer_flops.h"

namespace clustersim {

// Whether `lora` adapts `target`: one of its target_modules, or any when it names none.
bool lora_targets(const schema::Lora& lora, schema::LoraTarget target);

// `ops` (one layer's forward kernels, layer_ops.h, or the output layer's) with every matmul
// frozen and an adapter beside each targeted one: after a column-parallel base (QKV, FC1), before
// a row-parallel one (proj, FC2), so that each base GEMM stays beside the sequence-parallel
// collective it overlaps with.
// `sequence_shards`: the tensor-parallel degree under sequence parallelism, else 1 (the shards
// of a column-parallel layer's input before its gather).
// Requires: a rank >= 1; `ops` of a dense layer (the matmuls "qkv", "attention out", "mlp up",
// "mlp down", or with separate projections "q", "k", "v", "attention out", "mlp gate", "mlp up",
// "mlp down": an adapter on each); sequence_shards >= 1.
std::vector<LayerOp> with_lora(const schema::Lora& lora, std::vector<LayerOp> ops,
                               int sequence_shards);

// Trainable parameters of one layer's adapters, whole (before any split): r (k + n) per adapted
// weight of k x n (QKV h x (a + 2 kv) d, proj a d x h, FC1 h x f (2 f gated), FC2 f x h); with
// `separate_projections` (job.separate_projections) an A of k x r for each of the q, k, v and the
// gate, up layers: r (3 h + (a + 2 kv) d) for QKV, r (2 h + 2 f) for a gated FC1.
// Requires: a dense transformer that passed the catalog checks; a rank >= 1.
double lora_parameters_per_layer(const schema::Transformer& t, const schema::Lora& lora,
                                 bool separate_projections);

// NeMo AutoModel's PEFT FLOP scale (nemo_automodel/recipes/llm/benchmark.py @ b3c51c32): its
// benchmark counts a LoRA step as the full-training model FLOPs times (2 + A / F) / 3, A the
// adapters' parameters and F the frozen base's (forward and data gradient of every weight, weight
// gradients of the adapters only), attention and logits included in the scaling; A as the job's
// model has them (job.separate_projections: the benchmark counts the trainable parameters).
// Requires: a dense transformer that passed the catalog checks; a job with a lora of rank >= 1.
double peft_flops_scale(const schema::Transformer& t, const schema::TrainingJob& job);

// `flops` of `t` with its base frozen and the adapters of `job`'s lora trained
// (TransformerFlops's frozen_base and adapter_forward_per_token).
void add_lora_flops(const schema::Transformer& t, const schema::TrainingJob& job,
                    TransformerFlops* flops);

}  // namespace clustersim
