// Fused attention's thread blocks on the SMs: the closed forms against a list schedule, and the
// scale against the fitted benchmark.
#include "sim/hw/attention_schedule.h"

#include <catch2/catch.hpp>
#include <functional>
#include <queue>
#include <vector>

namespace clustersim {
namespace {

// The list schedule itself: blocks in launch order (query tile by query tile, every batch-head
// of a tile before the next), each to the SM that frees first; the busy fraction of the SMs.
double list_schedule(int64_t batch_heads, int64_t tiles, bool causal, int sms) {
  std::priority_queue<double, std::vector<double>, std::greater<>> free_at;
  for (int i = 0; i < sms; ++i) free_at.push(0);
  double work = 0, end = 0;
  for (int64_t tile = 0; tile < tiles; ++tile) {
    for (int64_t b = 0; b < batch_heads; ++b) {
      const double w = causal ? static_cast<double>(tile + 1) : static_cast<double>(tiles);
      const double done = free_at.top() + w;
      free_at.pop();
      free_at.push(done);
      work += w;
      end = std::max(end, done);
    }
  }
  return work / (end * sms);
}

AttentionKernel square(int64_t batch_heads, int64_t tokens, bool causal) {
  return AttentionKernel{batch_heads, tokens, tokens, 128, causal};
}

TEST_CASE("without a mask the blocks fill whole waves") {
  // 16 x 32 = 512 blocks on 132 SMs: 4 waves of 528 slots.
  CHECK(attention_busy_fraction(square(16, 4096, false), 132) == Approx(512.0 / 528));
  // One block per SM and fewer: the idle SMs count.
  CHECK(attention_busy_fraction(square(4, 2048, false), 132) == Approx(64.0 / 132));
  CHECK(attention_busy_fraction(square(132, 128, false), 132) == Approx(1.0));
}

TEST_CASE("under a causal mask the largest blocks, launched last, set the end") {
  // Fewer blocks than SMs: the kernel lasts as long as the largest block (all key tiles).
  // 4 heads x 16 tiles: work 4 x 136 tiles, the largest 16.
  CHECK(attention_busy_fraction(square(4, 2048, true), 132) == Approx(4.0 * 136 / (16.0 * 132)));
  // Many blocks: within 0.2% of the list schedule, 512 to 16,384 blocks.
  for (const auto& [heads, tokens] : std::vector<std::pair<int64_t, int64_t>>{
           {16, 4096}, {16, 8192}, {32, 8192}, {8, 32768}, {64, 8192}, {16, 32768},
           {128, 16384}}) {
    const int64_t tiles = tokens / kAttentionTile;
    CAPTURE(heads, tokens);
    CHECK(attention_busy_fraction(square(heads, tokens, true), 132) ==
          Approx(list_schedule(heads, tiles, true, 132)).epsilon(0.002));
  }
}

TEST_CASE("causal blocks of fewer queries than keys visit the keys before them") {
  // Context parallelism's step: 2 query tiles at the end of 4 key tiles see 3 and 4 key tiles;
  // one head on many SMs: the larger sets the end.
  CHECK(attention_busy_fraction(AttentionKernel{1, 256, 512, 128, true}, 132) ==
        Approx((3.0 + 4.0) / (4.0 * 132)));
}

TEST_CASE("the benchmark's own kernels run at scale 1, fewer batch-heads never faster") {
  // The FlashAttention benchmark: 16,384 tokens a batch of width 2048 (16 heads of 128).
  for (const int64_t tokens : {512, 2048, 8192, 16384}) {
    for (const bool causal : {false, true}) {
      CAPTURE(tokens, causal);
      CHECK(attention_schedule_scale(square(16 * 16384 / tokens, tokens, causal), 132) ==
            Approx(1.0));
    }
  }
  // One sequence of 4096 tokens under a causal mask: 4 heads lose most, 64 match the benchmark.
  const double four = attention_schedule_scale(square(4, 4096, true), 132);
  const double sixteen = attention_schedule_scale(square(16, 4096, true), 132);
  CHECK(four < sixteen);
  CHECK(sixteen < 1.0);
  CHECK(attention_schedule_scale(square(64, 4096, true), 132) == Approx(1.0));
  // No SMs (an accelerator without them): no schedule term.
  CHECK(attention_schedule_scale(square(4, 4096, true), 0) == 1.0);
}

}  // namespace
}  // namespace clustersim
