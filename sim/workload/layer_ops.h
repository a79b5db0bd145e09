// The kernels of one transformer layer's forward pass on one tensor- and context-parallel rank,
// for one micro-batch, with their shapes: what the compute model times. Backward and
// recomputation are derived from these by the step model (step_model.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/io/schema/job.pb.h"
#include "sim/io/schema/model.pb.h"
#include "sim/io/schema/parallelism.pb.h"
#include "sim/workload/expert_load.h"

namespace clustersim {

struct LayerOp {
  enum class Kind {
    kMatmul,
    kAttention,
    kMemory,
    kTensorAllReduce,
    kTensorAllGather,
    kTensorReduceScatter,
    kContextAllGather,    // K/V over the context-parallel group (backward: reduce-scatter of dK/dV)
    kContextAllToAll,     // Q/K/V or the output between sequence and head shards (both passes)
    kExpertAllToAll,      // token dispatch or combine over the expert-parallel group (both passes)
    kExpertAllGather,     // routed tokens over the expert tensor-parallel group (backward: RS)
    kExpertReduceScatter  // expert outputs over the expert tensor-parallel group (backward: AG)
  };
  Kind kind;
  std::string name;
  // matmul (m x k) . (k x n), `count` times; attention: m queries attending to n keys (the
  // sequence over all context-parallel ranks) with head dimension k, count = batch x heads
  int64_t m = 0, n = 0, k = 0;
  int64_t count = 1;
  double flops = 0;  // attention: forward FLOPs on this rank
  // memory-bound traffic, or the collective's buffer (per GPU; all-gathers: the whole result);
  // attention under context parallelism: one rank's key/value block
  double bytes = 0;
  bool causal = false;       // attention
  bool sixteen_bit = false;  // a matmul kept in 16 bits when the job's precision is narrower
  // A matmul in MXFP8 inside an FP4 step (job.fp4_overrides.mxfp8_modules): its GEMMs at the
  // GPU's MXFP8 rate, its inputs cast to MXFP8.
  bool mxfp8 = false;
  // With sixteen_bit (outside the job's precision, no FP8 casts): an FP32 parameter's matmul on
  // TF32 tensor cores (GemmFormat::kTf32).
  bool tf32 = false;
  bool expert = false;       // a routed expert's kernel (the step's expert-compute share)
  bool shared_expert = false;  // a shared expert's kernel (parallelism.shared_experts_side_stream)
  // Causal attention within a sliding window: each query attends to at most `window` keys (its
  // own and the window - 1 before it); 0: to every earlier one. `chunked`: within its chunk of
  // `window` tokens instead (a block-diagonal causal mask).
  int64_t window = 0;
  bool chunked = false;
  // A sliding window (not chunked) whose backward computes the whole causal square: cuDNN's FP8
  // attention (LayerShape::fp8_attention).
  bool backward_unwindowed = false;
  // Attention with FP8 inputs (LayerShape::fp8_attention): its kernels at the FP8 rates
  // (AttentionKernel::fp8), its 16-bit inputs cast to FP8 (fp8_casts.h).
  bool fp8 = false;
  // Attention: the kernels' library (LayerShape::attention_library, AttentionKernel::library).
  schema::AttentionLibrary library = schema::ATTENTION_LIBRARY_UNSPECIFIED;
  // Fused attention with the attention-probability dropout inside its kernels (a model with
  // `dropout`; AttentionKernel::dropout).
  bool dropout = false;
  // Attention where each query attends to its own list of `n` keys (compressed sparse
  // attention's gathered keys): the rows of its kernel's tiles, that query's heads on this rank
  // (AttentionKernel::tile_rows); 0: a dense kernel, whose tiles hold many queries.
  int64_t tile_rows = 0;
  // Attention: this rank's key and value elements of the micro-batch (the queries' are
  // count x m x k), what an FP8 attention casts besides the queries.
  double key_value_elements = 0;
  // Memory-bound: the backward's traffic where it is not twice the forward's (the eager expert
  // kernels, eager_expert_kernels.h, whose gradients are counted kernel by kernel). A
  // tensor-parallel all-gather or reduce-scatter: its backward's buffer, the 16-bit data gradient
  // reduce-scattered, or the output gradient all-gathered in its narrow copies.
  std::optional<double> backward_bytes = std::nullopt;
  // Memory-bound: the non-tensor (CUDA-core) work its kernels issue per byte they move, in FP32
  // FLOP-equivalents; its traffic moves at the slower of the HBM rate and the GPU's FP32 peak /
  // this (ComputeModel::memory_bound). 0: bound by HBM alone.
  double fp32_flops_per_byte = 0;
  // A matmul whose weight is frozen (LoRA's base, lora.h): its backward computes no weight
  // gradient.
  bool frozen = false;
  // A projection reading an earlier one's input (LayerShape::separate_projections: the key and
  // the value read the query's, the up the gate's).
  bool shares_input = false;
  // A matmul of `count` matrices run as `count` kernels, each with its own overhead, where `count`
  // is otherwise one batched kernel: Transformer Engine's GroupedLinear (the routed experts'
  // grouped GEMMs without the fused grouped MLP) issues one cuBLAS GEMM per local expert
  // (te_general_grouped_gemm -> multi_stream_cublas_gemm, in 2.7, 2.12 and 2.14 alike; the CUTLASS
  // grouped GEMM only under NVTE_USE_CUTLASS_GROUPED_GEMM). The overlap of its compute streams is
  // not modelled: the kernels run one after another.
  bool kernel_per_matrix = false;
  // What Megatron-Core's recompute_modules may rerun of it (parallelism.recompute_modules): the
  // norm in front of an expert layer, the expert layer's kernels or (among those) its routed
  // experts' activation; or, besides the latent up projections ("q up", "kv up"), a kernel of
  // compressed sparse attention's checkpointed query and key-value path (mla_up_proj,
  // compressed_sparse_attention.h).
  enum class Recomputable { kNo, kExpertNorm, kExpertLayer, kExpertActivation, kLatentUp };
  Recomputable recomputable = Recomputable::kNo;
  // A matmul whose backward runs its forward's shape this many times instead of a data and a
  // weight gradient (the SSD scan's kernels, mamba_layer.h: recomputation and gradients alike).
  std::optional<int> backward_runs = std::nullopt;
};

struct LayerShape {
  int sequence_length = 0;
  int micro_batch_size = 0;
  int tensor_parallel = 1;
  bool sequence_parallel = false;
  bool flash_attention = true;
  int context_parallel = 1;
  schema::ContextParallelComm context_parallel_comm = schema::P2P;
  // Bytes per element of the linear layers' GEMM inputs: 2 in 16 bits, narrower under FP8 and FP4
  // (Transformer Engine; fp8_casts.h gemm_input_bytes): the all-gathers in front of them move
  // elements of that size.
  double gemm_input_bytes = 2;
  // Mixture-of-experts layers (sim/parallel/expert_parallel.h): EP and ETP.
  int expert_parallel = 1;
  int expert_tensor_parallel = 1;
  // What the router sends and the busiest expert-parallel rank receives (expert_load.h).
  ExpertLoad expert_load = {};
  // The layer attends within the model's sliding window (attends_in_window) rather than densely.
  bool sliding_window = false;
  // Under compressed sparse attention, the layer's compress ratio (compress_ratio: 0, 4 or 128;
  // compressed_sparse_attention.h): what its attention block runs besides the window.
  int compress_ratio = 0;
  // Under compressed sparse attention, the keys its sparse kernel takes a query's list in:
  // Megatron-Core pads every list to a multiple of it with empty slots the kernel runs as well
  // (compressed_sparse_attention.h sparse_key_block_of).
  int sparse_key_block = 64;
  // The kernels of an inference forward (serving's per-token kernels:
  // compressed_attention_groups.h) rather than a training step's: no loss, and the fused or
  // quantized kernels inference engines run where training runs eager or 16-bit ones
  // (compressed_sparse_attention.h).
  bool inference = false;
  // The routed experts run Transformer Engine's fused grouped MLP (parallelism.fused_expert_mlp):
  // no elementwise kernels of their own between the grouped GEMMs.
  bool fused_expert_mlp = false;
  // With the fused grouped MLP: its saved tensors go through Megatron-Core's paged stash
  // (parallelism.expert_paged_stash; eager_expert_kernels.h paged_stash_bytes).
  bool expert_paged_stash = false;
  // Attention in FP8 (job.fp8_attention): its kernels at the FP8 rates, a sliding window's
  // backward over the whole causal square.
  bool fp8_attention = false;
  // The MLP activation's input kept in FP8 (job.fp8_activation_input_store): its cast to FP8 in
  // the forward and back in the backward, 3 bytes an element each.
  bool fp8_activation_input_store = false;
  // Attention's kernel library (job.attention_library): the GPU's rates of that library.
  schema::AttentionLibrary attention_library = schema::ATTENTION_LIBRARY_UNSPECIFIED;
  // The attention call receives keys and values repeated to the query heads
  // (job.attention_repeats_kv): a context-parallel exchange moves that many heads.
  bool repeated_kv = false;
  // Separate query, key and value GEMMs and separate gate and up GEMMs (job.separate_projections)
  // rather than one QKV and one FC1.
  bool separate_projections = false;
  // Mamba-2 mixers as NeMo AutoModel's NemotronV3Mamba2Mixer runs them
  // (job.mamba_fused_norm_projection): batch-major, the scan ungated, the norm gating inside
  // mamba_ssm's combined function.
  bool mamba_fused_norm_projection = false;
  // The router is NeMo AutoModel's fake balanced gate (job.expert_routing.consecutive_experts):
  // it has no weight, so no router GEMM runs, forward or backward.
  bool weightless_router = false;
  // The router's probabilities reach the experts in fp32: Megatron-Core's flex dispatcher (DeepEP,
  // HybridEP; parallelism.expert_dispatcher EXPERT_NODE_DEDUPLICATED) casts them so
  // (token_dispatcher.py), and the eager weighted bias then computes in fp32.
  bool fp32_router_probabilities = false;
  // Bytes per element of an output gradient all-gathered in the backward of a reduce-scatter
  // (fp8_casts.h gathered_gradient_bytes): 2 in 16 bits.
  double gathered_gradient_bytes = 2;
};

// What a layer is: attention then a dense MLP (ffn_hidden_size) or routed experts (with any shared
// experts); or a hybrid pattern's one block: a Mamba-2 mixer, attention, a dense MLP or experts.
enum class LayerKind { kDense, kExperts, kMamba, kAttention, kMlp, kHybridExperts };
inline constexpr int kLayerKinds = 6;

// Whether a layer of `kind` routes tokens to experts.
bool routes_to_experts(LayerKind kind);

// The kind of layer `layer` (0-based) of `t`: experts after moe.first_dense_layers; a hybrid
// pattern's letter.
LayerKind layer_kind(const schema::Transformer& t, int layer);

// The layers of one multi-token-prediction module of `t`, in order: a hybrid model's
// multi_token_prediction_pattern blocks; else one layer of the last layer's kind.
std::vector<LayerKind> multi_token_prediction_layer_kinds(const schema::Transformer& t);

// Whether layer `layer` (0-based) of `t` attends within its sliding window: all but every
// full_attention_every-th layer of a model with one (every layer without full_attention_every).
bool attends_in_window(const schema::Transformer& t, int layer);

// Query-key pairs of one causal sequence of `s` tokens whose queries attend to at most `window`
// keys each (0, or a window no shorter than the sequence: to every earlier key and their own):
// s (s + 1) / 2, or w (w + 1) / 2 + (s - w) w.
double causal_pairs(double s, double window);

// Query-key pairs of one sequence of `s` tokens cut into chunks of `chunk` tokens, each query
// attending causally within its chunk: n c (c + 1) / 2 + r (r + 1) / 2 with n = floor(s / c)
// whole chunks and r = s - n c tokens left (a chunk of 0, or one no shorter than the sequence:
// s (s + 1) / 2, plain causal).
double chunked_causal_pairs(double s, double chunk);

// Query-key pairs of one causal sequence of `s` tokens whose queries attend within `window`
// tokens: within their chunk when `chunked` (chunked_causal_pairs), else within the band before
// them (causal_pairs); a window of 0: every earlier key.
double windowed_causal_pairs(double s, double window, bool chunked);

// windowed_causal_pairs for a layer of `t` that attends within its sliding_window.
// Requires: t has a sliding_window.
double window_pairs(const schema::Transformer& t, double s);

// Of the `count` layers from layer `first`, those of `kind` that attend within the window.
int windowed_layers_in(const schema::Transformer& t, int first, int count, LayerKind kind);

// Forward kernels of one layer, in order. 16-bit activations. Tensor-parallel communication is
// one all-reduce after the attention and one after the MLP (reduce-scatter, with an all-gather
// before each block, under sequence parallelism); a dense layer of a model with
// parallel_attention_mlp runs both blocks on one normed input, with one all-gather before them
// and one all-reduce (reduce-scatter) of their summed outputs. Each context-parallel rank holds
// sequence / context_parallel tokens of every sequence; its attention covers its queries against
// the whole sequence: one fused kernel op (ring attention: the step model splits it into the
// ring's steps; TORCH_ALL_GATHER's all-gather too), after an all-gather of keys and values
// (ALL_GATHER) or between two all-to-alls (ALL_TO_ALL: the whole sequence for heads /
// context_parallel heads).
// A decoder's fused attention is causal (half the query-key square plus its diagonal); unfused
// attention computes the whole square and masks it. Within a sliding window of w < s tokens
// (shape.sliding_window, fused attention without context parallelism) each query attends to at
// most w keys: w (w + 1) / 2 + (s - w) w pairs; within a chunked one, to the earlier keys of its
// chunk of w tokens (chunked_causal_pairs).
// An expert layer (Megatron-Core's MoELayer with the all-to-all token dispatcher) runs on the
// rank's tokens (its sequence-parallel shard): the router GEMM (none for a weightless router,
// LayerShape::weightless_router), the permutation copying each token once per routed expert, the
// dispatch all-to-all over the EP group (16-bit), an all-gather of the received tokens over the ETP
// group, the local experts' grouped GEMMs (num_experts / EP experts, each of
// expert_ffn_hidden_size / ETP, on an equal share of the received tokens:
// balanced routing, each EP rank getting tokens x top-k / EP worth of expert work), a
// reduce-scatter over ETP, the combine all-to-all, the unpermute summing the k copies; shared
// experts run beside as a dense tensor-parallel MLP of num_shared x expert_ffn_hidden_size.
// Compressed sparse attention (DeepSeek V4): the attention block's kernels of the layer's
// shape.compress_ratio (compressed_sparse_attention_ops). Hyper-connections: each block's input
// mixed out of the residual's streams and its residual add updating them instead
// (hyper_connection_mix_ops, hyper_connection_update_op).
// A hybrid layer's one block (LayerKind kMamba to kHybridExperts) is its norm, under sequence
// parallelism an all-gather, the block's kernels as above, the all-reduce (reduce-scatter) and the
// residual add. A Mamba-2 mixer (Megatron-Core's MambaMixer; heads and B/C groups split over
// tensor parallelism): the column-parallel in_proj GEMM (z, x, B, C, dt of the rank's heads), its
// output reordered to batch-major (a copy when the micro-batch has several sequences, and its
// gradient's), the causal conv1d with SiLU over x, B and C (memory-bound, rerun in the backward),
// the SSD chunked scan kernel by kernel, gated by z (mamba_layer.h: ssd_scan_ops), the output
// reordered back, its RMSNorm and the row-parallel out_proj GEMM; with
// shape.mamba_fused_norm_projection (NeMo AutoModel) no reorder copies (batch-major activations),
// the scan ungated and the norm gated by z (reading it; its backward writing dz and the normed
// output again for out_proj's weight gradient). LatentMoE experts: a
// h -> latent GEMM before the router's dispatch and latent -> h after the combine, the dispatched
// tokens and the experts at the latent width.
// With shape.separate_projections, "q", "k" and "v" GEMMs replace "qkv" and a gated dense MLP's
// "mlp gate" and "mlp up" (each f wide) its combined "mlp up" (shared experts stay combined);
// before each block's all-gather a
// backward-only kernel sums the input gradients of its p projections, as eager autograd
// accumulates them (p - 1 adds, each reading two 16-bit gradients of the block's whole input and
// writing one; under sequence parallelism before their reduce-scatter).
// Requires: a transformer that passed the catalog checks and a shape that passed the
// configuration checks (the degrees divide what they split; an expert layer's tensor
// parallelism comes with sequence parallelism).
std::vector<LayerOp> layer_forward_ops(const schema::Transformer& t, const LayerShape& shape,
                                       LayerKind kind);

// Forward kernels of a multi-token-prediction module besides its transformer layer (of the last
// layer's kind) and its output layer: the norms of the hidden state and of the next token's
// embedding and their 2h -> h projection (split by columns over tensor parallelism).
std::vector<LayerOp> multi_token_prediction_ops(const schema::Transformer& t,
                                                const LayerShape& shape);

// `ops` with every matmul kept in 16 bits (LayerOp::sixteen_bit) whatever the job's precision.
std::vector<LayerOp> with_sixteen_bit_gemms(std::vector<LayerOp> ops);

// How the loss is computed (job.proto derives each one's bytes a logit): Megatron-Core's fused
// cross entropy, its unfused one (job.unfused_cross_entropy), Transformer Engine's Triton kernels
// (job.transformer_engine_cross_entropy) or PyTorch's F.cross_entropy on the 16-bit logits or an
// fp32 copy of them (job.torch_cross_entropy).
enum class CrossEntropyKernel {
  kFused,
  kUnfused,
  kTransformerEngine,
  kTorchSixteenBit,
  kTorchFp32Upcast
};

// The job's loss kernel (the scenario loader lets it name one at most).
CrossEntropyKernel cross_entropy_kernel(const schema::TrainingJob& job);

// What a loss kernel moves and holds, in bytes an element of the rank's logits: read and written
// forward and backward, and alive while the loss runs (the 16-bit logits included).
struct CrossEntropyBytes {
  double forward = 0;
  double backward = 0;
  double kept = 0;
};
CrossEntropyBytes cross_entropy_bytes(CrossEntropyKernel loss);

// Forward kernels of the output layer on the last stage: logits and the cross-entropy (16-bit
// GEMM: Megatron's output layer is not a Transformer Engine module, unless `narrow_logits`:
// job.fp8_output_layer, Transformer Engine's LM-head linear at the job's narrow precision).
std::vector<LayerOp> output_forward_ops(const schema::Transformer& t, const LayerShape& shape,
                                        bool narrow_logits = false,
                                        CrossEntropyKernel loss = CrossEntropyKernel::kFused);

}  // namespace clustersim
