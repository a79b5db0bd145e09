// A hybrid model's layers (Megatron-Core's hybrid_layer_pattern) and the Mamba-2 mixer of its 'M'
// layers: its dimensions with their defaults, its parameters, and the kernels of its SSD chunked
// scan (Dao and Gu, "Transformers are SSMs", arXiv:2405.21060, section 6).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/io/schema/model.pb.h"
#include "sim/workload/layer_ops.h"

namespace clustersim {

// Requires (for all functions): a transformer that passed the catalog checks.

// What one layer of a hybrid pattern is.
enum class HybridBlock { kMamba, kAttention, kMlp, kExperts };

// The block a pattern letter names (one of M * - E).
HybridBlock hybrid_block_of(char letter);

// Block of 0-based layer `layer` of a model with hybrid_layer_pattern.
HybridBlock hybrid_block(const schema::Transformer& t, int layer);

// The blocks of one multi-token-prediction module of a model with hybrid_layer_pattern
// (multi_token_prediction_pattern's letters, in order; none without the pattern).
std::vector<HybridBlock> multi_token_prediction_blocks(const schema::Transformer& t);

// Of the `count` layers from `first`, those of `block`.
int hybrid_blocks_in(const schema::Transformer& t, int first, int count, HybridBlock block);

// The mixer's widths: d_inner = heads x head_dim, and the conv1d's channels d_inner + 2 g N
// (x, B and C).
int64_t mamba_inner(const schema::Transformer& t);
int64_t mamba_conv_channels(const schema::Transformer& t);
int64_t mamba_conv_kernel(const schema::Transformer& t);  // conv_kernel, else 4
int64_t mamba_chunk_size(const schema::Transformer& t);   // chunk_size, else 128

// Parameters of one Mamba-2 mixer (its layer's pre-norm apart): see Mamba2 in model.proto.
int64_t mamba_mixer_parameters(const schema::Transformer& t);

// The SSD scan of `batch` sequences of `sequence` tokens on `heads` of the mixer's heads and their
// share of the groups G' (Dao and Gu, section 6, the chunked algorithm; chunks of Q tokens, state
// N, head dim P), kernel by kernel as mamba_ssm's Triton kernels run it in training
// (state-spaces/mamba v2.3 mamba_ssm/ops/triton/ssd_combined.py, _mamba_chunk_scan_combined_fwd
// and _bwd). `gated`: z given to the scan (Megatron-Core's MambaMixer._ssm_training), chunk_scan
// reading z and writing the gated output beside the ungated one, the backward's chunk_scan_bwd_dz
// reading x, z, the output and its gradient and writing dz and the ungated gradient; else z is
// None (mamba_split_conv1d_scan_combined given the gated norm's weight: the norm gates, see
// layer_ops.h), chunk_scan reads no z and writes the ungated output only, no bwd_dz kernel runs.
// Matmuls (16-bit, at the GEMM
// model's rates): the chunk states B^T X (N x P x Q per chunk and head), C B^T (Q x Q x N per chunk
// and group), the states' output C h (Q x P x N) and the masked product with X (Q x P x Q); their
// backward reruns each shape (LayerOp::backward_runs): 3 for the chunk states (recomputed, dB, dx's
// B dstates), 3 for C B^T (recomputed, dB and dC of dCB), 2 for the states' output (dstates, dC)
// and 3 for the masked product (dx, dCB, ddA). Memory-bound, each kernel's reads and writes (16-bit
// x, z, B, C, y; fp32 dt, dA cumsum, chunk states and C B^T): chunk_cumsum, chunk_state,
// state_passing (fp32 states in, 16-bit out), bmm_chunk and chunk_scan (gating by z, writing y
// and the ungated output); backward: cumsum, bmm, chunk_state and state_passing recomputed (fp32
// states), then chunk_scan_bwd_dz, _dstates (fp32), state_passing_bwd (fp32 in, 16-bit out),
// chunk_scan_chunk_state_bwd_dx, chunk_state_bwd_db, chunk_scan_bwd_dC and _dcb (fp32 partial
// sums, one split per group: batch x chunks x heads at least the SMs x heads per group), two
// bmm_chunk_bwd, chunk_scan_bwd_ddAcs_stable and chunk_cumsum_bwd. The C B^T of a group is read
// once for its heads (the heads are the launch grid's outermost axis, the group's copy stays in
// L2). FLOPs: tokens (2 Q N G' + heads (2 Q P + 4 N P)). The memory-bound kernels are bound by
// their SMs where those are slower than HBM: 35 FP32 FLOP-equivalents of CUDA-core work a byte
// (LayerOp::fp32_flops_per_byte; fitted, mamba_layer.cpp says on what).
std::vector<LayerOp> ssd_scan_ops(const schema::Transformer& t, int64_t batch, int64_t sequence,
                                  int64_t heads, bool gated);

}  // namespace clustersim
