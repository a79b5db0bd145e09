// Task FIFO and busy-time accounting of a SerialResource.
#include "sim/engine/serial_resource.h"

#include <utility>

#include "sim/util/check.h"

namespace clustersim {

void SerialResource::submit(Picoseconds duration, std::function<void()> done) {
  CLUSTERSIM_CHECK(duration >= Picoseconds(0), "a task of negative duration");
  tasks_.push_back({duration, std::move(done)});
  if (tasks_.size() == 1) start_front();
}

Picoseconds SerialResource::busy_time() const {
  if (tasks_.empty()) return completed_busy_;
  return completed_busy_ + (sim_->now() - front_started_);
}

void SerialResource::start_front() {
  front_started_ = sim_->now();
  sim_->schedule_after(tasks_.front().duration, this, 0);
}

void SerialResource::on_event(uint64_t /*tag*/) {
  CLUSTERSIM_CHECK(!tasks_.empty(), "a task ended on an idle serial resource");
  Task finished = std::move(tasks_.front());
  tasks_.pop_front();
  completed_busy_ += finished.duration;
  ++tasks_completed_;
  if (!tasks_.empty()) start_front();
  if (finished.done) finished.done();
}

}  // namespace clustersim
