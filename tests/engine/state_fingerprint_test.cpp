// Tests of state records, pausing and translating: states that differ only by a shift in time
// give equal records, different ones do not, callbacks make a record incomparable, and a
// translated run ends exactly the shift later.
#include "sim/engine/state_fingerprint.h"

#include <catch2/catch.hpp>

#include "sim/engine/shared_bandwidth.h"
#include "sim/engine/simulation.h"
#include "tests/testing/units.h"

namespace clustersim {
namespace {

using testing::kGB;

TEST_CASE("a record writes times relative to its instant and objects by first mention") {
  StateFingerprint a(Picoseconds(100)), b(Picoseconds(700));
  int owner = 0;
  for (auto [f, offset] : {std::pair{&a, 100}, std::pair{&b, 700}}) {
    f->add_time(Picoseconds(offset + 5));
    f->add_time(Picoseconds::max());
    f->add_bits(0.25);
  }
  a.add_object(&owner, 7);
  a.add_object(&owner, 3);
  a.add_object(&owner, 7);
  b.add_object(&owner, 40);  // other ids, mentioned in the same pattern
  b.add_object(&owner, 12);
  b.add_object(&owner, 40);
  CHECK(a == b);
  CHECK(a.hash() == b.hash());
  CHECK(a.objects_of(&owner) == 2);
  b.add_bits(-0.0);
  a.add_bits(0.0);
  CHECK_FALSE(a == b);
  StateFingerprint c(Picoseconds(0)), d(Picoseconds(0));
  c.make_incomparable();
  d.make_incomparable();
  CHECK_FALSE(c == d);
}

// A handler whose events are described by their tag.
struct Ticker : EventHandler {
  std::vector<int64_t> ran_at;
  Simulation* sim = nullptr;
  void on_event(uint64_t) override { ran_at.push_back(sim->now().count()); }
  void describe_event(uint64_t tag, StateFingerprint* f) const override {
    f->add(static_cast<int64_t>(tag));
  }
};

TEST_CASE("pause returns after the timestamp, translate shifts the clock and the queue") {
  Simulation sim;
  Ticker ticker;
  ticker.sim = &sim;
  sim.schedule_at(Picoseconds(10), &ticker, 1);
  sim.call_at(Picoseconds(10), [&] {
    sim.pause();
    sim.schedule_at(Picoseconds(10), &ticker, 2);  // still this timestamp
  });
  sim.schedule_at(Picoseconds(30), &ticker, 3);
  sim.schedule_at(Picoseconds(40), &ticker, 4);
  sim.run();
  CHECK(ticker.ran_at == std::vector<int64_t>{10, 10});
  CHECK(sim.now() == Picoseconds(10));

  StateFingerprint before(sim.now());
  sim.fingerprint(&before);
  sim.translate(Picoseconds(1000));
  StateFingerprint after(sim.now());
  sim.fingerprint(&after);
  CHECK(before.comparable());
  CHECK(before == after);
  sim.run();
  CHECK(ticker.ran_at == std::vector<int64_t>{10, 10, 1030, 1040});
}

TEST_CASE("a queued callback has no canonical form") {
  Simulation sim;
  sim.call_at(Picoseconds(5), [] {});
  StateFingerprint f(sim.now());
  sim.fingerprint(&f);
  CHECK_FALSE(f.comparable());
}

// The record of a simulation with one transfer on a shared link, at time `at`, `shift` later
// than the same run started at 0.
StateFingerprint transfer_state(Picoseconds shift, Picoseconds at, Picoseconds* end) {
  Simulation sim;
  SharedBandwidth net(&sim);
  const int32_t link = net.add_constraint(10 * kGB);
  Ticker ticker;
  ticker.sim = &sim;
  sim.schedule_at(shift, &ticker, 0);
  sim.run();
  int64_t id = net.start(1 * kGB, {{link, 1}}, Picoseconds(5), [&] { *end = sim.now(); });
  sim.schedule_at(shift + at, &ticker, 1);
  sim.call_at(shift + at, [&] { sim.pause(); });
  sim.run();
  StateFingerprint f(sim.now());
  net.describe_transfer(id, &f);
  net.fingerprint(&f);
  sim.run();
  return f;
}

TEST_CASE("transfers in flight are recorded relative to the instant, and only all together") {
  Picoseconds end_a, end_b, end_c;
  const StateFingerprint a = transfer_state(Picoseconds(0), Picoseconds(1000), &end_a);
  const StateFingerprint b = transfer_state(Picoseconds(77777), Picoseconds(1000), &end_b);
  const StateFingerprint c = transfer_state(Picoseconds(0), Picoseconds(2000), &end_c);
  CHECK(a.comparable());
  CHECK(a == b);
  CHECK_FALSE(a == c);  // further along
  CHECK(end_b - end_a == Picoseconds(77777));

  Simulation sim;
  SharedBandwidth net(&sim);
  net.start(1 * kGB, {{net.add_constraint(kGB), 1}}, Picoseconds(0), [] {});
  StateFingerprint undescribed(sim.now());
  net.fingerprint(&undescribed);
  CHECK_FALSE(undescribed.comparable());
}

TEST_CASE("a translated transfer ends the shift later, at the same rate") {
  for (Picoseconds shift : {Picoseconds(0), Picoseconds(123456789)}) {
    Simulation sim;
    SharedBandwidth net(&sim);
    const int32_t link = net.add_constraint(10 * kGB);
    Picoseconds end;
    net.start(1 * kGB, {{link, 1}}, Picoseconds(5), [&] { end = sim.now(); });
    Ticker ticker;
    ticker.sim = &sim;
    sim.schedule_at(Picoseconds(1000), &ticker, 0);
    sim.call_at(Picoseconds(1000), [&] { sim.pause(); });
    sim.run();
    sim.translate(shift);
    net.translate(shift);
    sim.run();
    CHECK(end == Picoseconds::from_seconds(0.1) + Picoseconds(5) + shift);
  }
}

}  // namespace
}  // namespace clustersim
