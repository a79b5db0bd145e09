// A compressed sparse attention layer's kernels in a serving iteration.
#include "sim/serve/compressed_attention_time.h"

#include <algorithm>

namespace clustersim {
namespace {

constexpr double kScoreBytes = 4;  // the indexer's head-weighted scores, FP32

// FlashMLA's sparse decoding kernel runs a query's heads in blocks of 64 MMA rows, 64 or 128 heads
// (deepseek-ai/FlashMLA@9241ae3ef9bac614dd25e45e507e089f888280e0
// csrc/sm90/decode/sparse_fp8/config.h: NUM_HEADS 64 or 128, BLOCK_M 64; csrc/api/
// sparse_decode.h: SM100 head64, head64 x 2 and head128 kernels), and vLLM pads a rank's heads up
// to them (vllm-project/vllm@0a291a2e1074b13971361df76245548a4ea4a77d vllm/model_executor/layers/
// deepseek_v4_attention.py: padded_heads 64 when num_heads <= 64, else 128): under tensor
// parallelism a rank's 16 or 8 heads cost the kernel 64 heads' MMAs a gathered entry.
constexpr int kDecodeHeadBlock = 64;

// The heads the gather kernel computes for `query_heads` of a rank: the next multiple of 64.
int gather_kernel_heads(int query_heads) {
  return (query_heads + kDecodeHeadBlock - 1) / kDecodeHeadBlock * kDecodeHeadBlock;
}

}  // namespace

CompressedAttentionWork compressed_attention_work(const InferenceShape& shape,
                                                  const IterationWork& work, int ratio) {
  const double f = shape.decode_attention_flops_per_pair;
  CompressedAttentionWork w;
  // The window's prompt pairs in the causal kernel; at ratio 128 with all the compressed entries.
  double pairs = work.window_attention_pairs, per_key = work.window_attention_pairs_per_key;
  double read = work.window_decode_context;  // entries the decoding tokens read
  if (ratio == 128) {
    pairs += work.attention_pairs / ratio;
    per_key += work.attention_pairs_per_key / ratio;
    read += work.decode_context / ratio;
  } else if (ratio == 4) {
    read += work.selected_entries;  // the prompt queries' gathered by index as the tokens'
    const double scored = (work.attention_pairs + work.decode_context) / ratio;
    w.indexer_bytes =
        work.decode_context / ratio * shape.indexer_key_bytes + kScoreBytes * scored;
    w.indexer_flops = 2.0 * shape.index_heads * shape.index_head_dim * scored;
  }
  w.prompt_flops = pairs * f;
  w.prompt_flops_per_key = per_key * f;
  w.read_bytes = read * shape.compressed_entry_bytes;
  w.read_flops = read * f * gather_kernel_heads(shape.query_heads) / shape.query_heads;
  return w;
}

Picoseconds compressed_attention_time(const ComputeModel& compute, const InferenceShape& shape,
                                      const IterationWork& work, int ratio) {
  const CompressedAttentionWork w = compressed_attention_work(shape, work, ratio);
  Picoseconds t;
  if (w.prompt_flops > 0) {
    t += compute.prompt_attention(w.prompt_flops, w.prompt_flops_per_key, shape.head_dim);
  }
  if (w.read_bytes > 0) {
    t += std::max(compute.memory_bound(w.read_bytes), compute.fused_attention(w.read_flops));
  }
  if (w.indexer_flops > 0) {
    t += std::max(compute.memory_bound(w.indexer_bytes), compute.fused_attention(w.indexer_flops));
  }
  return t;
}

}  // namespace clustersim
