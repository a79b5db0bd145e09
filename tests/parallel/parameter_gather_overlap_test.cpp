// The bucketed parameter all-gather against the forwards it feeds: the first bucket's gather
// wholly exposed, then max(g, f / n) a segment (the closed form g + (n - 1) (g - f / n) where the
// gathers outlast the segments), the CTAs' slowdown where they do not.
#include "sim/parallel/parameter_gather_overlap.h"

#include <catch2/catch.hpp>

namespace clustersim {
namespace {

Picoseconds gather_us(int64_t n) { return Picoseconds::from_microseconds(static_cast<double>(n)); }

constexpr int kGatherB200Sms = 148;  // topologies/gpus.textproto

TEST_CASE("one bucket's gather is waited for whole, however long the forward") {
  CHECK(parameter_gather_exposed(gather_us(10000), 1, gather_us(100000), kGatherB200Sms) ==
        gather_us(10000));
  CHECK(parameter_gather_exposed(gather_us(10000), 1, gather_us(100), 0) == gather_us(10000));
}

TEST_CASE("gathers longer than their layers' forwards expose g + (n - 1) (g - f / n)") {
  // 32 buckets of 2 ms against a 48 ms forward (1.5 ms a bucket's layers), no SMs taken:
  // 2 + 31 x 0.5 = 17.5 ms.
  CHECK(parameter_gather_exposed(gather_us(64000), 32, gather_us(48000), 0) == gather_us(17500));
  // On a B200's SMs the 31 later gathers (62 ms) still outlast the 46.5 ms of forward beside
  // them slowed by their CTAs (46.5 x 148 / 116 = 59.3 ms): the same 17.5 ms.
  CHECK(parameter_gather_exposed(gather_us(64000), 32, gather_us(48000), kGatherB200Sms) ==
        gather_us(17500));
}

TEST_CASE("gathers shorter than their layers' forwards expose the first and the CTAs' share") {
  // 4 buckets of 1 ms beside a 40 ms forward on 128 SMs: 1 + 3 x 32 / 128 = 1.75 ms.
  CHECK(parameter_gather_exposed(gather_us(4000), 4, gather_us(40000), 128) == gather_us(1750));
  // Finer buckets at the same total hide more: 8 of 0.5 ms, 0.5 + 3.5 x 0.25 = 1.375 ms.
  CHECK(parameter_gather_exposed(gather_us(4000), 8, gather_us(40000), 128) == gather_us(1375));
}

}  // namespace
}  // namespace clustersim
