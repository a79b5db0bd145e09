// Tests of sim/workload/expert_rank_load: the busiest expert-parallel rank under random routing,
// against closed forms, the bounds every routing obeys, and a seeded simulation of the routing.
#include "sim/workload/expert_rank_load.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "sim/workload/inference_shape.h"

namespace clustersim {
namespace {

// E[max] of independent binomials, by hand: one trial at 1/2 on two ranks, max 1 unless both
// miss, 1 - 1/4; two trials at 1/8 on eight ranks, sum over x of 1 - F(x)^8 with F(0) = (7/8)^2,
// F(1) = 1 - 1/64; a single rank's maximum is its mean.
TEST_CASE("the expected maximum of binomials matches its closed form") {
  CHECK(expected_binomial_maximum(1, 0.5, 2) == Approx(0.75).epsilon(1e-12));
  const double f0 = 0.765625, f1 = 1 - 1.0 / 64;
  CHECK(expected_binomial_maximum(2, 0.125, 8) ==
        Approx(2 - std::pow(f0, 8) - std::pow(f1, 8)).epsilon(1e-12));
  CHECK(expected_binomial_maximum(100000, 0.3, 1) == Approx(30000).epsilon(1e-9));
  CHECK(expected_binomial_maximum(40, 1.0, 4) == 40);
  CHECK(expected_binomial_maximum(40, 0.0, 4) == 0);
}

// Without expert parallelism one rank runs the whole layer: exactly the experts m tokens touch and
// their m k copies, the figures the serving iteration model used before expert parallelism.
TEST_CASE("at EP 1 the busiest rank is the whole layer") {
  for (int64_t m : {1, 7, 64, 4096}) {
    const ExpertRankLoad load = busiest_expert_rank(256, 8, 1, m);
    CHECK(load.experts == experts_touched(256, 8, m));
    CHECK(load.copies == static_cast<double>(m) * 8);
  }
}

// Bounds every routing obeys: Mixtral's 8 experts on 8 ranks, one token: its 2 copies land on two
// ranks, one each, and each rank holds one expert.
TEST_CASE("the busiest rank stays within what every routing obeys") {
  const ExpertRankLoad one = busiest_expert_rank(8, 2, 8, 1);
  CHECK(one.experts == 1);
  CHECK(one.copies == 1);
  for (int64_t m : {1, 3, 16, 256, 8192}) {
    for (int ep : {2, 4, 8}) {
      const ExpertRankLoad load = busiest_expert_rank(128, 8, ep, m);
      INFO("m " << m << " EP " << ep);
      CHECK(load.copies >= std::ceil(m * 8.0 / ep));
      CHECK(load.copies <= static_cast<double>(m) * 8);
      CHECK(load.experts <= 128 / ep);
      CHECK(load.experts >= experts_touched(128, 8, m) / ep - 1e-9);
    }
  }
}

// A large batch spreads evenly: at 65,536 tokens DeepSeek-V3's busiest of 8 ranks runs within 1%
// of an even share of the copies (its standard deviation sqrt(m k / 8 x 7/8) is 0.18% of it), and
// holds all its 32 experts; the busiest rank's excess over the even share falls with the batch.
TEST_CASE("the busiest rank's excess falls as the batch grows") {
  const ExpertRankLoad large = busiest_expert_rank(256, 8, 8, 65536);
  CHECK(large.copies / (65536.0 * 8 / 8) == Approx(1).margin(0.01));
  CHECK(large.copies > 65536.0 * 8 / 8);
  CHECK(large.experts == Approx(32).epsilon(1e-9));
  double previous = 1e9;
  for (int64_t m : {8, 64, 512, 4096}) {
    const double excess = busiest_expert_rank(256, 8, 8, m).copies / (m * 8.0 / 8);
    CHECK(excess < previous);
    previous = excess;
  }
}

// A seeded simulation of the routing (each token picks k distinct experts uniformly, experts
// E / EP per rank, contiguous): the mean over draws of the busiest rank's distinct experts and
// copies. The closed form ignores the ranks' fixed total and a token's distinct experts; it stays
// within 3% for DeepSeek-V3, Qwen3-235B, gpt-oss-120b and Mixtral at decode and prefill batches.
TEST_CASE("the busiest rank matches a simulation of random routing") {
  struct Case {
    int experts, k, ep;
    int64_t tokens;
  };
  for (const Case& c : {Case{256, 8, 8, 1}, Case{256, 8, 8, 8}, Case{256, 8, 8, 64},
                        Case{128, 8, 8, 32}, Case{128, 8, 4, 32}, Case{128, 4, 8, 16},
                        Case{8, 2, 8, 16}, Case{8, 2, 2, 16}, Case{8, 2, 2, 256}}) {
    std::mt19937_64 random(1);
    std::vector<int> ids(static_cast<size_t>(c.experts));
    const int local = c.experts / c.ep, draws = 2000;
    double experts = 0, copies = 0;
    for (int d = 0; d < draws; ++d) {
      std::vector<std::set<int>> touched(static_cast<size_t>(c.ep));
      std::vector<int> count(static_cast<size_t>(c.ep), 0);
      for (int64_t t = 0; t < c.tokens; ++t) {
        std::iota(ids.begin(), ids.end(), 0);
        for (int j = 0; j < c.k; ++j) {  // a partial Fisher-Yates shuffle: k distinct experts
          std::uniform_int_distribution<int> pick(j, c.experts - 1);
          std::swap(ids[static_cast<size_t>(j)], ids[static_cast<size_t>(pick(random))]);
          const int expert = ids[static_cast<size_t>(j)], rank = expert / local;
          touched[static_cast<size_t>(rank)].insert(expert);
          ++count[static_cast<size_t>(rank)];
        }
      }
      size_t most = 0;
      for (const auto& s : touched) most = std::max(most, s.size());
      experts += static_cast<double>(most);
      copies += *std::max_element(count.begin(), count.end());
    }
    const ExpertRankLoad load = busiest_expert_rank(c.experts, c.k, c.ep, c.tokens);
    INFO("E " << c.experts << " k " << c.k << " EP " << c.ep << " m " << c.tokens);
    CHECK(load.experts == Approx(experts / draws).epsilon(0.03));
    CHECK(load.copies == Approx(copies / draws).epsilon(0.03));
  }
}

}  // namespace
}  // namespace clustersim
