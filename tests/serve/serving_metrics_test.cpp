// Tests of sim/serve/serving_metrics: the latency summaries a served traffic reports.
#include "sim/serve/serving_metrics.h"

#include <catch2/catch.hpp>

#include <vector>

namespace clustersim {
namespace {

TEST_CASE("a latency summary gives nearest-rank percentiles and the mean benchmarks report") {
  std::vector<double> values = {10, 1, 3, 2, 4};
  const Percentiles p = percentiles(&values);
  CHECK(p.p50 == 3);   // the 3rd of 5
  CHECK(p.p90 == 10);  // ceil(4.5) = the 5th
  CHECK(p.p99 == 10);
  CHECK(p.mean == 4);  // 20 / 5: the one slow request lifts the mean above the median
}

TEST_CASE("the mean of a skewed latency is not its median") {
  // A queue building up: request k waits k units. Benchmarks' average TTFT is the mean (49.5
  // here), which a median (49) or p99 (98) does not give.
  std::vector<double> waits;
  for (int k = 0; k < 100; ++k) waits.push_back(k);
  const Percentiles p = percentiles(&waits);
  CHECK(p.mean == Approx(49.5).epsilon(1e-12));
  CHECK(p.p50 == 49);
  CHECK(p.p99 == 98);
}

}  // namespace
}  // namespace clustersim
