// Tests of interruptions: a run that would never end stops within one check interval once its
// thread's interruption is requested; another thread's interruption, or none, leaves it alone;
// scopes nest and restore.
#include "sim/engine/interruption.h"

#include <catch2/catch.hpp>
#include <thread>

#include "sim/engine/simulation.h"

namespace clustersim {
namespace {

// An event that schedules itself again forever, requesting `interruption` at its `at`-th run.
class Forever : public EventHandler {
 public:
  Forever(Simulation* sim, Interruption* interruption, uint64_t at)
      : sim_(sim), interruption_(interruption), at_(at) {}
  void on_event(uint64_t) override {
    if (++runs_ == at_) interruption_->request();
    sim_->schedule_after(Picoseconds(1), this, 0);
  }
  uint64_t runs() const { return runs_; }

 private:
  Simulation* sim_;
  Interruption* interruption_;
  uint64_t at_;
  uint64_t runs_ = 0;
};

TEST_CASE("a simulation stops within 4096 events of its thread's interruption") {
  Interruption interruption;
  Simulation sim;
  Forever forever(&sim, &interruption, 10000);
  sim.schedule_at(Picoseconds(0), &forever, 0);
  const InterruptionScope scope(&interruption);
  CHECK_THROWS_AS(sim.run(), Interrupted);
  CHECK(forever.runs() >= 10000);
  CHECK(forever.runs() < 10000 + 4096);
}

TEST_CASE("an interruption reaches only the threads in its scope, and scopes restore") {
  Interruption requested;
  requested.request();
  CHECK_NOTHROW(check_interruption());  // no scope on this thread
  Interruption idle;
  {
    const InterruptionScope outer(&idle);
    CHECK_NOTHROW(check_interruption());
    {
      const InterruptionScope inner(&requested);
      CHECK_THROWS_AS(check_interruption(), Interrupted);
      bool other_thread_threw = false;
      std::thread([&] {
        try {
          check_interruption();
        } catch (const Interrupted&) {
          other_thread_threw = true;
        }
      }).join();
      CHECK_FALSE(other_thread_threw);
    }
    CHECK_NOTHROW(check_interruption());
  }
}

}  // namespace
}  // namespace clustersim
