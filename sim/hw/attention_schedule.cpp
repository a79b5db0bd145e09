// Fused attention's thread blocks on the SMs (sim/hw/attention_schedule.h).
#include "sim/hw/attention_schedule.h"

#include <algorithm>
#include <cmath>

#include "sim/util/check.h"

namespace clustersim {

namespace {

// The busy fraction of `batch_heads` (fractional for the benchmark's reference at long keys)
// problems of `queries` x `keys` on `sms` SMs.
double busy_fraction(double batch_heads, int64_t queries, int64_t keys, bool causal, int sms) {
  CLUSTERSIM_CHECK(sms >= 1, "an attention schedule needs SMs");
  if (batch_heads <= 0 || queries <= 0 || keys <= 0) return 1;
  const int64_t query_tiles = (queries + kAttentionTile - 1) / kAttentionTile;
  const int64_t key_tiles = (keys + kAttentionTile - 1) / kAttentionTile;
  const double blocks = batch_heads * static_cast<double>(query_tiles);
  if (!causal) {
    const double waves = std::ceil(blocks / sms);
    return blocks / (waves * sms);
  }
  // Query tile i's last query sits at key position keys - queries + (i + 1) 128 - 1.
  double tiles_visited = 0;
  for (int64_t i = 0; i < query_tiles; ++i) {
    const int64_t last_key = std::min(keys, keys - queries + (i + 1) * kAttentionTile);
    tiles_visited += static_cast<double>(
        std::clamp<int64_t>((last_key + kAttentionTile - 1) / kAttentionTile, 1, key_tiles));
  }
  const double work = batch_heads * tiles_visited;
  const double largest = static_cast<double>(key_tiles);
  const double makespan = std::max(largest, work / sms + largest / 2);
  return work / (makespan * sms);
}

}  // namespace

double attention_busy_fraction(const AttentionKernel& kernel, int sms) {
  return busy_fraction(static_cast<double>(kernel.batch_heads), kernel.queries, kernel.keys,
                       kernel.causal, sms);
}

double attention_schedule_scale(const AttentionKernel& kernel, int sms) {
  if (sms <= 0 || kernel.keys <= 0 || kernel.head_dim <= 0) return 1;
  // The benchmark: 16,384 tokens a batch of width 2048, sequences as long as the keys.
  const double benchmark_batch_heads =
      16384.0 / static_cast<double>(kernel.keys) * 2048.0 / kernel.head_dim;
  return attention_busy_fraction(kernel, sms) /
         busy_fraction(benchmark_batch_heads, kernel.keys, kernel.keys, kernel.causal, sms);
}

}  // namespace clustersim
