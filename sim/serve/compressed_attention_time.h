// The attention of one layer of DeepSeek V4's compressed sparse attention in a serving iteration,
// on one tensor-parallel rank (every rank reads the one key-value head's cache and runs the
// indexer, replicated; its query heads are the rank's share). With E the bytes of an entry, I of
// an indexer key, f = 4 head_dim x query heads FLOPs per query-entry pair (QK^T and PV over the
// one head_dim-wide head):
//   every ratio: the window, the prompt chunks' windowed pairs in the causal context kernel
//     (ComputeModel::prompt_attention) and the decoding tokens' window entries read (each token's
//     min(context, window_tokens): IterationWork::window_decode_context);
//   ratio 128: the same kernels over s / 128 more entries a query (prompt: the chunks' causal
//     pairs / 128; decode: the summed context / 128, the floor ignored: under one entry a token);
//   ratio 4: the entries the indexer selected (IterationWork::selected_entries, prompt queries'
//     and decoding tokens'), gathered by index: E bytes each read; the indexer's scoring of every
//     query against all s / 4 indexer keys (index heads x index dim x 2 FLOPs a pair; prompt: the
//     chunks' causal pairs / 4; decode: the context / 4, whose keys, I bytes each, are read) and
//     its top-k's pass over the FP32 head-weighted scores (4 bytes a pair, as the training step's
//     top-k: compressed_sparse_attention.h) — the part of decode that grows with the context.
// The reads by index run FlashMLA's sparse decoding kernel, whose MMAs cover a query's heads in
// blocks of 64 (vLLM pads a rank's heads to 64 or 128): their FLOPs are f x the padded heads /
// the rank's heads (at TP 4, 16 heads: 4 x f). A read is timed as the longer of its bytes at the
// memory rate and those FLOPs at the fused-attention rate, as the dense models' decode attention
// (iteration_model.h); the rate against the kernel's published ones: results/moe_serving.md.
#pragma once

#include "sim/hw/compute_model.h"
#include "sim/serve/iteration_model.h"
#include "sim/util/units.h"
#include "sim/workload/inference_shape.h"

namespace clustersim {

// One layer's kernels: the causal context kernel's FLOPs (and their sum over chunks of a chunk's
// FLOPs over its keys, ComputeModel::prompt_attention), the entries read by index (bytes and
// FLOPs, at the padded heads), and the indexer's scoring and top-k (bytes and FLOPs; ratio 4).
struct CompressedAttentionWork {
  double prompt_flops = 0, prompt_flops_per_key = 0;
  double read_bytes = 0, read_flops = 0;
  double indexer_bytes = 0, indexer_flops = 0;
};

// Requires (both): `shape` has compressed sparse attention (compressed_entry_bytes > 0); ratio 0,
// 4 or 128.
CompressedAttentionWork compressed_attention_work(const InferenceShape& shape,
                                                  const IterationWork& work, int ratio);

// One layer of compress ratio `ratio`: each of its kernels above timed (none without its work).
Picoseconds compressed_attention_time(const ComputeModel& compute, const InferenceShape& shape,
                                      const IterationWork& work, int ratio);

}  // namespace clustersim
