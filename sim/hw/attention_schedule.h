// How evenly a fused attention kernel's thread blocks fill the GPU's SMs, and the rate that
// follows relative to the benchmark its fitted curve came from.
//
// FlashAttention-style kernels (FlashAttention-2 and -3, cuDNN's fused attention) launch one
// thread block per 128-row query tile of each (batch, head) in the forward, one per 128-key tile
// in the backward, one block resident per SM (FlashAttention-3, arXiv:2407.08608, Sec. 3.1: a
// block of 128 queries per CTA at head dimension 128, one CTA per SM). A block's work is the key
// tiles it visits: all of them without a mask; under a causal mask (bottom-right aligned) those
// at or before its queries' positions, so the works rise with the tile index. The hardware hands
// blocks out in launch order to whichever SM frees first:
//   equal works (no mask): whole waves, busy fraction C / (ceil(C / S) S), C blocks on S SMs;
//   causal: the largest blocks go last and the kernel ends when they do, after
//     max(w_max, W / S + w_max / 2) (W the summed work, w_max the largest block's), within 0.2%
//     of the list schedule itself from 512 to 16,384 blocks (tests/hw/attention_schedule_test.cpp).
// The backward's key-tile blocks carry the same works in mirror order; the same form is kept
// for it (checked against cuDNN on one H200: results/h200_kernels.md, fifth sitting).
// The catalog's attention curves (gpu.proto AttentionEfficiency) are fitted on the FlashAttention
// benchmark's shapes: 16,384 tokens a batch at model width 2048, so (16384 / keys) x
// (2048 / head dim) batch-heads of `keys` queries each (2,048 blocks at head dimension 128). A
// kernel of few batch-heads (one sequence, the heads tensor parallelism leaves a GPU) runs at
// its own busy fraction over the benchmark's.
#pragma once

#include "sim/hw/compute_model.h"

namespace clustersim {

// Rows of a query tile, or keys of a key tile, of one thread block.
inline constexpr int64_t kAttentionTile = 128;

// The fraction of `sms` SMs' time that `kernel`'s blocks keep busy. Requires: sms >= 1.
double attention_busy_fraction(const AttentionKernel& kernel, int sms);
// `kernel`'s busy fraction over that of the FlashAttention benchmark's kernel of the same keys,
// head dimension and mask; 1 when `sms` is 0 (an accelerator without SMs).
double attention_schedule_scale(const AttentionKernel& kernel, int sms);

}  // namespace clustersim
