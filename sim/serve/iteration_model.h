// The duration of one iteration of a serving replica: one forward pass over the batch's tokens
// (prompt chunks being prefilled and one token per decoding sequence) through every pipeline
// stage, each layer's kernels timed by the compute model at the serving runtime's fitted
// efficiencies, its tensor-parallel all-reduces and the stage-to-stage sends timed by the network
// model, plus the runtime's host overhead:
//
//   stage = sum over the stage's layer kinds of layers x (matmuls(m) + elementwise(m)
//                                                         [+ expert layer overhead])
//           + layers x (prefill attention + decode attention + A all-reduce(m) + layer overhead)
//             (a sliding-window layer's attention over the pairs and context within its window;
//             a compressed sparse attention layer's over its window, compressed entries and
//             indexer: compressed_attention_time.h)
//           [+ output projection of the sequences]
//   iteration = sum of stages + (stages - 1) sends(m) + iteration overhead
//               [+ static prefill overhead, for a static batch's prefill]
//               [+ beam search: its logits (rows x vocabulary) read once, memory bound]
//
// where m is the iteration's token count and A the all-reduces per layer (2, or 1 when attention
// and MLP run in parallel); an all-reduce is its time on the links plus the runtime's
// allreduce_overhead_us. Prefill attention is one causal fused kernel over the iteration's prompt
// chunks (the runtime's context kernel; in TensorRT-LLM one launch for every context request,
// then the generation kernel for the decoding ones: cpp/tensorrt_llm/thop/attentionOp.cpp),
// each chunk at the GPU's fitted fused-attention rate for its keys where the GPU has one (on
// Hopper, TensorRT-LLM's fmha_v2 TMA warp-specialized kernels, of the fitted cuDNN kernel's
// class), else at its flat flash_attention_fraction (ComputeModel::prompt_attention), x the
// fit's compute_fraction. Decode attention reads the KV cache: each KV head once under the
// runtime's grouped-query kernel, else once per query head, the re-reads at the GPU's
// kv_reread_fraction (an FP8 cache's at its fp8_kv_reread_fraction where the fit has one; the
// same cost for the beams of a request reading its shared prompt blocks after the first); a
// latent-attention model's latent once; it takes the longer of that read and its FLOPs at the
// fused-attention rate. A mixture-of-experts layer runs its tokens' experts as grouped GEMMs: the
// experts the iteration's m tokens touch (uniform routing: E (1 - (1 - k/E)^m); an engine of fake
// weights: the same k in the model's first expert layer, one in every later one,
// IterationInputs::fake_weights) each stream their weights once over m k / touched rows (under
// expert parallelism, the busiest rank's experts and copies, expert_rank_load.h; fake weights:
// the first rank's, holding experts 0 .. E / EP - 1), in the
// runtime's kernels for them: rows in tiles of its expert_matmul_row_tile, at the GPU's
// expert_matmul_fraction of the compute rate (ServingGpuFit; absent: 1), and where they issue
// mma.sync (expert_matmuls_sync_mma) at the GPU's sync_mma_fraction of its tensor-core rate. The
// other matmuls fill tiles of serving_row_tile(m) rows, the narrowest that holds the iteration's
// tokens (a decode step of a few sequences is not charged 128 rows of tensor-core work). Matmul
// times are memoized per m; collective times are simulated on the replica's topology
// (net/collective.h) at token counts 1, 2, 4, ... and interpolated linearly between them (each
// algorithm's time is affine in the size).
//
// Immutable after construction (its memo is a cache filled on use); not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/hw/compute_model.h"
#include "sim/io/schema/runtime.pb.h"
#include "sim/net/topology.h"
#include "sim/util/units.h"
#include "sim/workload/inference_shape.h"

namespace clustersim {

// The rows of the tile a serving GEMM of `tokens` rows runs in: the smallest power of two from 16
// that holds them, at most the compute model's 128 (ComputeModel::kTile). TensorRT-LLM's GEMM
// tactics include tiles of 16, 32 and 64 rows for few tokens (its CUTLASS candidates on sm75 and
// later: CtaShape16x128x64, 32x128x64, 64x128x64, 128x128x64; NVIDIA/TensorRT-LLM
// cpp/tensorrt_llm/kernels/cutlass_kernels/cutlass_heuristic.cpp `get_candidate_tiles`), and 16
// is mma.sync's row count (m16n8k16). Without it a decode step at batch 1 would cost 128 rows of
// compute, which on a GPU of few FLOPs per byte (H20, L20, T4) exceeds streaming the weights.
int64_t serving_row_tile(int64_t tokens);

// What one iteration processes.
struct IterationWork {
  int64_t tokens = 0;           // prompt tokens + decoding sequences
  int64_t logits = 0;           // sequences producing a token (decoding + finishing a prompt)
  double attention_pairs = 0;   // query-key pairs of the prompt chunks (causal)
  double decode_context = 0;    // summed context lengths of the decoding sequences
  bool static_prefill = false;  // a static batch's prefill (the runtime's context phase)
  // Beams per request (sim/serve/beam_search.h; 1: no beam search): above 1, every logit row is a
  // beam's, read by the beam-search kernel. (An int32 here, in the bool's padding: the struct,
  // zeroed every iteration, stays within the size the compiler clears with vector stores.)
  int32_t beam_width = 1;
  // Pairs and context in a sliding-window layer: each query's keys capped at the window.
  double window_attention_pairs = 0, window_decode_context = 0;
  // Sum over the prompt chunks of each chunk's pairs over its keys (its end position; in a
  // sliding-window layer, capped at the window): the fused kernel's rate grows with the keys
  // (ComputeModel::prompt_attention).
  double attention_pairs_per_key = 0, window_attention_pairs_per_key = 0;
  // Of decode_context, the keys beams read again from their request's shared prompt blocks (every
  // beam after the first; full-attention layers): re-reads of the same KV-cache bytes by other
  // thread blocks of the masked kernel, at the fit's kv_reread_fraction.
  double beam_shared_rereads = 0;
  // Compressed sparse attention (compressed_attention_time.h): the entries a ratio-4 layer's
  // indexer selects, summed over the prompt chunks' queries and the decoding tokens
  // (indexer_selections in compressed_kv_cache.h); 0 for other models.
  double selected_entries = 0;
};

// Speculative decoding: the query-key pairs of decoding sequences' queries after their first (a
// verification's k draft tokens), which read the same KV cache (IterationWork::decode_context)
// in the same kernel: FLOPs only. Apart from IterationWork, which the scheduler zeroes every
// iteration (two more fields made that a rep stosq: 5% of a sweep).
struct ExtraDecodeQueries {
  double pairs = 0, window_pairs = 0;  // dense layers', sliding-window layers'
};

// Adds a causal prompt chunk of `chunk` tokens after `past` cached ones to `work`: its query-key
// pairs and their sum over its keys (its end position), and the same where each query's keys are
// the last `window` (`chunked_window`: those of its own chunk of `window`; window 0: all).
void add_prompt_chunk(IterationWork* work, int64_t past, int64_t chunk, int window = 0,
                      bool chunked_window = false);

struct IterationInputs {
  const schema::Transformer* model = nullptr;
  TensorFormats formats;
  int tensor_parallel = 1;
  int pipeline_parallel = 1;
  int expert_parallel = 1;  // inside the tensor-parallel group (InferenceShape::expert_parallel)
  const schema::Gpu* gpu = nullptr;
  const schema::Runtime* runtime = nullptr;  // compute-model defaults
  const schema::ServingRuntime* serving = nullptr;
  schema::ServingGpuFit fit;           // this GPU's efficiencies
  const Topology* topology = nullptr;  // holds the replica's GPUs 0 .. tp x pp - 1
  int64_t max_tokens = 8192;           // largest m to sample collectives for
  // The engine's weights are TensorRT-LLM's fake ones (a benchmark engine built without a
  // checkpoint: every parameter drawn as (randn x 2 - 1) x range, so with mean -range, range
  // sqrt(6 / (rows + columns)) for a matrix, 0.1 for a norm's vector or the experts' 3-D
  // tensors). The weights' common mean makes every hidden state nearly the same vector, so the
  // model's first expert layer sends every token to the same k experts; its experts' outputs
  // overflow 16 bits (a down projection's sums reach about 1e6), the next norm turns them into
  // NaN, and from then on the router's logits are NaN: its top-k kernel, comparing with >, keeps
  // its first candidate, expert 0, for every one of a token's k slots. false: tokens route
  // uniformly at random.
  bool fake_weights = false;
  // Attention data parallelism (attention_data_parallel.h): the routed experts' GEMMs and their
  // layer overhead are left out of the iteration (they run on every GPU's tokens gathered:
  // routed_experts()).
  bool routed_experts_apart = false;
};

class IterationModel {
 public:
  // Requires: the model, GPU and runtimes outlive it; the GPU has a peak for the activations'
  // precision; the topology has tp x pp GPUs.
  explicit IterationModel(const IterationInputs& inputs);

  Picoseconds iteration(const IterationWork& work, const ExtraDecodeQueries& extra = {}) const;
  // The forward pass alone: iteration() without the runtime's per-iteration host overhead (a
  // speculative draft's passes, inside the target's iteration).
  Picoseconds forward(const IterationWork& work, const ExtraDecodeQueries& extra = {}) const;
  // One tensor-parallel all-reduce (stage-to-stage send) of `tokens` tokens' hidden states: the
  // simulated time at a sampled power of two (an all-reduce's with the runtime's overhead),
  // interpolated linearly between them; 0 without tensor (pipeline) parallelism.
  Picoseconds allreduce(int64_t tokens) const { return interpolate(allreduce_, tokens); }
  Picoseconds send(int64_t tokens) const { return interpolate(send_, tokens); }
  // Every stage's expert layers' routed-expert GEMMs and their layer overhead for `tokens` tokens
  // routed uniformly, on the busiest expert-parallel rank (uncached).
  Picoseconds routed_experts(int64_t tokens) const;
  // Piecewise-linear interpolation of times sampled at token counts 1, 2, 4, ...; beyond the last
  // sample, extrapolated along the last segment; 0 for no samples or no tokens.
  static Picoseconds interpolate(const std::vector<Picoseconds>& samples, int64_t tokens);

  // Per-GPU shape of the stage with the most weights (memory fit) and of stage s.
  const InferenceShape& largest_stage() const { return shapes_[largest_]; }
  const std::vector<InferenceShape>& stages() const { return shapes_; }
  // Whether decode attention reads each KV head once (the runtime's grouped kernel applies).
  bool grouped_attention() const { return grouped_; }

 private:
  Picoseconds stage_time(const InferenceShape& shape, const IterationWork& work,
                         const ExtraDecodeQueries& extra) const;
  Picoseconds layer_matmuls(const InferenceShape& shape, int64_t m) const;
  // A compressed sparse attention stage's attention, each layer group at its compress ratio.
  Picoseconds compressed_attention(const InferenceShape& shape, const IterationWork& work) const;
  // The last stage's output projection of the iteration's logits (0 on other stages).
  Picoseconds output_projection(const InferenceShape& shape, const IterationWork& work) const;
  // One expert layer's routed-expert grouped GEMMs on a rank running `copies` token copies
  // through `touched` experts, each streaming its weights once, with the layer's routing overhead.
  Picoseconds routed_expert_gemms(const LayerGroup& group, double touched, double copies) const;
  std::vector<Picoseconds> sample_collectives(const IterationInputs& in, bool send) const;

  std::vector<InferenceShape> shapes_;  // per stage
  int largest_ = 0;
  ComputeModel compute_;  // at the activations' precision
  ComputeModel sixteen_;  // output projection (16-bit)
  ComputeModel experts_;  // routed experts' grouped GEMMs (the runtime's kernels for them)
  double weight_bytes_ = 2;
  int64_t vocab_ = 0;  // the model's, for the beam-search kernel
  double kv_reread_fraction_ = 1;  // cost of a KV head's re-read by the masked kernel
  int64_t expert_row_tile_ = ComputeModel::kTile;  // the expert GEMMs' smallest tile of rows
  bool grouped_ = false;
  bool fake_weights_ = false;
  bool routed_experts_apart_ = false;
  Picoseconds layer_overhead_;
  Picoseconds expert_layer_overhead_;  // the fit's, per expert layer
  Picoseconds iteration_overhead_;
  Picoseconds static_prefill_overhead_;
  std::vector<Picoseconds> allreduce_;                     // at 2^i tokens
  std::vector<Picoseconds> send_;                          // stage to stage, at 2^i tokens
  mutable std::vector<std::vector<int64_t>> matmul_memo_;  // [stage][m] ps, -1 unknown
};

}  // namespace clustersim
