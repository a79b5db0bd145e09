// Tests of SerialResource: FIFO end times, busy time with idle gaps, work submitted from `done`.
#include "sim/engine/serial_resource.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace clustersim {
namespace {

TEST_CASE("tasks submitted together run back to back, in submission order") {
  Simulation sim;
  SerialResource stream(&sim);
  std::vector<int64_t> ended;
  for (int i = 0; i < 3; ++i) {
    stream.submit(Picoseconds(10), [&] { ended.push_back(sim.now().count()); });
  }
  CHECK_FALSE(stream.idle());
  CHECK(stream.tasks_queued() == 3);
  sim.run();
  // Task k (0-based) of duration d, all submitted at 0, ends at (k + 1) * d = 10, 20, 30.
  CHECK(ended == std::vector<int64_t>{10, 20, 30});
  // Busy time = sum of durations = 3 * 10; no gap, so it equals the end time.
  CHECK(stream.busy_time() == Picoseconds(30));
  CHECK(stream.tasks_completed() == 3);
  CHECK(stream.idle());
}

TEST_CASE("busy time counts running time only, including the running task's elapsed part") {
  Simulation sim;
  SerialResource stream(&sim);
  std::vector<int64_t> busy_seen;
  stream.submit(Picoseconds(10), nullptr);  // runs [0, 10)
  sim.call_at(Picoseconds(4), [&] { busy_seen.push_back(stream.busy_time().count()); });
  sim.call_at(Picoseconds(50), [&] {
    busy_seen.push_back(stream.busy_time().count());
    stream.submit(Picoseconds(5), nullptr);  // runs [50, 55)
  });
  sim.call_at(Picoseconds(53), [&] { busy_seen.push_back(stream.busy_time().count()); });
  sim.run();
  // At 4: 4 elapsed of the first task. At 50: the first task's 10; idle [10, 50) adds nothing.
  // At 53: 10 + (53 - 50). At the end: 10 + 5 = 15 busy out of 55 ps.
  CHECK(busy_seen == std::vector<int64_t>{4, 10, 13});
  CHECK(stream.busy_time() == Picoseconds(15));
  CHECK(sim.now() == Picoseconds(55));
}

TEST_CASE("a task submitted from done() queues behind tasks already waiting") {
  Simulation sim;
  SerialResource stream(&sim);
  std::string order;
  std::vector<int64_t> ended;
  auto record = [&](char name) {
    order += name;
    ended.push_back(sim.now().count());
  };
  stream.submit(Picoseconds(10), [&] {
    record('a');
    stream.submit(Picoseconds(1), [&] { record('c'); });
  });
  stream.submit(Picoseconds(10), [&] { record('b'); });
  sim.run();
  // a: [0, 10); b was waiting, so it runs [10, 20); c, submitted at 10, runs [20, 21).
  CHECK(order == "abc");
  CHECK(ended == std::vector<int64_t>{10, 20, 21});
  CHECK(stream.busy_time() == Picoseconds(21));
}

TEST_CASE("a zero-length task ends at its submission time, after earlier work") {
  Simulation sim;
  SerialResource stream(&sim);
  std::vector<int64_t> ended;
  sim.call_at(Picoseconds(7), [&] {
    stream.submit(Picoseconds(0), [&] { ended.push_back(sim.now().count()); });
    stream.submit(Picoseconds(3), [&] { ended.push_back(sim.now().count()); });
  });
  sim.run();
  // Ends: 7 + 0, then 7 + 0 + 3.
  CHECK(ended == std::vector<int64_t>{7, 10});
  CHECK(stream.tasks_completed() == 2);
  CHECK(stream.busy_time() == Picoseconds(3));
}

}  // namespace
}  // namespace clustersim
