// Tests of the event queue: time order, deterministic tie-break, settling once per timestamp.
#include "sim/engine/simulation.h"

#include <catch2/catch.hpp>
#include <string>

namespace clustersim {
namespace {

TEST_CASE("events run in time order, equal times in scheduling order") {
  Simulation sim;
  std::string order;
  sim.call_at(Picoseconds(30), [&] { order += "c"; });
  sim.call_at(Picoseconds(10), [&] { order += "a"; });
  sim.call_at(Picoseconds(30), [&] { order += "d"; });
  sim.call_at(Picoseconds(20), [&] { order += "b"; });
  CHECK(sim.run() == 4);
  CHECK(order == "abcd");
  CHECK(sim.now() == Picoseconds(30));
}

TEST_CASE("an event may schedule more events, including at the current time") {
  Simulation sim;
  std::string order;
  sim.call_at(Picoseconds(5), [&] {
    order += "a";
    sim.call_after(Picoseconds(0), [&] { order += "c"; });
    sim.call_after(Picoseconds(1), [&] { order += "d"; });
  });
  sim.call_at(Picoseconds(5), [&] { order += "b"; });
  sim.run();
  CHECK(order == "abcd");
  CHECK(sim.now() == Picoseconds(6));
}

struct CountingSettler : Settler {
  std::vector<int64_t> settled_at;
  Simulation* sim = nullptr;
  void settle() override { settled_at.push_back(sim->now().count()); }
};

TEST_CASE("a settler runs once after all events of a timestamp") {
  Simulation sim;
  CountingSettler settler;
  settler.sim = &sim;
  for (int i = 0; i < 3; ++i) {
    sim.call_at(Picoseconds(7), [&] { sim.request_settle(&settler); });
  }
  sim.call_at(Picoseconds(9), [&] { sim.request_settle(&settler); });
  sim.run();
  CHECK(settler.settled_at == std::vector<int64_t>{7, 9});
}

// Settles in the order first requested; while a batch runs, one asked again (by another or by
// itself) runs once more after the batch, never twice in a row within it.
struct ChainSettler : Settler {
  std::string name;
  std::string* log = nullptr;
  Simulation* sim = nullptr;
  std::vector<Settler*> asks;  // requested on its first settle
  bool asked = false;
  void settle() override {
    *log += name;
    if (asked) return;
    asked = true;
    for (Settler* s : asks) sim->request_settle(s);
  }
};

TEST_CASE("a settler asked again while its batch runs settles once more after the batch") {
  Simulation sim;
  std::string log;
  ChainSettler a, b, c;
  for (auto [s, name] : {std::pair{&a, "a"}, {&b, "b"}, {&c, "c"}}) {
    s->name = name;
    s->log = &log;
    s->sim = &sim;
  }
  a.asks = {&c, &a, &c};  // c is later in this batch, a itself: each once more, c first
  sim.call_at(Picoseconds(3), [&] {
    sim.request_settle(&a);
    sim.request_settle(&b);
    sim.request_settle(&a);
    sim.request_settle(&c);
  });
  sim.run();
  CHECK(log == "abcca");
}

TEST_CASE("transfer_time rounds up so a transfer never ends early") {
  CHECK(transfer_time(1e9, 1e9) == Picoseconds(1000000000000));
  CHECK(transfer_time(1, 3e12) == Picoseconds(1));  // 0.33 ps -> 1 ps
}

}  // namespace
}  // namespace clustersim
