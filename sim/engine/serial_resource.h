// SerialResource: something that runs one task at a time, in submission order (a GPU stream, a
// single-queue device). Owns its FIFO of waiting tasks and its busy-time accounting.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>

#include "sim/engine/simulation.h"
#include "sim/util/units.h"

namespace clustersim {

// Runs tasks of known duration one after another, FIFO. A task submitted while the resource is
// idle starts at once; otherwise it starts when the task before it ends. Each task's `done` runs
// in the event at its end time, after the next task (if any) has started.
//
// Ownership: borrows `sim`, which must outlive this object. The resource schedules events with
// itself as handler, so it must outlive every task it accepted (destroy it idle, or after the
// simulation stops running). Not thread-safe, like its Simulation.
class SerialResource final : public EventHandler {
 public:
  explicit SerialResource(Simulation* sim) : sim_(sim) {}
  SerialResource(const SerialResource&) = delete;
  SerialResource& operator=(const SerialResource&) = delete;

  // Queues a task of `duration`; `done` runs at its end time (may be empty).
  // Requires: duration >= 0. Cost: O(1) amortised, plus one event when the task starts
  // (O(log events queued)); no allocation beyond storing `done`.
  void submit(Picoseconds duration, std::function<void()> done);

  // True when no task is running or waiting.
  bool idle() const { return tasks_.empty(); }
  // Tasks running or waiting (0 when idle).
  uint64_t tasks_queued() const { return tasks_.size(); }
  uint64_t tasks_completed() const { return tasks_completed_; }
  // Time spent running tasks up to now(), including the elapsed part of the running task;
  // busy_time() / now() is the utilisation.
  Picoseconds busy_time() const;

 private:
  struct Task {
    Picoseconds duration;
    std::function<void()> done;
  };

  void on_event(uint64_t tag) override;
  void start_front();

  Simulation* sim_;
  std::deque<Task> tasks_;  // front() is running when non-empty
  Picoseconds front_started_;
  Picoseconds completed_busy_;
  uint64_t tasks_completed_ = 0;
};

}  // namespace clustersim
