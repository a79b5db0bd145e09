// engine_bench: events per second of clustersim::Simulation against a bare std::priority_queue
// loop doing the same pops and pushes, measured in the same run.
//
// Workload (the "hold" model): K events pending at start, each at a pseudo-random time; every
// processed event schedules one more at now + a pseudo-random delay until N events have been
// scheduled in all, then the queue drains. N events are processed. The delays come from one
// fixed-seed generator, drawn in the same order by every variant, and every variant breaks time
// ties by scheduling order, so all of them process the same events and end at the same time
// (checked). Variants:
//   engine  - Simulation::schedule_after with an EventHandler (the path resources use)
//   call_at - Simulation::call_after with a std::function (small capture, no allocation)
//   heap    - std::priority_queue of (time, sequence) with the same push/pop pattern
// Each variant: one warm-up run, then kTimedRuns timed runs; rates are N / median time.
//
// Usage: engine_bench [small|medium|large|all]   (default all). CSV on stdout, details on stderr.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <queue>
#include <string>
#include <vector>

#include "sim/engine/simulation.h"

namespace clustersim {
namespace {

constexpr int kTimedRuns = 5;
constexpr uint64_t kSeed = 0x5eed2024;
constexpr uint64_t kMaxDelayPs = 1'000'000;  // delays uniform in [1, 1e6] ps

// SplitMix64: cheap enough not to dominate, identical in every variant.
class DelayGenerator {
 public:
  explicit DelayGenerator(uint64_t seed) : state_(seed) {}
  int64_t next_delay_ps() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return static_cast<int64_t>(1 + z % kMaxDelayPs);
  }

 private:
  uint64_t state_;
};

struct Workload {
  uint64_t events;   // N: processed in all
  uint64_t pending;  // K: kept queued while events remain to be scheduled
};

// The engine variant's handler: each event schedules the next until N have been scheduled.
class Rescheduler final : public EventHandler {
 public:
  Rescheduler(Simulation* sim, uint64_t total) : sim_(sim), total_(total), delays_(kSeed) {}
  void schedule_one() {
    ++scheduled_;
    sim_->schedule_after(Picoseconds(delays_.next_delay_ps()), this, 0);
  }
  void on_event(uint64_t /*tag*/) override {
    if (scheduled_ < total_) schedule_one();
  }

 private:
  Simulation* sim_;
  uint64_t total_;
  uint64_t scheduled_ = 0;
  DelayGenerator delays_;
};

int64_t run_engine(const Workload& w) {
  Simulation sim;
  Rescheduler handler(&sim, w.events);
  for (uint64_t i = 0; i < w.pending; ++i) handler.schedule_one();
  if (sim.run() != w.events) std::abort();
  return sim.now().count();
}

struct CallAtState {
  Simulation sim;
  DelayGenerator delays{kSeed};
  uint64_t total = 0;
  uint64_t scheduled = 0;
  void schedule_one() {
    ++scheduled;
    sim.call_after(Picoseconds(delays.next_delay_ps()), [this] {
      if (scheduled < total) schedule_one();
    });
  }
};

int64_t run_call_at(const Workload& w) {
  CallAtState state;
  state.total = w.events;
  for (uint64_t i = 0; i < w.pending; ++i) state.schedule_one();
  if (state.sim.run() != w.events) std::abort();
  return state.sim.now().count();
}

struct HeapEvent {
  int64_t time;
  uint64_t sequence;
  bool operator>(const HeapEvent& o) const {
    return time != o.time ? time > o.time : sequence > o.sequence;
  }
};

int64_t run_heap(const Workload& w) {
  std::priority_queue<HeapEvent, std::vector<HeapEvent>, std::greater<HeapEvent>> heap;
  DelayGenerator delays(kSeed);
  uint64_t sequence = 0;
  int64_t now = 0;
  for (uint64_t i = 0; i < w.pending; ++i) heap.push({delays.next_delay_ps(), sequence++});
  uint64_t processed = 0;
  while (!heap.empty()) {
    now = heap.top().time;
    heap.pop();
    ++processed;
    if (sequence < w.events) heap.push({now + delays.next_delay_ps(), sequence++});
  }
  if (processed != w.events) std::abort();
  return now;
}

struct Timing {
  double min_s;
  double median_s;
  int64_t end_time_ps;
};

Timing measure(int64_t (*variant)(const Workload&), const Workload& w) {
  const int64_t end_time = variant(w);  // warm-up
  std::vector<double> seconds;
  for (int i = 0; i < kTimedRuns; ++i) {
    const auto start = std::chrono::steady_clock::now();
    if (variant(w) != end_time) std::abort();
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    seconds.push_back(took.count());
  }
  std::sort(seconds.begin(), seconds.end());
  return {seconds.front(), seconds[kTimedRuns / 2], end_time};
}

void bench(const char* name, const Workload& w) {
  const Timing engine = measure(run_engine, w);
  const Timing heap = measure(run_heap, w);
  const Timing call_at = measure(run_call_at, w);
  if (engine.end_time_ps != heap.end_time_ps || call_at.end_time_ps != heap.end_time_ps) {
    std::fprintf(stderr, "%s: variants disagree on the end time\n", name);
    std::exit(1);
  }
  const double n = static_cast<double>(w.events);
  std::fprintf(stderr,
               "%-6s N=%llu K=%llu  min/median s: engine %.4f/%.4f  heap %.4f/%.4f  "
               "call_at %.4f/%.4f\n",
               name, static_cast<unsigned long long>(w.events),
               static_cast<unsigned long long>(w.pending), engine.min_s, engine.median_s,
               heap.min_s, heap.median_s, call_at.min_s, call_at.median_s);
  std::printf("%llu,%llu,%.0f,%.0f,%.3f,%.0f\n", static_cast<unsigned long long>(w.events),
              static_cast<unsigned long long>(w.pending), n / engine.median_s, n / heap.median_s,
              heap.median_s / engine.median_s, n / call_at.median_s);
  std::fflush(stdout);
}

}  // namespace
}  // namespace clustersim

int main(int argc, char** argv) {
  using clustersim::Workload;
  const std::string which = argc > 1 ? argv[1] : "all";
  struct Size {
    const char* name;
    Workload workload;
  };
  const Size sizes[] = {
      {"small", {100'000, 1000}}, {"medium", {1'000'000, 1000}}, {"large", {10'000'000, 1000}}};
  if (which != "all" && std::none_of(std::begin(sizes), std::end(sizes),
                                     [&](const Size& s) { return which == s.name; })) {
    std::fprintf(stderr, "usage: engine_bench [small|medium|large|all]\n");
    return 2;
  }
  // ratio = engine_events_per_s / heap_events_per_s (1.0: the engine costs nothing extra).
  std::printf("events,pending,engine_events_per_s,heap_events_per_s,ratio,call_at_events_per_s\n");
  for (const Size& s : sizes) {
    if (which == "all" || which == s.name) clustersim::bench(s.name, s.workload);
  }
  return 0;
}
