// What serving a transformer costs per token on one GPU, derived from the model's shape and the
// numeric formats of its weights, activations and KV cache: the matrix multiplications of one
// layer on one tensor-parallel rank (for m tokens each), the bytes of weights, KV cache and
// activation workspace a GPU holds, attention's FLOPs per query-key pair and the KV bytes a
// decode step reads per context token. What the serving iteration model times.
//
// Placement follows TensorRT-LLM's defaults: layers split evenly over pipeline stages, the
// token embedding whole (not sharded) on the first stage's GPUs, the output projection split by
// vocabulary over tensor-parallel ranks on the last stage; embedding, output projection and norms
// stay 16-bit under quantization.
#pragma once

#include <cstdint>
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

struct InferenceShape {
  int layers = 0;           // on this pipeline stage
  int tensor_parallel = 1;
  std::vector<LayerMatmul> matmuls;  // of one layer, in order
  int num_experts = 1, experts_per_token = 1;
  int64_t hidden = 0;
  int64_t vocab_shard = 0;    // output projection columns on this rank (last stage; else 0)
  int query_heads = 0, kv_heads = 0;  // on this rank
  int head_dim = 0;
  double weight_bytes = 0;       // this GPU's share of the weights
  double kv_bytes_per_token = 0; // K and V of one token, every layer of this stage, this rank
  double kv_element_bytes = 2;   // of the KV cache's format
  // Activation workspace per token of an iteration (the live tensors of one layer: its input,
  // residual and norm outputs, and the MLP's up projection and activation, plus 8-bit copies of
  // matmul inputs under 8-bit activations).
  double activation_bytes_per_token = 0;
  // One layer's elementwise kernels per token (norms, residual adds, the MLP activation).
  double memory_bytes_per_token = 0;
  double attention_flops_per_pair = 0; // one layer: QK^T and PV of one query-key pair, this rank
  double allreduce_bytes_per_token = 0; // one tensor-parallel all-reduce (16-bit hidden state)
  // Tensor-parallel all-reduces per layer: 2 (after attention, after the MLP), or 1 when attention
  // and MLP run in parallel on one input and their outputs are summed first.
  int allreduces_per_layer = 2;
};

// Requires: a transformer that passed the catalog checks; tensor_parallel divides its heads, KV
// heads, hidden and FFN sizes; 0 <= stage < pipeline_parallel <= num_layers.
InferenceShape inference_shape(const schema::Transformer& t, const TensorFormats& formats,
                               int tensor_parallel, int pipeline_parallel, int stage);

// Layers of `stage` when `layers` split over `stages` (the first stages take the remainder).
int stage_layers(int layers, int stages, int stage);

// Distinct experts `tokens` tokens route to on average when each picks `k` of `experts` at
// random: experts x (1 - (1 - k/experts)^tokens).
double experts_touched(int experts, int k, int64_t tokens);

}  // namespace clustersim
