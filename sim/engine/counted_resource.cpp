// Grants, waiters and releases of a CountedResource.
#include "sim/engine/counted_resource.h"

#include <algorithm>
#include <utility>

#include "sim/util/check.h"

namespace clustersim {

CountedResource::CountedResource(Simulation* sim, uint64_t units) : sim_(sim), units_(units) {
  CLUSTERSIM_CHECK(units >= 1, "a counted resource without units");
}

void CountedResource::acquire(std::function<void()> granted) {
  CLUSTERSIM_CHECK(granted != nullptr, "acquire() without a callback");
  if (in_use_ < units_) {
    ++in_use_;
    grant(std::move(granted));
    return;
  }
  waiting_.push_back(std::move(granted));
  peak_waiters_ = std::max<uint64_t>(peak_waiters_, waiting_.size());
}

void CountedResource::release() {
  CLUSTERSIM_CHECK(in_use_ > 0, "release() of a unit that nobody holds");
  if (waiting_.empty()) {
    --in_use_;
    return;
  }
  // The unit passes from the releaser to the oldest waiter: units_in_use() is unchanged.
  std::function<void()> next = std::move(waiting_.front());
  waiting_.pop_front();
  grant(std::move(next));
}

void CountedResource::grant(std::function<void()> granted) {
  ++grants_;
  granting_.push_back(std::move(granted));
  // Zero-delay events at one timestamp run in scheduling order, so they pop granting_ in order.
  sim_->schedule_after(Picoseconds(0), this, 0);
}

void CountedResource::on_event(uint64_t /*tag*/) {
  CLUSTERSIM_CHECK(!granting_.empty(), "a grant event without a pending grant");
  std::function<void()> granted = std::move(granting_.front());
  granting_.pop_front();
  granted();
}

}  // namespace clustersim
