// The rotary embedding Megatron-Core applies with eager PyTorch kernels when Transformer Engine's
// fused RoPE cannot (a YaRN concentration other than 1, transformer.yarn_rotary_factor): its
// memory traffic per rotated element of the queries and keys, forward and backward.
#pragma once

#include "sim/workload/eager_expert_kernels.h"

namespace clustersim {

// Megatron-Core rope_utils.py _apply_rotary_pos_emb_bshd (apply_rotary_pos_emb falls back to it
// when mscale != 1), on 16-bit elements of 2 bytes: t x cos (read, write), _rotate_half's negated
// half (read, write half) and concatenation (read, write), x sin (read, write), the sum (read two,
// write one) and the concatenation with the unrotated rest (read, write): 24 bytes an element.
// Backward: the two products' gradients (read, write each), the negation's (half) and the chunk's
// gradient joining the halves (read, write), the two gradient paths into t summed (read two, write
// one), and the slice t[..., :rot_dim]'s gradient (zeros written, the gradient copied in): 26.
// The cosines and sines of one sequence's positions are negligible beside them.
EagerExpertBytes unfused_rotary_bytes(double elements);

}  // namespace clustersim
