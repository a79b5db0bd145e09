// Tests of Megatron-Bridge's DeepSeek V4 FLOPs formula against the figures its 26.08 table prints.
#include "sim/workload/bridge_dsv4_flops.h"

#include <catch2/catch.hpp>

#include "tests/testing/shipped_catalog.h"

namespace clustersim {
namespace {

const schema::Transformer& flash() {
  return testing::shipped_catalog().models().find("deepseek-v4-flash")->value->transformer();
}

TEST_CASE("Megatron-Bridge's DeepSeek V4 formula gives Flash's 90.78 GFLOP a token at 4096") {
  // flop_utils.py dsv4_hybrid, x 3: 44 layers (the MTP module's window-only), 3 of ratio 0, 21 of
  // ratio 4, 20 of ratio 128; h 4096, 64 heads of 512 (64 rotary), ranks 1024, 8 groups.
  const double h = 4096, a = 64, v = 512, s = 4096, q = 1024, o = 1024;
  const double projections = 44 * (q * (h + a * v + 1) + h * v + v + a * v * o + 8 * o * h);
  const double selected = 384;  // min(512, s/4) x (1 - 512 x 4 / (2 s))
  const double attention = 3 * a * 128 * v * 2 + 21 * a * (128 + selected) * v * 2 +
                           20 * a * 128 * v * 2;
  const double compressors = 21 * h * 2 * v * 2 + 20 * h * v * 2;
  const double indexer = 21 * (h * 2 * 128 * 2 + q * 64 * 128 + h * 64);
  const double quadratic = s * (20 * a * v / 128 + 21 * 64 * 128 / 4);
  const double experts = 44 * 2 * h * 2048 * 3 * 7;
  const double published = 3 * (2 * (projections + attention + compressors + indexer) +
                                2 * quadratic + experts + 2 * (3 * h + 2 * h * h) +
                                2 * h * 129280 * 2);
  const TransformerFlops bridge = bridge_dsv4_flops(flash(), 4096, 1);
  CHECK(bridge.model_per_token() == Approx(published));
  CHECK(bridge.model_per_token() == Approx(90.78147e9).epsilon(1e-6));
  // The rows: DGX-GB300 748 TFLOP/s at 8,224 tokens/s per GPU, DGX-GB200 706 at 7,776 (the
  // formula's figures to 0.2%: the table rounds the tokens/s).
  CHECK(bridge.model_per_token() * 8224 == Approx(748e12).epsilon(0.002));
  CHECK(bridge.model_per_token() * 7776 == Approx(706e12).epsilon(0.002));
  // Only the ratio-128 attention and the indexer's scores grow with the sequence.
  CHECK(3 * bridge.num_layers * bridge.attention_forward_per_token == Approx(3 * 2 * quadratic));
}

TEST_CASE("Megatron-Bridge's DeepSeek V4 formula selects min(top-k, s/4) entries, fewer causally") {
  // At s = 1024 the 256 compressed entries are all selected: c = 256 (1 - 1024 / 2048) = 128,
  // against 384 at 4096; the ratio-4 layers' attention loses 21 x 64 x 256 x 512 x 2 x 2 x 3.
  const schema::Transformer& t = flash();
  const double short_seq = bridge_dsv4_flops(t, 1024, 1).model_per_token();
  const double long_seq = bridge_dsv4_flops(t, 4096, 1).model_per_token();
  const double quadratic_per_s = 2 * (20 * 64 * 512 / 128.0 + 21 * 64 * 128 / 4.0);
  CHECK(long_seq - short_seq ==
        Approx(3 * (21 * 64 * 256 * 512 * 2.0 * 2 + (4096 - 1024) * quadratic_per_s)));
}

}  // namespace
}  // namespace clustersim
