// The FP32 sums PyTorch's context-parallel ring keeps (parallelism.proto TORCH_ALL_GATHER), as
// the bytes each ring step's memory-bound kernels move on one rank. What runs, from
// torch/distributed/tensor/experimental/_attention.py (pytorch/pytorch@0123248a; the merge, the
// load-balanced partial updates and the gradient ring date from pytorch/pytorch#131351, #132442
// and #132820 of August 2024, before the torch of December 2024 the torchtitan rows ran):
//   forward, _SDPAMerger: each step's 16-bit output and logsumexp merged into the running output
//     (out - sigmoid(block_lse - lse) * (out - block_out)), kept in FP32 (convert_to_f32); at a
//     load-balanced step that saw only the later chunk's queries (_partial_update) the merged half
//     and the untouched one are concatenated into a new whole tensor;
//   backward, _templated_ring_attention_backward: the query, key and value gradients summed in
//     FP32 over the steps, each step's 16-bit gradients added to one chunk or the whole and the
//     whole rebuilt (_partial_update's cat, or the add over all of it); the key and value sums go
//     to the next rank (torch.cat of the two), and the ones that come back from the last pass are
//     cast to 16 bits.
// torchtitan compiles each block with the ring traced into it (fullgraph=True), so Inductor fuses
// each update with its cat and the casts at either end into the first and last updates: a step
// reads each sum whole (16-bit at the first merge, the cast of step 0's output), reads its own
// 16-bit result, and writes each sum whole (16-bit at the last forward merge and the last query
// gradient update). The logsumexps (one FP32 a query row) are 1 / head_dim of the output and left
// out.
#pragma once

#include "sim/hw/compute_model.h"

namespace clustersim {

struct TorchRingSums {
  double forward_bytes = 0, backward_bytes = 0;
};

// Step `step` of `steps` of one rank's ring, `kernel` its SDPA call; `local` the elements of the
// rank's whole queries (batch x heads x 2 chunks' tokens x head dimension), the size of each sum.
// Requires: steps >= 2, 0 <= step < steps.
TorchRingSums torch_ring_sums(const AttentionKernel& kernel, double local, int step, int steps);

}  // namespace clustersim
