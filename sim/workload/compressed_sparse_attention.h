// DeepSeek V4's attention block in a training step (schema CompressedSparseAttention): the kernels
// of its query bottleneck, its one key-value head, the compressors and the lightning indexer of
// the layers that attend to compressed keys, the attention over the window and those keys, and
// the grouped low-rank output projection; and the hyper-connections' passes around each block.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/io/schema/model.pb.h"
#include "sim/workload/layer_ops.h"

namespace clustersim {

// Requires (for all functions): a transformer that passed the catalog checks.

// Layer `layer`'s (0-based) compress ratio: 0 (window only), 4 or 128; 0 without compressed
// sparse attention, and for a multi-token-prediction layer (layer >= num_layers).
int compress_ratio(const schema::Transformer& t, int layer);

// The compressed keys each query of a sequence of `s` tokens attends to besides its window:
// 0 at ratio 0; at ratio 4 the indexer's min(index_topk, s / 4) picks (the kernel's padded
// top-k list, whatever of it the causal mask leaves empty); at ratio 128 all s / 128 entries.
int64_t compressed_keys_attended(const schema::CompressedSparseAttention& c, int64_t s, int ratio);

// LayerShape::sparse_key_block on a GPU of `architecture` (gpu.proto): what Megatron-Core pads a
// query's key list to (dsa_kernels.py _get_topk_alignment, FlashMLA's key block B_TOPK): 128 on
// Hopper (SM90), else 64 (SM100 and later).
int sparse_key_block_of(const std::string& architecture);

// The keys of a query's list in the sparse kernel of a layer of compress ratio `ratio`: the
// window's (empty slots before the sequence start included) and compressed_keys_attended,
// rounded up to a multiple of `key_block`.
int64_t sparse_attention_keys(const schema::CompressedSparseAttention& c, int64_t s, int ratio,
                              int key_block);

// The attention block's kernels of a layer of compress ratio `ratio` on one tensor-parallel rank
// (heads and output groups split over it; the key-value head, the compressors and the indexer
// replicated), after the block's norm and all-gather, before its all-reduce:
//   q down (h -> q_lora_rank), its RMSNorm, q up (-> heads x head_dim), each head's RMSNorm;
//   kv (h -> head_dim), its RMSNorm (the four after q down rerun under
//   recompute_latent_up_projection: LayerOp::Recomputable::kLatentUp);
//   ratio > 0: the compressor's wkv and wgate (h -> 2 c head_dim, c = 2 at ratio 4, else 1) and
//   its pooling (Compressor.forward's eager kernels over both outputs in fp32, writing the
//   s / ratio entries and their RMSNorm: one memory pass of their traffic);
//   ratio 4: the indexer's query (q_lora_rank -> index heads x index_head_dim) and head weights
//   (h -> index heads), its own compressor at index_head_dim, the scoring of every query against
//   all s / 4 compressed keys in each index head (a batched 16-bit GEMM: 2 x heads x dim x s x
//   s / 4 FLOPs a sequence) and the top-k (a memory pass reading the fp32 head-weighted scores,
//   writing the picks' indices), neither with a backward kernel; the sparse loss
//   (dsa_indexer_use_sparse_loss), in the forward: the main heads' scores over the picks again
//   (the target), the indexer's gradients over the picks, and its eager fp32 kernels;
//   the attention: Megatron-Core's fused DSA path (apply_dsa_kernel_fusion) at every ratio,
//   FlashMLA's sparse forward and cuDNN's sparse backward over each query's own list of
//   sparse_attention_keys keys (shape.sparse_key_block), timed as the fitted attention kernel at
//   that many keys whose tiles hold one query's heads (LayerOp::tile_rows: no two queries share a
//   key list);
//   the grouped output: o_groups GEMMs of (heads / o_groups) head_dim -> o_lora_rank (an einsum
//   on a plain parameter: 16-bit whatever the job's precision), then o_groups o_lora_rank -> h.
// shape.inference (an inference forward, as vLLM's DeepSeek V4 runs it): no sparse loss; each
// compressor's pooling one fused pass (its 16-bit outputs read, the entries and their norm
// written); the grouped output a quantized weight's GEMM (FP8 wo_a); the query head norm as in
// training (vLLM fuses it with the rotary embedding and the cache insert: one read and write of
// the queries all the same).
// Requires: t has compressed_sparse_attention, tensor_parallel divides o_groups, no context
// parallelism.
void compressed_sparse_attention_ops(const schema::Transformer& t, const LayerShape& shape,
                                     int ratio, std::vector<LayerOp>* ops);

// What mixes a block's input out of the `streams`-wide residual (schema HyperConnections), on
// `tokens` tokens: the FP32 projection of the flattened streams to streams^2 + 2 streams weights
// (a GEMM on TF32 tensor cores: Megatron-Core's fused mHC kernels, fusions/fused_mhc_kernels.py
// _cutile_proj_rms_fwd and _bwd, run tfloat32 MMAs on the 16-bit streams; LayerOp::tf32), and one
// memory pass reading the streams and writing the
// block's input, 2 (streams + 1) h bytes a token. The Sinkhorn iterations on streams x streams a
// token are not counted (results/moe.md: under a microsecond a block).
void hyper_connection_mix_ops(const schema::Transformer& t, int64_t tokens,
                              std::vector<LayerOp>* ops);

// A training step's only: autograd's sum of the streams' three gradients (the mix projection's,
// the mix's and the update's) in the backward, two adds of 3 x 2 streams h bytes a token; no
// forward traffic.
LayerOp hyper_connection_gradient_sum_op(const schema::Transformer& t, int64_t tokens);

// What replaces a block's residual add under hyper-connections: a memory pass reading the
// streams and the block's output and writing the streams, 2 (2 streams + 1) h bytes a token.
LayerOp hyper_connection_update_op(const schema::Transformer& t, int64_t tokens);

}  // namespace clustersim
