// Tests of CountedResource: grants through zero-delay events, FIFO waiters, hand-over on release.
#include "sim/engine/counted_resource.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace clustersim {
namespace {

TEST_CASE("a pool of 2 grants a third acquirer at the first release") {
  Simulation sim;
  CountedResource pool(&sim, 2);
  const int64_t hold[3] = {50, 20, 10};
  std::vector<int64_t> granted_at(3, -1);
  for (int i = 0; i < 3; ++i) {
    pool.acquire([&, i] {
      granted_at[i] = sim.now().count();
      sim.call_after(Picoseconds(hold[i]), [&] { pool.release(); });
    });
  }
  // Two units for three acquirers: the third waits.
  CHECK(pool.units_in_use() == 2);
  CHECK(pool.waiters() == 1);
  sim.run();
  // Holders 0 and 1 start at 0; the third is granted at min(hold0, hold1) = min(50, 20) = 20 and
  // releases at 20 + 10 = 30; holder 0 releases last, at 50.
  CHECK(granted_at == std::vector<int64_t>{0, 0, 20});
  CHECK(sim.now() == Picoseconds(50));
  CHECK(pool.peak_waiters() == 1);
  CHECK(pool.grants() == 3);
  CHECK(pool.units_in_use() == 0);
}

TEST_CASE("a grant runs in its own event, after acquire() has returned") {
  Simulation sim;
  CountedResource pool(&sim, 1);
  std::string order;
  sim.call_at(Picoseconds(5), [&] {
    pool.acquire([&] { order += "g" + std::to_string(sim.now().count()); });
    order += "r";
  });
  sim.run();
  CHECK(order == "rg5");  // returned first, then granted at the same time
  CHECK(pool.units_in_use() == 1);
}

TEST_CASE("waiters are granted first come, first served") {
  Simulation sim;
  CountedResource pool(&sim, 1);
  std::string order;
  std::vector<int64_t> granted_at;
  for (char name : std::string("abcd")) {
    pool.acquire([&, name] {
      order += name;
      granted_at.push_back(sim.now().count());
      sim.call_after(Picoseconds(10), [&] { pool.release(); });
    });
  }
  sim.run();
  // One unit, each holder for 10: holder k (in acquire order) is granted at 10 * k.
  CHECK(order == "abcd");
  CHECK(granted_at == std::vector<int64_t>{0, 10, 20, 30});
  CHECK(pool.peak_waiters() == 3);  // all but the first waited at once
  CHECK(sim.now() == Picoseconds(40));
}

TEST_CASE("a release with nobody waiting returns the unit to the pool") {
  Simulation sim;
  CountedResource pool(&sim, 3);
  std::vector<int64_t> granted_at;
  pool.acquire([&] { granted_at.push_back(sim.now().count()); });
  pool.acquire([&] { granted_at.push_back(sim.now().count()); });
  sim.run();
  CHECK(pool.units_in_use() == 2);
  pool.release();
  CHECK(pool.units_in_use() == 1);
  sim.call_at(Picoseconds(8),
              [&] { pool.acquire([&] { granted_at.push_back(sim.now().count()); }); });
  sim.run();
  // A free unit is granted at acquire time: 0, 0, then 8.
  CHECK(granted_at == std::vector<int64_t>{0, 0, 8});
  CHECK(pool.units_in_use() == 2);
  CHECK(pool.peak_waiters() == 0);
}

}  // namespace
}  // namespace clustersim
