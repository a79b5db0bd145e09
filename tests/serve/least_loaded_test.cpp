// Tests of the load balancer's choice (sim/serve/least_loaded, prefix_routing): the tournament
// tree and the cache-aware router pick, on random sequences, exactly what a scan of every replica
// picks (the lowest index among equals), and replicas that stay idle change no request's times
// (constructed on first use, they are never constructed); the busy replicas counted exactly.
#include "sim/serve/least_loaded.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <unordered_map>

#include "sim/serve/prefix_routing.h"
#include "sim/serve/serving_simulation.h"
#include "tests/serve/serve_fixture.h"

namespace clustersim {
namespace {

using testing::single_gpu_inputs;

size_t first_least(const std::vector<int64_t>& loads) {
  return static_cast<size_t>(std::min_element(loads.begin(), loads.end()) - loads.begin());
}

TEST_CASE("the tree's least loaded unit is a scan's: the lowest index among equal loads") {
  std::mt19937_64 rng(11);
  for (size_t units : {1, 2, 3, 5, 12, 16, 17, 1000}) {
    INFO(units << " units");
    LeastLoaded tree(units, true);
    std::vector<int64_t> loads(units, 0);
    REQUIRE(tree.least() == 0);
    // Loads from a narrow range, so that ties are common.
    std::uniform_int_distribution<size_t> unit(0, units - 1);
    std::uniform_int_distribution<int64_t> load(0, 4);
    for (int step = 0; step < 5000; ++step) {
      const size_t u = unit(rng);
      loads[u] = load(rng);
      tree.set(u, loads[u]);
      REQUIRE(tree.least() == first_least(loads));
      REQUIRE(tree.load(tree.least()) == *std::min_element(loads.begin(), loads.end()));
      REQUIRE(tree.most() == *std::max_element(loads.begin(), loads.end()));
    }
  }
}

TEST_CASE("the tree counts the units with a load, and the most at once, alone or shared") {
  LeastLoaded tree(5);
  tree.set(0, 2);
  tree.set(3, 1);
  tree.set(0, 5);  // still busy: counted once
  CHECK(tree.peak_busy() == 2);
  tree.set(0, 0);
  tree.set(4, 1);
  CHECK(tree.peak_busy() == 2);  // 3 and 4 busy
  tree.set(1, 7);
  CHECK(tree.peak_busy() == 3);
  SECTION("two pools sharing one count") {
    BusyUnits busy;
    LeastLoaded a(3, false, &busy), b(2, false, &busy);
    a.set(0, 1);
    b.set(1, 1);
    a.set(0, 0);
    b.set(0, 2);
    CHECK(busy.now == 2);
    CHECK(a.peak_busy() == 2);
    CHECK(b.peak_busy() == 2);
  }
}

// The cache-aware router as a scan of every replica (prefix_routing.h's rules), the reference.
class ScanRouter {
 public:
  explicit ScanRouter(size_t replicas) : sent_(replicas), recorded_(replicas, 0) {}
  size_t route(const Request& r, const std::vector<int64_t>& loads) {
    const auto matched = [&](size_t i) -> int32_t {
      if (r.prefix < 0) return 0;
      const auto it = sent_[i].find(r.prefix);
      return it == sent_[i].end() ? 0 : std::min(it->second, r.prefix_tokens);
    };
    const int64_t most = *std::max_element(loads.begin(), loads.end());
    const int64_t least = *std::min_element(loads.begin(), loads.end());
    size_t chosen = 0;
    if (most - least > PrefixAwareRouter::kBalanceAbsThreshold &&
        static_cast<double>(most) >
            PrefixAwareRouter::kBalanceRelThreshold * static_cast<double>(least)) {
      chosen = first_least(loads);
    } else {
      size_t best = 0;
      for (size_t i = 1; i < sent_.size(); ++i) {
        if (matched(i) > matched(best)) best = i;
      }
      chosen = static_cast<double>(matched(best)) / r.input_tokens >
                       PrefixAwareRouter::kCacheThreshold
                   ? best
                   : first_least(recorded_);
    }
    recorded_[chosen] += r.input_tokens - matched(chosen);
    if (r.prefix >= 0) {
      int32_t& longest = sent_[chosen][r.prefix];
      longest = std::max(longest, r.prefix_tokens);
    }
    return chosen;
  }

 private:
  std::vector<std::unordered_map<int32_t, int32_t>> sent_;
  std::vector<int64_t> recorded_;
};

TEST_CASE("the cache-aware router picks what a scan of every replica picks") {
  std::mt19937_64 rng(5);
  for (size_t replicas : {1, 3, 8, 50}) {
    INFO(replicas << " replicas");
    PrefixAwareRouter router(static_cast<int>(replicas));
    ScanRouter scan(replicas);
    LeastLoaded tree(replicas, true);
    std::vector<int64_t> loads(replicas, 0);
    std::uniform_int_distribution<int> prefix(-1, 6), length(1, 400), load(0, 150);
    std::uniform_int_distribution<size_t> unit(0, replicas - 1);
    int imbalanced_loads = 0;
    for (int step = 0; step < 4000; ++step) {
      // Loads now balanced, now far apart (beyond the router's thresholds).
      const size_t u = unit(rng);
      loads[u] = step % 500 < 250 ? load(rng) % 8 : load(rng);
      tree.set(u, loads[u]);
      Request r;
      r.input_tokens = length(rng);
      r.prefix = prefix(rng);
      // A prefix's length varies from request to request: matches are capped at it.
      const auto spread = static_cast<int32_t>(u % 7);
      r.prefix_tokens =
          r.prefix < 0 ? 0 : std::min<int32_t>(r.input_tokens, 40 * (r.prefix + 1) + spread);
      const size_t expected = scan.route(r, loads);
      REQUIRE(router.route(r, tree) == expected);
      imbalanced_loads += *std::max_element(loads.begin(), loads.end()) -
                              *std::min_element(loads.begin(), loads.end()) >
                          PrefixAwareRouter::kBalanceAbsThreshold;
    }
    if (replicas > 1) CHECK(imbalanced_loads > 100);  // both of the router's branches ran
  }
}

// Requests at `rate` per second for 60 s, prompts of 200 to 1,000 tokens, 20 to 120 outputs.
std::vector<Request> light_traffic(double rate) {
  schema::Traffic t;
  t.set_rate_per_s(rate);
  t.set_duration_s(60);
  t.set_seed(3);
  t.mutable_input_tokens()->mutable_uniform()->set_min(200);
  t.mutable_input_tokens()->mutable_uniform()->set_max(1000);
  t.mutable_output_tokens()->mutable_uniform()->set_min(20);
  t.mutable_output_tokens()->mutable_uniform()->set_max(120);
  return generate_requests(t, 1);
}

void require_same_records(const ServingOutcome& a, const ServingOutcome& b) {
  REQUIRE(a.records.size() == b.records.size());
  for (size_t i = 0; i < a.records.size(); ++i) {
    INFO("request " << i);
    REQUIRE(a.records[i].first_token == b.records[i].first_token);
    REQUIRE(a.records[i].finish == b.records[i].finish);
    REQUIRE(a.records[i].kv_transfer == b.records[i].kv_transfer);
  }
  CHECK(a.iterations == b.iterations);
  CHECK(a.peak_batched == b.peak_batched);
  CHECK(a.replicas_used == b.replicas_used);
  CHECK(a.peak_busy_replicas == b.peak_busy_replicas);
}

// At 3 req/s of well under a second each, each arrival finds one of the first 10 replicas idle:
// the least loaded is then the lowest-indexed idle one among them, and 1,000 more replicas,
// never chosen, change nothing (a stale load would send a request to a busy replica).
TEST_CASE("idle extra replicas change no request's times") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  const std::vector<Request> requests = light_traffic(3);
  ReplicaSettings settings;
  settings.kv_blocks = 4096;
  const ServingOutcome few = simulate_serving(requests, model, settings, 10);
  CHECK(few.peak_batched >= 3);  // the balancer spread the requests over several replicas
  // The lowest-indexed idle replica takes each arrival: replica k is first used when k others
  // are busy, so the replicas used are the most busy at once.
  CHECK(few.replicas_used == few.peak_busy_replicas);
  CHECK(few.replicas_used >= 3);
  CHECK(few.replicas_used < 10);
  require_same_records(few, simulate_serving(requests, model, settings, 1010));
  SECTION("disaggregated: idle prefill and decode replicas") {
    const double kv = model.largest_stage().kv_bytes_per_token;
    settings.kv_bytes_per_token = kv;
    const auto pool = [](int replicas, int first_gpu) {
      PoolPlacement p;
      for (int r = 0; r < replicas; ++r) p.first_gpu.push_back(first_gpu + r);
      return p;
    };
    const ServingOutcome small = simulate_disaggregated(
        requests, {&model, settings, pool(4, 0)}, {&model, settings, pool(10, 4)}, kv, nullptr);
    const ServingOutcome large =
        simulate_disaggregated(requests, {&model, settings, pool(504, 0)},
                               {&model, settings, pool(1010, 504)}, kv, nullptr);
    require_same_records(small, large);
  }
}

// Three requests arriving together go to replicas 0, 1 and 2; a fourth, long after they finish,
// to replica 0 again: 3 of the 64 replicas used, 3 busy at once.
TEST_CASE("the replicas sent a request and the most busy at once, exactly") {
  const IterationModel model(single_gpu_inputs("llama2-7b", "H100-SXM5-80GB", {}));
  ReplicaSettings settings;
  settings.kv_blocks = 4096;
  const std::vector<Request> requests = {{0, 500, 50}, {0, 500, 50}, {0, 500, 50}, {100, 500, 50}};
  const ServingOutcome outcome = simulate_serving(requests, model, settings, 64);
  REQUIRE(outcome.records[2].done);
  REQUIRE(outcome.records[2].finish.seconds() < 100);  // the three finish before the fourth
  CHECK(outcome.replicas_used == 3);
  CHECK(outcome.peak_busy_replicas == 3);
  // Each replica iterates alone: the first three's iterations overlap, the fourth's follow.
  CHECK(outcome.iterations == 4 * 50);
}

}  // namespace
}  // namespace clustersim
