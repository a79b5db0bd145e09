// Tests of sim/serve/serving_metrics: the latency summaries a served traffic reports.
#include "sim/serve/serving_metrics.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>
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

// Requests arriving once a second from 0 to `last_arrival_s`, each of `output_tokens`: the one
// arriving at a gets its first token at `period_s` x a + `first_token_s` and the rest one a second
// after it (`period_s` 2: one served for two offered).
struct ServedTraffic {
  std::vector<Request> requests;
  ServingOutcome outcome;
};
ServedTraffic served_in_turn(int last_arrival_s, int output_tokens, double period_s,
                             double first_token_s) {
  ServedTraffic t;
  for (int a = 0; a <= last_arrival_s; ++a) {
    t.requests.push_back(Request{static_cast<double>(a), 100, output_tokens});
    RequestRecord r;
    r.first_token = Picoseconds::from_seconds(period_s * a + first_token_s);
    r.finish = Picoseconds::from_seconds(period_s * a + first_token_s + output_tokens - 1);
    r.started = r.done = true;
    t.outcome.records.push_back(r);
  }
  return t;
}

// Each of 11 output tokens, its first a second after its arrival: 10 in flight, 11 tokens a
// second.
ServedTraffic steady_traffic(int last_arrival_s) {
  return served_in_turn(last_arrival_s, 11, 1, 1);
}

// The measured requests' tokens over their first arrival to last token counted the 11 s drain
// after the last arrival: 990 tokens over 100 s read 9.9 tokens/s, and 1.1 over 20 s; the cost per
// million tokens, price / throughput, moved with the traffic's duration for one deployment.
TEST_CASE("throughput is the rate produced while the traffic arrives, whatever its duration") {
  for (const int last : {99, 999}) {
    const ServedTraffic t = steady_traffic(last);
    const ServingMetrics m = measure_serving(t.requests, t.outcome, 10);
    INFO("arrivals 0 to " << last << " s");
    CHECK(m.measured == last - 9);
    // After 10 s up to the last arrival: the first tokens of arrivals 10 to last - 1 and 10
    // tokens a second from the 10 decoding at once; the requests of arrivals 0 to last - 11
    // finished.
    CHECK(m.output_tokens_per_s == Approx(11).epsilon(1e-12));
    CHECK(m.requests_per_s == Approx(1).epsilon(1e-12));
  }
}

// Every request at once (a benchmark at maximum load): no window of arrivals; the backlog's
// tokens over the first arrival to the last token, as trtllm-bench reports.
TEST_CASE("a traffic arriving at once is measured over its first arrival to last token") {
  std::vector<Request> requests(4, Request{0, 100, 5});
  ServingOutcome outcome;
  for (int i = 0; i < 4; ++i) {
    RequestRecord r;
    r.first_token = Picoseconds::from_seconds(i + 1);
    r.finish = Picoseconds::from_seconds(2 * (i + 1));
    r.started = r.done = true;
    outcome.records.push_back(r);
  }
  const ServingMetrics m = measure_serving(requests, outcome, 0);
  CHECK(m.output_tokens_per_s == Approx(20.0 / 8).epsilon(1e-12));
  CHECK(m.requests_per_s == Approx(4.0 / 8).epsilon(1e-12));
}

// Five standard deviations of a Poisson count of the arrivals (500 of 10,000, 50 of 100) beyond
// the requests the batches hold.
TEST_CASE("a deployment falls behind when it serves short of the arrivals beyond their noise") {
  CHECK_FALSE(falls_behind(10000, 9500, 0));
  CHECK(falls_behind(10000, 9499, 0));
  CHECK_FALSE(falls_behind(100, 50, 0));
  CHECK(falls_behind(100, 49, 0));
  CHECK_FALSE(falls_behind(10000, 9372, 128));  // a batch of 128 still decoding at the end
  CHECK(falls_behind(10000, 9371, 128));
  CHECK_FALSE(falls_behind(100, 120, 0));  // the warm-up's requests finishing in the window
}

TEST_CASE("a deployment keeping up serves its offered rate and is not overloaded") {
  const ServedTraffic t = steady_traffic(999);
  const ServingMetrics m = measure_serving(t.requests, t.outcome, 10);
  // Arrivals 11 to 999 s over the window after 10 s; those of 0 to 988 s finish in it.
  CHECK(m.offered_requests_per_s == Approx(1).epsilon(1e-12));
  CHECK(m.served_requests_per_s == Approx(1).epsilon(1e-12));
  CHECK_FALSE(m.overloaded);
}

// One request a second offered, one finished every 2 s: the queue grows to the end, and the
// latencies are its length then (the last request waits 1,000 s).
TEST_CASE("a deployment serving half its offered rate is overloaded") {
  const ServedTraffic t = served_in_turn(999, 2, 2, 1);
  const ServingMetrics m = measure_serving(t.requests, t.outcome, 0);
  // Arrivals after 0 s up to 999 s: 999; finished by 999 s: those of 0 to 498 s.
  CHECK(m.offered_requests_per_s == Approx(1).epsilon(1e-12));
  CHECK(m.served_requests_per_s == Approx(499.0 / 999).epsilon(1e-12));
  CHECK(m.overloaded);
  CHECK(overload_text(m) == "serves 0.5 of 1.0 req/s");
}

// One request a second offered, one finished every 4 s from the start, measured after a 400 s
// warm-up: every measured request waits longer than the 599 s window (the first measured finishes
// at 1,605 s), yet the warm-up's first request took 5 s, so the window can judge the deployment.
TEST_CASE("a deployment behind from the start is overloaded though no measured request ends in the window") {
  const ServedTraffic t = served_in_turn(999, 2, 4, 4);
  const ServingMetrics m = measure_serving(t.requests, t.outcome, 400);
  // Arrivals after 400 s up to 999 s: 599; finished in it: those of 99 to 248 s (401 to 997 s).
  CHECK(m.offered_requests_per_s == Approx(1).epsilon(1e-12));
  CHECK(m.served_requests_per_s == Approx(150.0 / 599).epsilon(1e-12));
  CHECK(m.overloaded);
}

// Little's law's allowance: 20 served a second at a mean E2E of 40 s (800 in flight on average),
// over 10,000 arrivals (5 x sqrt = 500), in a window of 500 s opened after 40 s of traffic (full
// as it opens). Opened after 20 s only, a deployment keeping up was still filling: its throughput
// is short by 20 x (40 - 20) / 500 = 0.8 req/s, Little's product by 0.8 x 40 = 32 more in flight.
TEST_CASE("a queue grows when the window closes with more in flight than Little's law") {
  CHECK_FALSE(queue_grows(1300, 20, 40, 10000, 500, 40));
  CHECK(queue_grows(1301, 20, 40, 10000, 500, 40));
  CHECK_FALSE(queue_grows(0, 20, 40, 10000, 500, 40));  // drained as it closed
  CHECK_FALSE(queue_grows(1332, 20, 40, 10000, 500, 20));
  CHECK(queue_grows(1333, 20, 40, 10000, 500, 20));
}

// An M/D/1 queue: Poisson arrivals at `rate_per_s` for `duration_s` (a fixed seed), served first
// come first served one at a time, each for rho / rate_per_s: a deployment that keeps up below
// rho = 1 and whose queue grows by (1 - 1 / rho) of the arrivals above it.
ServedTraffic md1(double rate_per_s, double rho, double duration_s) {
  ServedTraffic t;
  std::mt19937_64 random(7);  // fully specified by the standard: the same arrivals everywhere
  const double service_s = rho / rate_per_s;
  double arrival = 0, free_at = 0;
  for (;;) {
    const double u = (static_cast<double>(random() >> 11) + 0.5) * 0x1p-53;
    arrival += -std::log(u) / rate_per_s;
    if (arrival > duration_s) break;
    t.requests.push_back(Request{arrival, 100, 2});
    const double start = std::max(arrival, free_at);
    free_at = start + service_s;
    RequestRecord r;
    r.first_token = Picoseconds::from_seconds(start + service_s / 2);
    r.finish = Picoseconds::from_seconds(free_at);
    r.started = r.done = true;
    t.outcome.records.push_back(r);
  }
  return t;
}

// 100,000 arrivals (100 req/s over 1,000 s), batches large enough (10^5) that the capacity's
// allowance never binds: Little's law alone judges. Just over capacity (rho 1.05) the queue grows
// by 1 - 1 / 1.05 = 4.8% of the arrivals (4,760), the window closing with about half of that
// beyond Little's mean (2,380) against a noise allowance of 5 x sqrt(10^5) = 1,581. Just under
// (rho 0.98, 0.99), the Pollaczek-Khinchine queue holds 24 to 49 on average, a few sqrt(N) at
// most while it fills from empty (no warm-up) or after a warm-up.
TEST_CASE("an M/D/1 queue just over capacity is overloaded and one just under is not") {
  constexpr double kBatches = 1e5;
  for (const double rho : {0.98, 0.99}) {
    for (const double warmup_s : {0.0, 100.0}) {
      const ServedTraffic t = md1(100, rho, 1000);
      const ServingMetrics m = measure_serving(t.requests, t.outcome, warmup_s, kBatches, true);
      INFO("rho " << rho << ", warm-up " << warmup_s << " s");
      CHECK(m.served_requests_per_s == Approx(m.offered_requests_per_s).epsilon(0.01));
      CHECK_FALSE(m.overloaded);
    }
  }
  for (const double warmup_s : {0.0, 100.0}) {
    const ServedTraffic t = md1(100, 1.05, 1000);
    const ServingMetrics m = measure_serving(t.requests, t.outcome, warmup_s, kBatches, true);
    INFO("warm-up " << warmup_s << " s");
    // One served every 1.05 / 100 s once the queue never empties.
    CHECK(m.served_requests_per_s == Approx(100 / 1.05).epsilon(1e-3));
    CHECK(m.overloaded);
    // The deficit alone, within the batches' capacity, does not tell.
    const double window_s = 1000 - warmup_s;
    CHECK_FALSE(falls_behind(m.offered_requests_per_s * window_s,
                             m.served_requests_per_s * window_s, kBatches));
  }
}

// The steady traffic (one a second, 10 in flight) ending in a burst of 200 requests over its last
// 2 s, each served in 11 s as the others: the window closes with 211 in flight against Little's
// 11 + 5 x sqrt(1,189) = 183, though nothing queues. A burst's rate at the close is not the
// window's: without steady arrivals only the batches' capacity judges.
TEST_CASE("a burst arriving as the window closes is not an overload") {
  ServedTraffic t = steady_traffic(999);
  for (int i = 0; i < 200; ++i) {
    const double a = 997.0 + 2.0 * (i + 1) / 200;
    t.requests.push_back(Request{a, 100, 11});
    RequestRecord r;
    r.first_token = Picoseconds::from_seconds(a + 1);
    r.finish = Picoseconds::from_seconds(a + 11);
    r.started = r.done = true;
    t.outcome.records.push_back(r);
  }
  CHECK_FALSE(measure_serving(t.requests, t.outcome, 10, 1e5, false).overloaded);
  CHECK(measure_serving(t.requests, t.outcome, 10, 1e5, true).overloaded);
}

}  // namespace
}  // namespace clustersim
