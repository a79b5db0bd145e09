// The fused attention core of one rank, forward and backward, alone or under context
// parallelism as Transformer Engine runs it (workload/layer_ops.h describes the op):
//   no CP, or ALL_TO_ALL: one kernel over the whole sequence (its heads);
//   ALL_GATHER: a rank's two chunks (r and 2 CP - 1 - r, c tokens each) each attend causally to
//     the gathered keys up to their end, (r + 1) c and (2 CP - r) c keys; the slowest rank's
//     kernels count (the all-gather is an op of its own);
//   P2P: ring attention simulated on the network (ring_attention.h), step kernels as its header
//     says; the exchange not hidden behind them is the exposed part;
//   TORCH_ALL_GATHER: PyTorch's ring over all-gathered keys and values, the same step kernels
//     with its FP32 sums (torch_ring_sums.h), the all-gather hidden behind the first step only
//     (slowing it on the SMs the collective holds) and the FP32 key/value gradients passed on
//     after every backward step (parallelism.proto says what runs).
// An encoder's (non-causal) ring splits the sequence into CP plain chunks.
// Without CP, a sliding window (op.window): its first window's causal square and the band after;
// a chunked one: one causal kernel over the sequence padded to whole chunks, the chunks in the
// batch (NeMo's Llama 4 layers).
#pragma once

#include "sim/hw/compute_model.h"
#include "sim/io/schema/parallelism.pb.h"
#include "sim/parallel/layer_times.h"
#include "sim/workload/layer_ops.h"

namespace clustersim {

struct AttentionTimes {
  Picoseconds forward, backward;                  // kernels (the slowest rank's)
  Picoseconds forward_exposed, backward_exposed;  // ring exchange not hidden behind them
};

// `context`: the context-parallel group, or null without context parallelism.
// Requires: `attention` a kAttention op of layer_forward_ops.
AttentionTimes attention_times(const LayerOp& attention, const ComputeModel& compute,
                               GroupCollectives* context, schema::ContextParallelComm comm);

}  // namespace clustersim
