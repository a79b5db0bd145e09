// What the optimizer step and the gradient buffers of a training step move: bytes per parameter
// of the optimizer's passes, of accumulating micro-batch gradients, of the passes over the
// gradient buffer, and Megatron-Core's gradient buckets.
#pragma once

#include "sim/io/schema/job.pb.h"
#include "sim/io/schema/parallelism.pb.h"

namespace clustersim {

// Bytes the optimizer step reads and writes per local parameter, pass by pass as Megatron-LM's
// mixed-precision optimizer runs them (megatron/optimizer/optimizer.py, Float16OptimizerWith
// Float16Params.step):
//   FP16 only: 16-bit gradients copied to fp32 (read 2, write 4) and unscaled with the inf check
//              (read 4, write 4); BF16 accumulates and reduces in fp32 without loss scaling;
//   gradient norm (read 4) and clipping (read 4, write 4);
//   the update on fp32 state: Adam reads gradient, weight and two moments and writes weight and
//              moments (28), SGD with momentum 20, plain SGD 12; Muon's momentum update and
//              its scaled orthogonalized step as SGD with momentum's (its Newton-Schulz GEMMs
//              apart, muon_step.h);
//   16/8-bit precisions: fp32 master weights copied to the model's weights (read 4, write 2).
double optimizer_bytes_per_parameter(schema::Optimizer optimizer, schema::Precision precision);

// Bytes per parameter that adding one micro-batch's weight gradients into the step's gradient
// buffer moves, in its own kernel after the backward. FP16 (Megatron-LM 2021, local DDP): the
// backward hook runs main_grad.add_(grad) on 16-bit buffers: read 2 + 2, write 2. Otherwise
// (Megatron-Core, gradient_accumulation_fusion on by default): the weight-gradient GEMM adds into
// the buffer in its epilogue, under its compute: no pass of its own. Under DeepSpeed's pipeline
// engine (`deepspeed`): BF16's optimizer adds each backward's bf16 gradients into fp32 ones
// (bf16_optimizer.py update_hp_grads, hp_grad.add_(lp.grad.to(fp32))): read 2 + 4, write 4; FP16
// and FP32 gradients accumulate in place in param.grad (PyTorch's AccumulateGrad): read 2 + 2,
// write 2, and 4 + 4, write 4.
double gradient_accumulation_bytes(schema::Precision precision, bool deepspeed);

// Bytes per local trained parameter of the passes Megatron's data-parallel wrapper runs over the
// whole gradient buffer every step (parallelism.proto zero_gradient_buffer, check_for_nan_in_grad,
// gradient_scaling), each at the buffer's element size g (gradient_reduce_bytes): zeroing
// (write g; Megatron-Core reset(): grad_data.zero_() of the whole buffer, the distributed
// optimizer's too, training.py zero_grad_buffer), the NaN / Inf check (read g: each bucket's
// grad_data.norm(p=2) before its reduce-scatter or all-reduce) and the scaling by the bucket's
// gradient_scaling_factor (read g, write g: grad_data *= factor; param_and_grad_buffer.py
// start_grad_sync, Megatron-LM core_v0.8.0 to 2026), by the factor GradientScaling gives; a
// factor of 1 runs no pass. Dense and expert buckets apart; both 0 under a zero_stage (DeepSpeed's
// and FSDP's own buffers) and deepspeed_pipeline_engine.
struct GradientBufferPassBytes {
  double dense = 0;
  double expert = 0;
};
GradientBufferPassBytes gradient_buffer_pass_bytes(schema::Precision precision,
                                                   const schema::Parallelism& p,
                                                   int expert_data_parallel);

// Parameters per gradient bucket of Megatron-Core's DDP: max(40M, 1M x the data x context-
// parallel ranks) ("make buckets larger to ensure that chunks used in NCCL ring-reduce
// implementations are large enough to remain bandwidth-bound", megatron/core/distributed/
// distributed_data_parallel.py); a model chunk's buckets are reduced as they fill (the step
// model keeps at most one per layer).
double megatron_bucket_parameters(int data_parallel_ranks);

}  // namespace clustersim
