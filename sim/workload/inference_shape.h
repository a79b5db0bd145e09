// What serving a transformer costs per token on one GPU, derived from the model's shape and the
// numeric formats of its weights, activations and KV cache: the matrix multiplications of one
// layer on one tensor-parallel rank (for m tokens each), per kind of layer (a mixture of experts'
// dense first layers and its expert layers), the bytes of weights, KV cache and activation
// workspace a GPU holds, attention's FLOPs per query-key pair (prefill and decode) and the KV
// bytes a decode step reads per context token. What the serving iteration model times.
//
// Placement follows TensorRT-LLM's defaults: layers split evenly over pipeline stages, the
// token embedding whole (not sharded) on the first stage's GPUs, the output projection split by
// vocabulary over tensor-parallel ranks on the last stage; embedding, output projection and norms
// stay 16-bit under quantization; experts split by tensor parallelism like dense MLPs (every
// rank holds a 1 / TP slice of every expert), or under expert parallelism EP inside the
// tensor-parallel group (TensorRT-LLM's moe_expert_parallel_size x moe_tensor_parallel_size =
// tensor_parallel_size) each rank holds num_experts / EP whole experts, each split over the
// TP / EP ranks of its expert-tensor-parallel group; KV heads replicated when tensor parallelism
// exceeds them (each rank keeps one). Multi-token prediction layers are not loaded here (a
// speculative-decoding draft loads them: sim/serve/speculative_decoding.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/io/schema/common.pb.h"
#include "sim/io/schema/model.pb.h"
#include "sim/workload/element_size.h"

namespace clustersim {

struct TensorFormats {
  schema::Precision weights = schema::FP16;
  schema::Precision activations = schema::FP16;  // matmul inputs: the tensor-core precision
  schema::Precision kv_cache = schema::FP16;
};

// One matrix multiplication of a layer on one rank: (m x k) . (k x n); an expert's matrix exists
// once per expert, and each routed expert takes its share of the tokens.
struct LayerMatmul {
  int64_t n = 0, k = 0;
  bool expert = false;  // an expert's matrix: m = that expert's tokens
};

// The layers of one kind on a stage: how many, and one layer's matrices and elementwise traffic.
struct LayerGroup {
  int layers = 0;
  std::vector<LayerMatmul> matmuls;  // of one layer, in order: attention, then the MLP
  // One layer's elementwise kernels per token (norms, residual adds, the MLP activation).
  double memory_bytes_per_token = 0;
  // Under compressed sparse attention, the layers' compress ratio (0, 4 or 128;
  // compressed_attention_groups.h): what their attention reads.
  int compress_ratio = 0;
};

struct InferenceShape {
  int layers = 0;  // on this pipeline stage, all groups
  int tensor_parallel = 1;
  // The dense layers (a mixture of experts' first ones), then the expert layers, each split by
  // compress ratio under compressed sparse attention; no empty group.
  std::vector<LayerGroup> groups;
  int num_experts = 1, experts_per_token = 1;
  // Expert-parallel degree inside the tensor-parallel group: each rank holds num_experts /
  // expert_parallel experts, its expert matmuls (LayerMatmul::expert) of width / (TP / EP).
  int expert_parallel = 1;
  bool first_expert_layer = false;  // the stage holds the model's first expert layer
  int64_t hidden = 0;
  int64_t vocab_shard = 0;    // output projection columns on this rank (last stage; else 0)
  int query_heads = 0, kv_heads = 0;  // on this rank (kv_heads 0 under latent attention)
  int head_dim = 0;
  // Multi-head latent attention: the compressed KV of one token and layer (kv_lora_rank plus the
  // rotary key), which every query head of the rank reads once; 0 for multi-head / grouped-query
  // attention.
  int latent_kv_width = 0;
  // Sliding-window attention: the stage's layers that attend within the last window_tokens
  // (window_chunked: within their chunk of window_tokens).
  int windowed_layers = 0, window_tokens = 0;
  bool window_chunked = false;
  // Compressed sparse attention (DeepSeek V4; compressed_kv_cache.h): the bytes of one window or
  // compressed entry (0 without it: the other fields below describe its attention) and of one
  // indexer key, and the indexer's heads and their width (one group's compress_ratio says what
  // its layers read; window_tokens is its window, windowed_layers 0).
  double compressed_entry_bytes = 0, indexer_key_bytes = 0;
  int index_heads = 0, index_head_dim = 0;
  double weight_bytes = 0;       // this GPU's share of the weights
  // Of weight_bytes: the token embedding (first stage) and the output projection and final norm
  // (last stage), which a draft sharing them with its target does not load again.
  double embedding_and_head_bytes = 0;
  double kv_bytes_per_token = 0; // K and V of one token, every layer of this stage, this rank
  // What a sequence holds besides, whatever its length: compressed sparse attention's windows.
  double kv_bytes_per_sequence = 0;
  double kv_element_bytes = 2;   // of the KV cache's format
  // Activation workspace per token of an iteration (the live tensors of one layer: its input,
  // residual and norm outputs, and the MLP's up projection and activation, plus 8-bit copies of
  // matmul inputs under 8-bit activations; a mixture-of-experts layer's routed experts keep k
  // copies of each token: permuted input, up projection, activation and down projection output),
  // of the stage's largest layer kind.
  double activation_bytes_per_token = 0;
  // One layer, this rank: attention's FLOPs per query-key pair of a prompt (QK^T and PV), and of
  // a decoding token (the same, except under latent attention: its absorbed form scores the
  // queries against the latent, kv_lora_rank + rope wide, and sums the latent, kv_lora_rank).
  double attention_flops_per_pair = 0;
  double decode_attention_flops_per_pair = 0;
  double allreduce_bytes_per_token = 0; // one tensor-parallel all-reduce (16-bit hidden state)
  // Tensor-parallel all-reduces per layer: 2 (after attention, after the MLP), or 1 when attention
  // and MLP run in parallel on one input and their outputs are summed first.
  int allreduces_per_layer = 2;
};

// Requires: a transformer that passed the catalog checks; serving_tensor_parallel_problem(t,
// tensor_parallel) and serving_expert_parallel_problem(t, expert_parallel) are empty,
// expert_parallel divides tensor_parallel; 0 <= stage < pipeline_parallel <= num_layers.
InferenceShape inference_shape(const schema::Transformer& t, const TensorFormats& formats,
                               int tensor_parallel, int pipeline_parallel, int stage,
                               int expert_parallel = 1);

// Why `tensor_parallel` ranks cannot split the model for serving ("" when they can): they must
// divide the attention heads, the hidden, FFN and expert widths (and compressed sparse attention's
// output groups), and divide the KV heads or be a multiple of them.
std::string serving_tensor_parallel_problem(const schema::Transformer& t, int tensor_parallel);

// Why `expert_parallel` ranks cannot split the model's experts ("" when they can, always at 1):
// the model must have experts, and the degree must divide their number. (It must also divide the
// replica's tensor parallelism, whose group it splits.)
std::string serving_expert_parallel_problem(const schema::Transformer& t, int expert_parallel);

// Distinct experts `tokens` tokens route to on average when each picks `k` of `experts` at
// random: experts x (1 - (1 - k/experts)^tokens).
double experts_touched(int experts, int k, int64_t tokens);

}  // namespace clustersim
