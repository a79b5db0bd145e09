// The Newton-Schulz work of Megatron-Core's layer-wise distributed Muon (job.proto MUON;
// megatron/core/optimizer/layer_wise_optimizer.py LayerWiseDistributedOptimizer and
// emerging_optimizers.py). Every rank holds the whole model and its gradients (Megatron DDP
// all-reduces them), updates only the weights assigned to it (the data-parallel ranks split the
// weights between them, whole weights each), then all-gathers the updated weights. Each 2-D weight
// (but the embedding and the output layer, is_embedding_or_output_parameter) takes Muon: its
// momentum, then kNewtonSchulzSteps iterations on the momentum's m x n block on the rank (m <= n;
// tensor-parallel blocks apart, muon_tp_mode "blockwise"): A = X X^T (2 m^2 n FLOPs),
// B = b A + c A^2 (2 m^3), X = a X + B X (2 m^2 n), timed as 16-bit GEMMs
// (muon_fp32_matmul_prec "medium"); the fused QKV weight as its query, key and value blocks
// (muon_split_qkv); every routed expert's weights apart. The rest (norms, biases, embedding,
// output layer) takes Adam, its states counted as Muon's (they are a fraction of a percent).
// The layer-wise split is taken as balanced: each rank runs 1 / ranks of the orthogonalizations
// of the weights replicated over its ranks (dense ones over data x context parallelism, routed
// experts' over their expert data-parallel group).
#pragma once

#include <vector>

#include "sim/hw/compute_model.h"
#include "sim/io/schema/model.pb.h"
#include "sim/workload/layer_ops.h"

namespace clustersim {

// Megatron-Bridge's distributed_muon_with_cosine_annealing muon_num_ns_steps (v0.3.0-v0.5.0
// src/megatron/bridge/recipes/utils/optimizer_utils.py), Megatron-Core's default too.
constexpr int kNewtonSchulzSteps = 5;

// FLOPs of kNewtonSchulzSteps iterations on one m x n matrix: 5 (4 m^2 n + 2 m^3), m the smaller.
double newton_schulz_flops(int64_t m, int64_t n);

struct NewtonSchulzTime {
  Picoseconds dense;   // weights replicated over data x context parallelism
  Picoseconds expert;  // routed experts' weights, replicated over the expert data-parallel group
};

// The orthogonalization of every weight of the matmuls among `ops` (one layer's forward kernels
// on one rank, layer_ops.h, of `t` at `tensor_parallel`; the output layer's logits and unfused
// attention's weightless scores and values excluded), on `compute` in 16 bits, before the split
// over the ranks.
NewtonSchulzTime newton_schulz_time(const std::vector<LayerOp>& ops, const schema::Transformer& t,
                                    int tensor_parallel, const ComputeModel& compute);

}  // namespace clustersim
