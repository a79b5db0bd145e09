// Beam search in the serving simulator, as TensorRT-LLM runs it: what a request of B beams costs
// beside a request of one sequence, and the checks of a scenario's beam widths.
//
// Prefill: a request's prompt runs through the context phase once, whatever its beams; the first
// search picks the B beams' first tokens from its last position's logits (counted as that one
// row: the search's cost is per row of logits). Decode: every
// iteration runs one token per beam, so a decoding request puts B rows into the GEMMs (m =
// requests x beams), B rows into the output projection and B tokens against the in-flight
// batcher's token budget, while counting once against its max_batch_size (requests)
// (NVIDIA/TensorRT-LLM@0a949d31 cpp/tensorrt_llm/batch_manager/microBatchScheduler.cpp: a
// generation request's reqNumTokens is getBeamWidthByIter(), scheduledReqSize counts requests).
// Decode attention: the masked multi-head kernel runs one thread block per (beam, head) and reads
// through the cache indirection (cache_indir: for each beam and position, the beam whose KV holds
// it), so each beam reads its whole history, prompt and generated tokens: B x context keys per
// request. In a paged cache the prompt's full blocks are one copy, so the thread blocks of a
// request's later beams read bytes the first one read: those re-reads cost the GPU's fitted
// kv_reread_fraction, the masked kernel's cost of re-reading KV bytes another thread block read
// (sim/serve/iteration_model.h); the generated tokens and a static batch's per-beam copies are
// read in full. The search itself: a fused softmax and top-k kernel reads each of the B x vocabulary
// logits once per step (cpp/tensorrt_llm/kernels/onlineSoftmaxBeamsearchKernels, the 0.x
// releases' beam_online_softmax_topk kernel: one pass of x[elem] + bias over the vocabulary per
// beam, then 2B candidates per request reduced), memory bound, logits at 4 bytes (its float
// instantiation); its candidates' reduction and the final gatherTree are tens of bytes per beam
// and left out.
//
// KV cache, paged (continuous batching): a request's prompt blocks are shared by its beams
// except the block holding the prompt's last token, which every beam gets a copy of, and every
// block after it (the generated tokens) is a beam's own (KVCacheManager::addSequence: the block
// index unsharedBlockIdx, allocated with shareAmongBeams false, then allocateBlock per beam as
// tokens are generated; getRemainingBlocksToCompletion reserves alike). Static batching
// (gptSession, contiguous cache) tiles the context's KV cache to every beam: B full copies.
#pragma once

#include <cstdint>
#include <string>

#include "sim/io/catalog.h"
#include "sim/io/field_checker.h"
#include "sim/io/schema/serving.pb.h"

namespace clustersim {

// Bytes of one logit the beam-search kernel reads (its float instantiation).
inline constexpr double kBeamLogitBytes = 4;

// Blocks of `block_tokens` that one request of `beams` beams holds in a paged KV cache when each
// beam holds `tokens` tokens of which the first `prompt` are its prompt: the prompt's full blocks
// once, the rest once per beam. One beam: ceil(tokens / block_tokens).
int64_t beam_kv_blocks(int64_t prompt, int64_t tokens, int block_tokens, int beams);

// Bytes the beam-search kernel reads for `rows` logit rows (beams) of `vocab` entries.
inline double beam_search_bytes(int64_t rows, int64_t vocab) {
  return static_cast<double>(rows) * static_cast<double>(vocab) * kBeamLogitBytes;
}

// The beams of a scenario's traffic (absent: 1) and of a benchmark run (absent: 1).
inline int beam_width(const schema::Traffic& traffic) {
  return traffic.has_beam_width() ? traffic.beam_width() : 1;
}
inline int beam_width(const schema::BatchBenchmark& run) {
  return run.has_beam_width() ? run.beam_width() : 1;
}

// Checks the scenario's beam widths (traffic.beam_width, benchmark[i].beam_width): at least 1, at
// most the serving runtime's max_beam_width (absent: no beam search), and not on a disaggregated
// deployment (its hand-off of one sequence's KV cache is what is simulated).
void check_beam_widths(const FieldChecker& root, const Catalog& catalog);

}  // namespace clustersim
