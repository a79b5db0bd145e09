// Tests of transfers over shared capacities: closed-form completion times as transfers start and
// end, latency, conservation of bytes, and re-rated components agreeing with a solve of all.
#include "sim/engine/shared_bandwidth.h"

#include <bit>
#include <catch2/catch.hpp>
#include <random>

#include "tests/testing/units.h"

namespace clustersim {
namespace {

using testing::kGB;

TEST_CASE("one transfer takes bytes / capacity after its latency") {
  Simulation sim;
  SharedBandwidth net(&sim);
  const int32_t link = net.add_constraint(10 * kGB);
  Picoseconds end;
  // 1 GB at 10 GB/s = 0.1 s, after 5 us of latency.
  net.start(1 * kGB, {{link, 1}}, Picoseconds::from_microseconds(5), [&] { end = sim.now(); });
  sim.run();
  CHECK(end == Picoseconds::from_seconds(0.1) + Picoseconds::from_microseconds(5));
}

TEST_CASE("two equal transfers on one link each get half and end together") {
  Simulation sim;
  SharedBandwidth net(&sim);
  const int32_t link = net.add_constraint(10 * kGB);
  std::vector<Picoseconds> ends;
  for (int i = 0; i < 2; ++i) {
    net.start(1 * kGB, {{link, 1}}, Picoseconds(0), [&] { ends.push_back(sim.now()); });
  }
  sim.run();
  // Each at 5 GB/s: 0.2 s.
  CHECK(ends ==
        std::vector<Picoseconds>{Picoseconds::from_seconds(0.2), Picoseconds::from_seconds(0.2)});
}

TEST_CASE("when a transfer ends, the survivor speeds up") {
  Simulation sim;
  SharedBandwidth net(&sim);
  const int32_t link = net.add_constraint(10 * kGB);
  Picoseconds small_end, big_end;
  net.start(1 * kGB, {{link, 1}}, Picoseconds(0), [&] { small_end = sim.now(); });
  net.start(3 * kGB, {{link, 1}}, Picoseconds(0), [&] { big_end = sim.now(); });
  sim.run();
  // Both at 5 GB/s until the small one ends at 0.2 s (big has 2 GB left), then 10 GB/s: +0.2 s.
  CHECK(small_end == Picoseconds::from_seconds(0.2));
  CHECK(big_end == Picoseconds::from_seconds(0.4));
}

TEST_CASE("a transfer that starts later slows down the one already running") {
  Simulation sim;
  SharedBandwidth net(&sim);
  const int32_t link = net.add_constraint(10 * kGB);
  Picoseconds first_end, second_end;
  net.start(2 * kGB, {{link, 1}}, Picoseconds(0), [&] { first_end = sim.now(); });
  // Starts at 0.1 s (first has 1 GB left); both at 5 GB/s: first ends at 0.3 s with the second
  // 1 GB done; the second's last 1 GB at 10 GB/s ends at 0.4 s.
  net.start(2 * kGB, {{link, 1}}, Picoseconds::from_seconds(0.1), [&] { second_end = sim.now(); });
  sim.run();
  CHECK(first_end == Picoseconds::from_seconds(0.3));
  CHECK(second_end == Picoseconds::from_seconds(0.4));
}

TEST_CASE("a transfer started from a completion callback runs next") {
  Simulation sim;
  SharedBandwidth net(&sim);
  const int32_t link = net.add_constraint(1 * kGB);
  Picoseconds end;
  net.start(1 * kGB, {{link, 1}}, Picoseconds(0), [&] {
    net.start(1 * kGB, {{link, 1}}, Picoseconds(0), [&] { end = sim.now(); });
  });
  sim.run();
  CHECK(end == Picoseconds::from_seconds(2));
  CHECK(net.bytes_through(0) == 2 * kGB);
}

TEST_CASE("more capacity is never slower") {
  auto finish = [](double capacity) {
    Simulation sim;
    SharedBandwidth net(&sim);
    const int32_t a = net.add_constraint(capacity);
    const int32_t b = net.add_constraint(5 * kGB);
    Picoseconds last;
    net.start(3 * kGB, {{a, 1}, {b, 1}}, Picoseconds(0), [&] { last = sim.now(); });
    net.start(1 * kGB, {{a, 1}}, Picoseconds(0), [&] { last = std::max(last, sim.now()); });
    sim.run();
    return last;
  };
  Picoseconds previous = finish(1 * kGB);
  for (double capacity : {2.0, 4.0, 8.0, 16.0}) {
    const Picoseconds now = finish(capacity * kGB);
    CHECK(now <= previous);
    previous = now;
  }
}

TEST_CASE("an end re-rates transfers linked to it only through others") {
  Simulation sim;
  SharedBandwidth net(&sim);
  const int32_t a = net.add_constraint(10 * kGB);
  const int32_t b = net.add_constraint(10 * kGB);
  Picoseconds only_a_end, both_end;
  // b's three users get 10/3 GB/s each; on a the survivor takes the rest, 20/3 GB/s.
  net.start(10 * kGB, {{a, 1}}, Picoseconds(0), [&] { only_a_end = sim.now(); });
  net.start(10 * kGB, {{a, 1}, {b, 1}}, Picoseconds(0), [&] { both_end = sim.now(); });
  for (int i = 0; i < 2; ++i) net.start(1 * kGB, {{b, 1}}, Picoseconds(0), nullptr);
  sim.run();
  // At 0.3 s b's small transfers end, after 2 GB and 1 GB of the others: from then a is shared
  // 5 + 5 GB/s (the a-only transfer shares no link with those that ended), 8 GB left ends at
  // 1.9 s, and the last 1 GB of the other at 10 GB/s ends at 2.0 s.
  CHECK(only_a_end.seconds() == Approx(1.9).epsilon(1e-9));
  CHECK(both_end.seconds() == Approx(2.0).epsilon(1e-9));
}

TEST_CASE("re-rating the changed components gives every transfer the rate of a solve of all") {
  // Random transfers over random constraints, activated one by one (distinct latencies), enough
  // that many share a constraint with more than 32 others (crowded): at every end, each active
  // transfer's rate equals, bit for bit, the rate a solve of all the active ones (in order of
  // activation) gives it, as the components found through neighbours must.
  std::mt19937 random(11);
  std::vector<double> capacities(12);
  for (double& c : capacities) c = std::uniform_real_distribution<double>(1e9, 1e11)(random);
  Simulation sim;
  SharedBandwidth net(&sim, capacities);
  MaxMinFair solver;
  solver.set_capacities(capacities);
  constexpr int kTransfers = 120;
  std::vector<std::vector<MaxMinFair::Use>> uses(kTransfers);
  std::vector<int64_t> ids;
  size_t checked = 0, mismatches = 0;
  const auto check_rates = [&] {
    std::vector<std::span<const MaxMinFair::Use>> active;
    std::vector<int64_t> active_ids;
    for (int i = 0; i < kTransfers; ++i) {
      if (net.rate(ids[i]) > 0) {
        active.push_back(uses[i]);
        active_ids.push_back(ids[i]);
      }
    }
    std::vector<double> rates;
    solver.solve(active, 1e30, &rates);
    for (size_t i = 0; i < rates.size(); ++i) {
      mismatches += std::bit_cast<uint64_t>(rates[i]) !=
                    std::bit_cast<uint64_t>(net.rate(active_ids[i]));
    }
    checked += rates.size();
  };
  for (int i = 0; i < kTransfers; ++i) {
    const int n = std::uniform_int_distribution<int>(1, 3)(random);
    for (int k = 0; k < n; ++k) {
      uses[i].push_back({std::uniform_int_distribution<int32_t>(0, 11)(random),
                         std::uniform_int_distribution<int32_t>(1, 2)(random)});
    }
    const double bytes = std::uniform_real_distribution<double>(1e8, 1e10)(random);
    ids.push_back(net.start(bytes, uses[i], Picoseconds::from_microseconds(1000 * (i + 1) + 7),
                            check_rates));
  }
  sim.run();
  CHECK(checked > kTransfers);
  CHECK(mismatches == 0);
}

}  // namespace
}  // namespace clustersim
