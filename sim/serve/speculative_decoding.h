// Speculative decoding in a serving replica (deployment.speculative_decoding): the draft that
// proposes k tokens per sequence and iteration, what its passes cost, what it holds in memory,
// and how many tokens the target accepts.
//
// One decode iteration of a sequence (Leviathan et al., "Fast Inference from Transformers via
// Speculative Decoding", arXiv:2211.17192; chain drafts as TensorRT-LLM's PyTorch backend runs
// them, NVIDIA/TensorRT-LLM@fbbc05dd docs/source/blogs/tech_blog/
// blog2_DeepSeek_R1_MTP_Implementation_and_Optimization.md, "MTP Eagle"):
//   - the target verifies its last token and the k draft tokens in one forward: k + 1 tokens in
//     the batch's GEMMs (m = sum of k + 1 over the decoding sequences, the weights read once),
//     k + 1 queries over the sequence's KV cache in the generation attention kernel (the cache
//     read once, the FLOPs k + 1 times), k + 1 logits, and k + 1 KV slots written;
//   - it keeps A tokens, A - 1 accepted drafts and its own next token: with each draft accepted
//     with probability alpha given the ones before it, P(A = j) = alpha^(j-1) (1 - alpha) for
//     j <= k and P(A = k + 1) = alpha^k, E[A] = (1 - alpha^(k+1)) / (1 - alpha); drawn per
//     request and round from the traffic's seed (bit-identical for any thread count), never
//     beyond the request's output;
//   - the draft then proposes the next k tokens: a first pass over the A tokens just accepted
//     (writing its own KV cache for them, as TensorRT-LLM's MTP Eagle feeds "all of them along
//     with their corresponding hidden states" to the first module forward), then k - 1 passes of
//     one token per sequence. A prompt chunk also runs through the draft in its first pass (the
//     draft's prefill), and a sequence finishing its prompt drafts its first k tokens then.
// The draft's passes run inside the target's iteration (TensorRT-LLM captures verification and
// drafting in one CUDA graph: one host overhead per iteration). Draft kinds:
//   - a draft model of the catalog: its own layers, embedding and output head, at the target's
//     tensor parallelism or at 1 (draft_tensor_parallel: vLLM allows the two,
//     vllm-project/vllm@002e77c1 vllm/config/speculative.py draft_tensor_parallel_size), its
//     weights and KV cache then on the replica's first GPU, which the memory fit counts;
//   - the target's multi-token-prediction modules: one module per draft pass (a layer of the
//     model's last kind plus its 2h x h projection; the checkpoint's modules loaded, each with its
//     KV cache, one when they share weights), the embedding and output head shared;
//   - EAGLE-style heads: N dense decoder layers of the target's width plus the 2h x h projection
//     per pass, embedding and output head shared.
// A draft attends densely (a sliding window of its model is not applied: an upper bound).
// Memory: the draft's weights beside the target's on every GPU of the replica, its KV cache per
// token added to the target's in the paged pool, and k speculative slots per decoding sequence.
#pragma once

#include <cstdint>
#include <memory>

#include "sim/io/schema/serving.pb.h"
#include "sim/serve/iteration_model.h"

namespace clustersim {

// Speculative decoding's share of one iteration, gathered while the scheduler forms it.
struct DraftWork {
  ExtraDecodeQueries verification;  // the target's: the k draft tokens' queries
  IterationWork first;              // the draft's first pass: accepted tokens and prompt chunks
  ExtraDecodeQueries first_queries;  // the first pass's queries after each sequence's first
  int64_t drafting = 0;         // sequences that draft (decoding, or finishing their prompt)
  double drafting_context = 0;  // their summed contexts after the first pass
};

class SpeculativeDecoder {
 public:
  // `target`: the target's iteration inputs (the draft shares its GPUs, formats, runtime and fit;
  // pipeline_parallel 1); `draft_model`: the catalog's draft model, null for MTP modules or
  // draft heads. Requires: a checked speculative_decoding (speculative_checks.h); k >= 1.
  SpeculativeDecoder(const IterationInputs& target, const schema::SpeculativeDecoding& spec,
                     const schema::Transformer* draft_model, int draft_tokens, uint64_t seed);

  int draft_tokens() const { return k_; }
  // Draft weights and KV cache per token on each GPU of the replica.
  double weight_bytes() const { return weight_bytes_; }
  double kv_bytes_per_token() const { return kv_bytes_per_token_; }

  // Tokens request `request` keeps after its verification number `round` (from 0): a draw of
  // the truncated geometric distribution, 1 .. k + 1, before the cap at its output.
  int accepted(int32_t request, int32_t round) const;
  // Expected tokens per iteration, (1 - alpha^(k+1)) / (1 - alpha).
  double expected_accepted() const;

  // Adds a decoding sequence of `cached` tokens verifying its last token and k drafts to the
  // target's `work` and draft->verification (attention per `window`, `chunked_window` as
  // add_decode), and its draft's first pass over the `accepted` tokens it keeps to `draft`.
  void add_verification(IterationWork* work, DraftWork* draft, int64_t cached, int accepted,
                        int window, bool chunked_window) const;
  // A prompt chunk of `chunk` tokens after `past`: the draft's prefill, and when it ends the
  // prompt (`finishes`) the sequence drafts its first k tokens.
  void add_prompt_chunk(DraftWork* draft, int64_t past, int64_t chunk, bool finishes) const;

  // The draft's passes of one iteration: its first pass, then k - 1 passes of one token per
  // drafting sequence; 0 when there is nothing to draft.
  Picoseconds draft_time(const DraftWork& draft) const;

 private:
  Picoseconds pass(const IterationWork& work, const ExtraDecodeQueries& extra) const;

  schema::Transformer transformer_;  // the draft's layers as a model of their own
  std::unique_ptr<IterationModel> model_;
  ComputeModel projection_compute_;
  int64_t projection_n_ = 0, projection_k_ = 0;  // the 2h x h input projection per rank; 0: none
  double projection_weight_bytes_ = 2;
  int k_ = 1;
  double alpha_ = 0;
  uint64_t seed_ = 1;
  double weight_bytes_ = 0;
  double kv_bytes_per_token_ = 0;
};

}  // namespace clustersim
