// Ring attention over a context-parallel group (Megatron-Core's cp_comm_type "p2p", Transformer
// Engine's AttnFuncWithCPAndKVP2P), simulated on an idle network of the cluster: each of the CP
// ranks runs CP steps; at the start of step i it passes the key/value block it holds on to the
// next rank of the ring (except at the last step) and runs that block's attention; step i + 1
// starts once both its own step i is done and the block for step i + 1 has arrived from the
// previous rank. So a step costs max(attention, transfer) and the exchange hides exactly when
// every step's attention outlasts its block's transfer. Backward passes the blocks again with
// their gradients.
//
// The load-balanced causal split (2 CP chunks, rank r holding chunks r and 2 CP - 1 - r): step 0
// is the causal attention of a rank's 2 chunks with themselves; at step i <= r its queries meet
// the first half of the block it holds (2c queries, c keys), at step i > r the second half of its
// queries meets the whole block (c queries, 2c keys): c^2 pairs per chunk pair every step.
#pragma once

#include <vector>

#include "sim/net/topology.h"
#include "sim/util/units.h"

namespace clustersim {

struct RingAttentionPass {
  // Per rank of the ring, the duration of each of its steps' attention kernels.
  std::vector<std::vector<Picoseconds>> steps;
  double block_bytes = 0;  // what a rank passes on at each step
};

struct RingAttentionTime {
  Picoseconds total;    // from the first step's start to the last rank's end
  Picoseconds compute;  // the slowest rank's kernels alone
  Picoseconds exposed() const { return total - compute; }
};

// `ring`: the GPUs of one context-parallel group, in ring order (rank r sends to rank r + 1).
// Requires: ring.size() >= 2 and equal to pass.steps.size(), every rank with ring.size() steps;
// distinct GPUs of `topology`. Cost: O(ranks^2) transfers on a small simulation.
RingAttentionTime simulate_ring_attention(const Topology& topology, const std::vector<int>& ring,
                                          const RingAttentionPass& pass);

}  // namespace clustersim
