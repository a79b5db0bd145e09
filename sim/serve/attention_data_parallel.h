// The iteration time and per-GPU memory of a replica under attention data parallelism
// (TensorRT-LLM's enable_attention_dp with expert parallelism, its "DEP" deployments): each of
// the replica's n GPUs runs its own batch through attention and the dense (non-routed-expert)
// matrices, whole on every GPU (tensor parallelism 1: TensorRT-LLM builds the dense MLPs and the
// shared experts at mlp_tp_size 1 under attention DP, modeling_deepseekv3.py
// _compute_mlp_tp_size); the routed experts sit E / n on each GPU (expert parallelism n), and
// every MoE layer gathers the n GPUs' tokens to them and scatters their outputs back
// (moe_token_exchange.h: an all-gather of the tokens' quantized activations with their routing
// before the experts and a reduce-scatter of the 16-bit outputs after, or an all-to-all of each
// token to the GPUs of its experts and back). The GPUs meet at every MoE layer's exchange, so
// each layer waits for the slowest GPU's attention and dense part:
//
//   iteration = max over GPUs g of iteration_TP1(batch_g)      (attention, dense matrices, shared
//                                                               experts, router, output head,
//                                                               the runtime's overheads)
//               + expert layers x (dispatch + combine of the GPUs' tokens)
//               + routed experts(M) on the busiest of the n expert ranks (expert_rank_load.h)
//
// where M is the tokens of all GPUs, a GPU with none counting the one token of the dummy
// generation request TensorRT-LLM pads it with (py_executor's attention-DP padding, so that every
// rank joins the collectives). With CUDA graphs padded (scheduler.cuda_graph_batch_sizes), an
// iteration in which every GPU only decodes runs one captured graph size on all of them: the
// smallest size holding the largest GPU batch (NVIDIA/TensorRT-LLM tensorrt_llm/_torch/pyexecutor
// _get_padded_batch, in model_engine.py and later cuda_graph_runner.py alike: the ranks all-gather
// their batch sizes and pad to the largest, then to the captured size), each GPU's batch topped
// up with dummy sequences of one cached token (cuda_graph_padding.h), which run every matmul row,
// logit and expert token a real sequence does; an iteration with any prompt runs unpadded
// (eagerly). The max of the sums equals the sum over layers of each layer's max when one GPU is
// the slowest in every layer (every layer alike); where a model mixes layer kinds
// (sliding-window and full attention, dense first layers) and different GPUs are the slowest in
// different kinds, the true lockstep is slower by at most that difference.
// The exchange is simulated on the replica's topology (moe_token_exchange.h).
//
// Memory per GPU: the TP 1 weights less the routed experts' (n - 1) / n; the KV cache of its own
// requests at TP 1 (every head); the runtime's memory at tensor parallelism n; and a workspace
// for the gathered tokens, n x the per-GPU token budget at the TP 1 bytes per token (the MoE's
// workspace is sized for every gathered token's k copies at the whole expert width, TensorRT-LLM's
// moe_max_num_tokens defaulting to max_num_tokens x the attention-DP size).
//
// Immutable after construction (its models' memos are caches); not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/serve/cuda_graph_padding.h"
#include "sim/serve/iteration_model.h"
#include "sim/serve/moe_token_exchange.h"

namespace clustersim {

class AttentionDataParallelModel {
 public:
  // `in`: the replica's inputs with tensor_parallel = expert_parallel = n >= 2, pipeline 1, a
  // mixture of experts, the topology holding GPUs 0 .. n - 1, and max_tokens the per-GPU token
  // budget. `graph_batch_sizes`: the captured CUDA-graph batch sizes a decode-only iteration is
  // padded to (increasing, none above the per-GPU max_batch; cuda_graph_padding.h), empty: none.
  // `exchange`: the MoE layers' token exchange, resolved (MOE_ALL_GATHER or MOE_ALL_TO_ALL).
  explicit AttentionDataParallelModel(const IterationInputs& in,
                                      std::vector<int64_t> graph_batch_sizes = {},
                                      schema::MoeTokenExchange exchange = schema::MOE_ALL_GATHER);

  int ranks() const { return ranks_; }
  // One GPU's attention and dense part at tensor parallelism 1 (routed experts apart).
  const IterationModel& rank_model() const { return rank_; }
  // The lockstep iteration of the GPUs' batches (one work per GPU, empty: the dummy request).
  // Requires: works.size() == ranks(), at least one with tokens.
  Picoseconds iteration(const std::vector<IterationWork>& works) const;
  // One MoE layer's exchange of the GPUs' tokens (tokens[g] on GPU g): to the experts (their
  // activations and routing) and their outputs back, each with the runtime's kernel overhead.
  const MoeTokenExchange& exchange() const { return exchange_; }
  Picoseconds dispatch(const std::vector<int64_t>& tokens) const {
    return exchange_.dispatch(tokens);
  }
  Picoseconds combine(const std::vector<int64_t>& tokens) const {
    return exchange_.combine(tokens);
  }
  // The batch every GPU runs when the iteration replays a padded CUDA graph: the smallest
  // captured size holding the largest of the GPUs' batches (an idle GPU's dummy request counts
  // one) when every GPU only decodes; 0 when the iteration runs unpadded.
  int64_t graph_batch(const std::vector<IterationWork>& works) const;
  // Every expert layer's routed-expert GEMMs on the busiest rank for `tokens` gathered tokens.
  Picoseconds routed_experts(int64_t tokens) const;
  // Bytes each token sends to the experts (activations in the matmul precision, FP4's block
  // scales, and its k expert ids and weights) and receives back (16-bit).
  double dispatch_bytes_per_token() const { return exchange_.dispatch_bytes_per_token(); }
  double combine_bytes_per_token() const { return exchange_.combine_bytes_per_token(); }
  int expert_layers() const { return expert_layers_; }

  // Per GPU.
  double weight_bytes() const { return weight_bytes_; }
  double kv_bytes_per_token() const { return rank_.largest_stage().kv_bytes_per_token; }
  // Workspace bytes per token of the per-GPU budget (for all n GPUs' gathered tokens).
  double workspace_bytes_per_token() const {
    return ranks_ * rank_.largest_stage().activation_bytes_per_token;
  }

 private:
  int ranks_ = 1;
  IterationModel rank_;     // TP 1, EP 1, routed experts apart
  IterationModel experts_;  // TP n, EP n: the routed experts whole, E / n per GPU
  int expert_layers_ = 0;
  double weight_bytes_ = 0;
  MoeTokenExchange exchange_;
  CudaGraphPadding graphs_;  // each GPU's batch, once padded to the largest GPU's
  mutable std::vector<int64_t> experts_memo_;  // [gathered tokens] ps, -1 unknown
};

}  // namespace clustersim
