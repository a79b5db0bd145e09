// Peak memory of one GPU training a transformer under a parallelism plan, as Megatron-Core
// allocates it: model states (weights, the main-gradient buffer in fp32 or 16 bits, optimizer
// states, sharded per ZeRO stage or distributed optimizer over data x context parallel; routed
// experts' split over expert x expert tensor parallel and sharded over their expert data-parallel
// group), the FP8 weight copies Transformer Engine caches, activations of the micro-batches in
// flight under the pipeline schedule (DualPipe's counted on its task order, dualpipe_schedule.h,
// each stage holding two model pieces' parameters; 1 / context_parallel of each sequence; fully
// recomputed layers keep their input only; offloaded layers' tensors in host memory but one
// layer's; a MoE layer's all-to-all send and receive buffers), the output layer's logits and its
// deferred weight gradients' kept tensors, and the runtime's own memory. Evaluated for every
// pipeline stage; the fullest stage is reported.
#pragma once

#include "sim/io/schema/gpu.pb.h"
#include "sim/io/schema/job.pb.h"
#include "sim/io/schema/link.pb.h"
#include "sim/io/schema/model.pb.h"
#include "sim/io/schema/parallelism.pb.h"
#include "sim/io/schema/runtime.pb.h"

namespace clustersim {

// Memory the software stack takes besides tensors (catalog data: topologies/runtime.textproto).
struct RuntimeMemory {
  double fixed_bytes = 0;             // CUDA context, library workspaces, communication buffers
  double fragmentation_fraction = 0;  // allocator reserve on top of the per-step tensors
  // The GPU's FP8 GEMMs take either operand transposed (gpu.proto fp8_gemm_any_layout): Transformer
  // Engine then keeps no transpose of a per-tensor FP8 weight (fp8_casts.h fp8_copies).
  bool fp8_gemm_any_layout = false;

  // The runtime's bytes beside `per_step_tensor_bytes`, the tensors allocated and freed every
  // step (MemoryEstimate::per_step_tensor_bytes): the caching allocator's reserve is a fraction of
  // those alone. Model states kept across steps are allocated once, each buffer rounded up to
  // 2 MiB, and add nothing to it.
  double bytes(double per_step_tensor_bytes) const {
    return fixed_bytes + fragmentation_fraction * per_step_tensor_bytes;
  }
};

// The runtime memory of one GPU of `parallelism`: the CUDA context plus one set of communication
// buffers per tensor-, pipeline- and data-parallel group of more than one GPU.
RuntimeMemory runtime_memory(const schema::Runtime& runtime,
                             const schema::Parallelism& parallelism);

struct MemoryEstimate {
  int stage = 0;                    // the pipeline stage this estimate is for
  int layers = 0;                   // transformer layers on that stage
  int in_flight_micro_batches = 0;  // whose activations are held at the peak
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double weight_cache_bytes = 0;  // FP8 copies of 16-bit weights (and transposes) kept by TE
  double activations_bytes = 0;  // transformer layers
  double layer_activations_bytes = 0;  // one of them (their mean), one micro-batch
  // In host memory (parallelism.activation_offload_layers, activation_offload_modules), not in
  // the total.
  double offloaded_activations_bytes = 0;
  // Fine-grained offload of the fused grouped MLP (activation_offload_modules): one expert layer's
  // FC1 output, one micro-batch, and the expert layers of a model chunk (their mean).
  double offloaded_module_bytes = 0;
  double chunk_expert_layers = 0;
  double logits_bytes = 0;       // output layer (last stage only)
  // The last stage's deferred output-layer weight gradients' inputs, kept until the flush
  // (parallelism.defer_output_weight_gradient; output_weight_gradient_deferral.h).
  double deferred_output_bytes = 0;
  // Of the weights and gradients above, what FSDP2 gathers or accumulates unsharded and frees
  // again every step (its gathered layers, deferred unsharded gradients).
  double per_step_state_bytes = 0;
  double runtime_bytes = 0;      // fixed runtime memory + the allocator reserve
  double capacity_bytes = 0;

  double model_state_bytes() const {
    return weights_bytes + gradients_bytes + optimizer_bytes + weight_cache_bytes;
  }
  double total_bytes() const {
    return model_state_bytes() + activations_bytes + logits_bytes + deferred_output_bytes +
           runtime_bytes;
  }
  // The tensors allocated and freed every step, of which the allocator keeps a reserve.
  double per_step_tensor_bytes() const {
    return activations_bytes + logits_bytes + deferred_output_bytes + per_step_state_bytes;
  }
  bool fits() const { return total_bytes() <= capacity_bytes; }
  double missing_bytes() const { return fits() ? 0 : total_bytes() - capacity_bytes; }
};

// Bytes per parameter of weights, gradients and optimizer states before any sharding: mixed
// precision (16-bit weights) keeps fp32 gradients and an fp32 master copy, so Adam is 2 + 4 + 12.
struct StateBytesPerParameter {
  double weights, gradients, optimizer;
};
StateBytesPerParameter state_bytes_per_parameter(schema::Precision precision,
                                                 schema::Optimizer optimizer);

// Bytes per parameter of the gradient buffers a GPU holds: the main-gradient buffer in fp32 (4)
// unless parallelism.gradient_reduce_in_fp32 is false (16 bits); absent, FP16 reduces 16-bit
// gradients (Megatron-LM) into an fp32 buffer. Under DeepSpeed's pipeline engine in BF16 its BF16
// optimizer's fp32 gradients and the bf16 ones autograd leaves in param.grad until the next
// backward clears them (bf16_optimizer.py: update_hp_grads(clear_lp_grads=False)): 4 + 2.
double gradient_buffer_bytes(const schema::Parallelism& parallelism, schema::Precision precision);
// The data-parallel ranks one shard group of the model states spans: data_parallel_shard under
// ZeRO-3 (hybrid sharding), else all of them.
int data_parallel_shard_ranks(const schema::Parallelism& parallelism);
// The ranks a dense parameter's weights (and, under ZeRO-2/3, gradients) are sharded over: the
// shard group's data x context-parallel ranks (data_parallel_shard_ranks x context_parallel).
double model_state_shards(const schema::Parallelism& parallelism);
// The ranks a dense parameter's optimizer states are sharded over, each stepping its shard: the
// shard group's data x context-parallel ranks (under hybrid sharding every group holds and steps
// the same shards), all data x context-parallel ranks under Hybrid-FSDP
// (shard_optimizer_across_replicas). Where the states are sharded at all (ZeRO >= 1, Muon).
double optimizer_state_shards(const schema::Parallelism& parallelism);
double gradient_reduce_bytes(schema::Precision precision, const schema::Parallelism& parallelism);

// The estimate for the fullest stage. `parallelism` must have every degree set (as sweep
// configurations do); `capacity_bytes` is the GPU memory the instance exposes.
// Requires: a model and a plan that passed the configuration checks (a CNN: data parallel only).
MemoryEstimate estimate_memory(const schema::Model& model, const schema::TrainingJob& job,
                               const schema::Parallelism& parallelism, double capacity_bytes,
                               const RuntimeMemory& runtime);

// The same for one stage (0-based).
MemoryEstimate estimate_stage_memory(const schema::Model& model, const schema::TrainingJob& job,
                                     const schema::Parallelism& parallelism, int stage,
                                     double capacity_bytes, const RuntimeMemory& runtime);

}  // namespace clustersim
