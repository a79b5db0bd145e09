// The discrete-event core: a simulated clock and a queue of events ordered by time, then by the
// order in which they were scheduled (so equal times always run in the same order).
//
// Not thread-safe: each simulation (one per configuration in a sweep) owns its Simulation.
// Knows nothing of GPUs or networks.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "sim/engine/state_fingerprint.h"
#include "sim/util/units.h"

namespace clustersim {

// Something that reacts to its own events. `tag` is whatever it passed when scheduling.
class EventHandler {
 public:
  virtual void on_event(uint64_t tag) = 0;
  // Writes what the queued event `tag` will do into `f` (state_fingerprint.h), canonically: no
  // raw ids, no absolute times. By default an event has no canonical form.
  virtual void describe_event(uint64_t /*tag*/, StateFingerprint* f) const {
    f->make_incomparable();
  }

 protected:
  ~EventHandler() = default;
};

// Something that must run once after all events of a timestamp, before time advances (e.g. the
// flow model recomputing rates once for a batch of flow starts and ends).
class Settler {
 public:
  virtual void settle() = 0;

 protected:
  ~Settler() = default;

 private:
  friend class Simulation;
  // Whether the simulation holds a request of this settler not yet started: a repeat in the same
  // batch is then dropped in O(1) (a search of the requests was quadratic in the settlers woken at
  // one instant: 20,000 replicas given requests at t = 0). A settler serves one simulation.
  bool settle_requested_ = false;
};

class Simulation {
 public:
  Picoseconds now() const { return now_; }

  // Runs handler->on_event(tag) at `when`. Requires: when >= now(); `handler` outlives the event.
  // Cost: O(log events queued).
  void schedule_at(Picoseconds when, EventHandler* handler, uint64_t tag);
  void schedule_after(Picoseconds delay, EventHandler* handler, uint64_t tag) {
    schedule_at(now_ + delay, handler, tag);
  }
  // Runs `callback` at `when`: convenient, and costs an allocation-free slot reuse per event.
  void call_at(Picoseconds when, std::function<void()> callback);
  void call_after(Picoseconds delay, std::function<void()> callback) {
    call_at(now_ + delay, std::move(callback));
  }

  // Asks for settler->settle() after the current timestamp's events; several requests in one
  // timestamp give one call, in the order first requested. Requires: `settler` outlives the run.
  void request_settle(Settler* settler);

  // Processes events until none is left or stop() is called. Returns the number processed by
  // this call. Throws Interrupted (interruption.h) when this thread's interruption is requested.
  uint64_t run();
  // Makes run() return after the current event; the events still queued are never run.
  void stop() { stopped_ = true; }
  // Makes run() return once every event and settle of the current timestamp is done (or none is
  // left); a later run() continues from there.
  void pause() { paused_ = true; }

  // Writes the queued events into `f`, in the order they will run: each as its handler (an
  // object, StateFingerprint::add_handler), its time and what the handler says of it.
  // Incomparable when stopped or settling.
  void fingerprint(StateFingerprint* f) const;
  // Moves the clock and every queued event `delta` later, keeping their order, without running
  // anything: for a caller that has proven that the state `delta` later is this one, shifted (the
  // queued events' handlers move their own times).
  void translate(Picoseconds delta);

  uint64_t events_processed() const { return events_processed_; }

 private:
  struct Event {
    int64_t time;
    uint64_t sequence;
    EventHandler* handler;
    uint64_t tag;
  };
  // The handler behind call_at(): callbacks live in reusable slots.
  class CallbackSlots : public EventHandler {
   public:
    uint64_t add(std::function<void()> callback);
    void on_event(uint64_t slot) override;

   private:
    std::vector<std::function<void()>> slots_;
    std::vector<uint64_t> free_;
  };

  void run_settlers();

  std::vector<Event> heap_;  // min-heap on (time, sequence)
  Picoseconds now_;
  uint64_t next_sequence_ = 0;
  uint64_t events_processed_ = 0;
  bool stopped_ = false;
  bool paused_ = false;
  std::vector<Settler*> settlers_;
  std::vector<Settler*> settling_;  // the batch run_settlers is running (kept for its capacity)
  CallbackSlots callbacks_;
};

}  // namespace clustersim
