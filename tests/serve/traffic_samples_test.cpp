// Tests of sim/serve/traffic_samples: one sample is the traffic as written; several are
// independent draws whose row reports medians and worst p99s; a deployment meets the objectives
// only on every sample, and the rate search over samples never exceeds any one sample's.
#include "sim/serve/traffic_samples.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <set>

#include "sim/serve/serving_rows.h"
#include "sim/serve/traffic.h"
#include "sim/util/number_format.h"
#include "sim/util/splitmix64.h"
#include "tests/serve/serve_fixture.h"

namespace clustersim {
namespace {

// Llama-3-8B chat on one A10G near its load: the p99 TTFT of 40 s of traffic moves with the seed.
std::string chat(const std::string& extra) {
  return R"(model: "llama3-8b"
deployment {
  instance: "aws.g5.xlarge"
  quantization { weights: INT8 }
  scheduler { batching: CONTINUOUS max_batch_size: 64 max_tokens_per_iteration: 2048 chunked_prefill: true }
}
traffic {
  rate_per_s: 4
  duration_s: 40
  warmup_s: 5
  input_tokens { lognormal { median: 400 sigma: 0.8 max: 4096 } }
  output_tokens { lognormal { median: 200 sigma: 0.6 max: 1024 } }
  seed: 7
}
)" + extra;
}

constexpr int kSamples = 6;

// The scenario's prices (its billing modes: ON_DEMAND).
std::unique_ptr<ServingPrices> prices_of(const LoadedServingScenario& loaded) {
  Diagnostics diagnostics;
  return load_serving_prices(loaded, testing::shipped_catalog(), nullptr, &diagnostics);
}

TEST_CASE("sample 0 is the traffic as written and the others have distinct derived seeds") {
  CHECK(traffic_sample_seed(7, 0) == 7);
  CHECK(traffic_sample_seed(7, 3) == splitmix64(7 ^ splitmix64(3)));
  std::set<uint64_t> seeds;
  for (int k = 0; k < kMaxTrafficSamples; ++k) seeds.insert(traffic_sample_seed(1, k));
  CHECK(seeds.size() == kMaxTrafficSamples);
  schema::Traffic unseeded;
  unseeded.set_rate_per_s(1);
  CHECK(traffic_sample(unseeded, 0).seed() == 1);  // traffic.seed absent: 1
  CHECK(traffic_sample(unseeded, 2).seed() == traffic_sample_seed(1, 2));
  // Each sample draws its own requests: the same count on average, other arrivals.
  unseeded.set_duration_s(100);
  unseeded.mutable_input_tokens()->set_fixed(10);
  unseeded.mutable_output_tokens()->set_fixed(10);
  const std::vector<Request> a = generate_requests(traffic_sample(unseeded, 0), 1);
  const std::vector<Request> b = generate_requests(traffic_sample(unseeded, 1), 1);
  CHECK(a.size() == generate_requests(unseeded, 1).size());
  CHECK(a.front().arrival_s == generate_requests(unseeded, 1).front().arrival_s);
  CHECK(a.front().arrival_s != b.front().arrival_s);
}

TEST_CASE("one sample gives the single evaluator's evaluation and rows unchanged") {
  auto t = testing::load_serving_text(chat("slo { p99_ttft_ms: 400 }\n"));
  REQUIRE(t->loaded);
  const Catalog& catalog = testing::shipped_catalog();
  const ServingConfiguration c = ServingSpace(*t->loaded).at(0);
  ServingEvaluator single(catalog, *t->loaded);
  SampledServingEvaluator sampled(catalog, *t->loaded, 1);
  const ServingEvaluation a = single.evaluate(c), b = sampled.evaluate(c);
  REQUIRE(a.metrics);
  CHECK_FALSE(b.spread);
  CHECK(b.metrics->ttft_ms.p99 == a.metrics->ttft_ms.p99);
  CHECK(b.metrics->output_tokens_per_s == a.metrics->output_tokens_per_s);
  CHECK(b.slo_violation == a.slo_violation);
  const std::vector<ResultRow> rows = make_serving_rows(c, b, *prices_of(*t->loaded), std::nullopt);
  REQUIRE(rows.size() == 1);
  for (const ResultRow& row : rows) CHECK(row.size() == serving_columns().size());
  CHECK(single.max_rate_scale(c) == sampled.max_rate_scale(c));
}

TEST_CASE("a deployment one sample meets and another misses fails, met on k of N") {
  const Catalog& catalog = testing::shipped_catalog();
  // Each sample's p99 TTFT without an objective, then an objective between the lowest and highest.
  auto free = testing::load_serving_text(chat(""));
  REQUIRE(free->loaded);
  const ServingConfiguration c0 = ServingSpace(*free->loaded).at(0);
  std::vector<double> p99;
  for (int k = 0; k < kSamples; ++k) {
    const ServingEvaluation e = ServingEvaluator(catalog, *free->loaded, k).evaluate(c0);
    REQUIRE(e.metrics);
    p99.push_back(e.metrics->ttft_ms.p99);
  }
  const double low = *std::min_element(p99.begin(), p99.end());
  const double high = *std::max_element(p99.begin(), p99.end());
  INFO("p99 TTFT over samples from " << low << " to " << high << " ms");
  REQUIRE(low < high);
  const double limit = (low + high) / 2;
  const int meeting =
      static_cast<int>(std::count_if(p99.begin(), p99.end(), [&](double v) { return v <= limit; }));
  REQUIRE(meeting > 0);
  REQUIRE(meeting < kSamples);

  auto t = testing::load_serving_text(chat("slo { p99_ttft_ms: " + format_number(limit) + " }\n"));
  REQUIRE(t->loaded);
  const ServingConfiguration c = ServingSpace(*t->loaded).at(0);
  SampledServingEvaluator sampled(catalog, *t->loaded, kSamples);
  const ServingEvaluation e = sampled.evaluate(c);
  REQUIRE(e.metrics);
  REQUIRE(e.spread);
  CHECK(e.spread->samples == kSamples);
  CHECK(e.spread->meeting_slo == meeting);
  CHECK(e.spread->ttft_p99_worst_ms == high);
  // The median is one sample's value: the nearest rank, the lower middle of an even count.
  std::vector<double> sorted = p99;
  std::sort(sorted.begin(), sorted.end());
  CHECK(e.metrics->ttft_ms.p99 == sorted[kSamples / 2 - 1]);
  CHECK(e.slo_violation == "p99 TTFT " + format_fixed(high, 1) + " ms > " + format_number(limit) +
                               " ms (met on " + std::to_string(meeting) + " of " +
                               std::to_string(kSamples) + " samples)");

  const std::vector<ResultRow> rows = make_serving_rows(c, e, *prices_of(*t->loaded), std::nullopt);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].size() == sampled_serving_columns().size());
  CHECK(row_text(rows[0], serving_column("status")) == kStatusMissesSlo);
  CHECK(row_number(rows[0], serving_column("samples")) == kSamples);
  CHECK(row_number(rows[0], serving_column("samples_meeting_slo")) == meeting);
  CHECK(row_number(rows[0], serving_column("ttft_p99_worst_ms")) == high);

  // The first sample alone (the traffic as written) may well meet it; only all samples decide.
  const bool first_meets = p99[0] <= limit;
  CHECK(ServingEvaluator(catalog, *t->loaded).evaluate(c).slo_violation.empty() == first_meets);
  // An objective above every sample's p99 is met on all of them: status ok, no limiting.
  auto loose =
      testing::load_serving_text(chat("slo { p99_ttft_ms: " + format_number(high + 1) + " }\n"));
  REQUIRE(loose->loaded);
  const ServingEvaluation all =
      SampledServingEvaluator(catalog, *loose->loaded, kSamples).evaluate(c);
  CHECK(all.slo_violation.empty());
  CHECK(all.spread->meeting_slo == kSamples);
}

TEST_CASE("the rate every sample meets is at most each sample's own, and every sample meets it") {
  const Catalog& catalog = testing::shipped_catalog();
  auto t = testing::load_serving_text(chat("slo { p99_ttft_ms: 400 }\n"));
  REQUIRE(t->loaded);
  const ServingConfiguration c = ServingSpace(*t->loaded).at(0);
  const double all = SampledServingEvaluator(catalog, *t->loaded, kSamples).max_rate_scale(c);
  double lowest = 1e9;
  std::set<double> answers;
  for (int k = 0; k < kSamples; ++k) {
    ServingEvaluator sample(catalog, *t->loaded, k);
    const double own = sample.max_rate_scale(c);
    answers.insert(own);
    lowest = std::min(lowest, own);
    INFO("sample " << k << ": " << own << ", all samples: " << all);
    CHECK(all <= own);
    REQUIRE(all > 0);
    const ServingEvaluation at = sample.evaluate(c, all);
    CHECK(at.slo_violation.empty());
  }
  CHECK(all <= lowest);
  CHECK(answers.size() > 1);  // the samples disagree: the case is not trivial
}

// The guarantee holds for any predicates, monotone or not: the searches probe the same rates
// until one some sample meets and another misses.
TEST_CASE("the rate search on a conjunction never exceeds its search on any one predicate") {
  for (uint64_t trial = 0; trial < 300; ++trial) {
    // Predicates that hold below a threshold, with a tenth of the rates flipped at random.
    std::vector<std::function<bool(double)>> predicates;
    for (uint64_t k = 0; k < 4; ++k) {
      const uint64_t seed = splitmix64(trial * 16 + k);
      const double threshold = static_cast<double>(seed % 8000) / 100;  // 0 to 80
      predicates.push_back([seed, threshold](double x) {
        const uint64_t h = splitmix64(seed ^ static_cast<uint64_t>(x * 1e6));
        return (x <= threshold) != (h % 10 == 0);
      });
    }
    const auto all = [&](double x) {
      return std::all_of(predicates.begin(), predicates.end(), [&](const auto& p) { return p(x); });
    };
    const double joint = search_max_rate_scale(all, 64);
    for (const auto& p : predicates) {
      const double own = search_max_rate_scale(p, 64);
      INFO("trial " << trial << ": joint " << joint << ", one " << own);
      CHECK(joint <= own);
    }
    if (joint > 0) CHECK(all(joint));
  }
}

TEST_CASE("traffic.samples out of range or with a trace file is an error at the field") {
  auto zero = testing::load_serving_text(
      chat("").replace(chat("").find("seed: 7"), 7, "seed: 7 samples: 0"));
  CHECK_FALSE(zero->loaded);
  CHECK_THAT(zero->messages(), Catch::Contains("traffic.samples: must be in [1, 100]"));
  auto many = testing::load_serving_text(
      chat("").replace(chat("").find("seed: 7"), 7, "seed: 7 samples: 101"));
  CHECK_FALSE(many->loaded);
  CHECK_THAT(many->messages(), Catch::Contains("traffic.samples: must be in [1, 100]"));
  auto trace = testing::load_serving_text(R"(model: "llama3-8b"
deployment { instance: "aws.g5.xlarge" quantization { weights: INT8 } }
traffic { trace_file: "trace.csv" samples: 3 }
)",
                                          "0,100,10\n1,100,10\n");
  CHECK_FALSE(trace->loaded);
  CHECK_THAT(trace->messages(),
             Catch::Contains("traffic.samples: a trace file is one fixed sample of traffic"));
  auto five = testing::load_serving_text(
      chat("").replace(chat("").find("seed: 7"), 7, "seed: 7 samples: 5"));
  CHECK(five->loaded);
  CHECK(traffic_samples(*five->loaded, 0) == 5);
  CHECK(traffic_samples(*five->loaded, 2) == 2);  // serve --samples replaces it
}

}  // namespace
}  // namespace clustersim
