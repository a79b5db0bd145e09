// Event queue and run loop of the discrete-event core.
#include "sim/engine/simulation.h"

#include <algorithm>

#include "sim/engine/interruption.h"
#include "sim/util/check.h"

namespace clustersim {
namespace {

// How often run() checks for an interruption (interruption.h): often enough to stop within
// milliseconds, rarely enough to cost nothing measurable.
constexpr uint64_t kEventsBetweenInterruptionChecks = 4096;

// std::push_heap builds a max-heap; "later" events compare greater so the earliest is on top.
struct Later {
  template <class E>
  bool operator()(const E& a, const E& b) const {
    return a.time != b.time ? a.time > b.time : a.sequence > b.sequence;
  }
};

}  // namespace

void Simulation::schedule_at(Picoseconds when, EventHandler* handler, uint64_t tag) {
  CLUSTERSIM_CHECK(when >= now_, "an event scheduled in the past");
  heap_.push_back({when.count(), next_sequence_++, handler, tag});
  std::push_heap(heap_.begin(), heap_.end(), Later{});
}

void Simulation::call_at(Picoseconds when, std::function<void()> callback) {
  schedule_at(when, &callbacks_, callbacks_.add(std::move(callback)));
}

void Simulation::request_settle(Settler* settler) {
  if (settler->settle_requested_) return;
  settler->settle_requested_ = true;
  settlers_.push_back(settler);
}

void Simulation::run_settlers() {
  // A settler may request settling again (for the same timestamp); loop until quiet.
  while (!settlers_.empty()) {
    settling_.swap(settlers_);
    // Cleared for the whole batch before any runs, so that one asked again while the batch runs
    // (by itself or an earlier one) runs again after it, as a request after its settle does.
    for (Settler* s : settling_) s->settle_requested_ = false;
    for (Settler* s : settling_) s->settle();
    settling_.clear();
  }
}

uint64_t Simulation::run() {
  const uint64_t before = events_processed_;
  run_settlers();
  while (!heap_.empty() && !stopped_) {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    const Event event = heap_.back();
    heap_.pop_back();
    now_ = Picoseconds(event.time);
    if (++events_processed_ % kEventsBetweenInterruptionChecks == 0) check_interruption();
    event.handler->on_event(event.tag);
    if (!settlers_.empty() && (heap_.empty() || heap_.front().time != event.time)) {
      run_settlers();
    }
    // Settling may have queued more events at this time: the timestamp is not done before them.
    if (paused_ && (heap_.empty() || heap_.front().time != event.time)) break;
  }
  paused_ = false;
  return events_processed_ - before;
}

void Simulation::fingerprint(StateFingerprint* f) const {
  if (stopped_ || !settlers_.empty()) return f->make_incomparable();
  std::vector<Event> queued = heap_;
  std::sort(queued.begin(), queued.end(),
            [](const Event& a, const Event& b) { return Later{}(b, a); });
  for (const Event& e : queued) {
    f->add_handler(e.handler);
    f->add_time(Picoseconds(e.time));
    e.handler->describe_event(e.tag, f);
  }
}

void Simulation::translate(Picoseconds delta) {
  now_ += delta;
  for (Event& e : heap_) e.time += delta.count();
}

uint64_t Simulation::CallbackSlots::add(std::function<void()> callback) {
  if (free_.empty()) {
    slots_.push_back(std::move(callback));
    return slots_.size() - 1;
  }
  const uint64_t slot = free_.back();
  free_.pop_back();
  slots_[slot] = std::move(callback);
  return slot;
}

void Simulation::CallbackSlots::on_event(uint64_t slot) {
  std::function<void()> callback = std::move(slots_[slot]);
  slots_[slot] = nullptr;
  free_.push_back(slot);
  callback();
}

}  // namespace clustersim
