// The tournament tree of a pool's loads.
#include "sim/serve/least_loaded.h"

#include <algorithm>

#include "sim/util/check.h"

namespace clustersim {

LeastLoaded::LeastLoaded(size_t units, bool track_most, BusyUnits* busy)
    : loads_(units, 0), shared_(busy) {
  CLUSTERSIM_CHECK(units >= 1 && units < kNone, "a pool of no unit, or too many to index");
  while (leaves_ < units) leaves_ *= 2;
  least_.assign(2 * leaves_, kNone);
  for (size_t u = 0; u < units; ++u) least_[leaves_ + u] = static_cast<uint32_t>(u);
  for (size_t i = leaves_ - 1; i >= 1; --i) least_[i] = lesser(least_[2 * i], least_[2 * i + 1]);
  if (track_most) most_ = least_;  // all loads equal: the same winners
}

uint32_t LeastLoaded::lesser(uint32_t a, uint32_t b) const {
  if (b == kNone) return a;
  return loads_[b] < loads_[a] ? b : a;
}

uint32_t LeastLoaded::greater(uint32_t a, uint32_t b) const {
  if (b == kNone) return a;
  return loads_[b] > loads_[a] ? b : a;
}

void LeastLoaded::set(size_t unit, int64_t load) {
  if ((loads_[unit] > 0) != (load > 0)) {
    BusyUnits& busy = shared_ != nullptr ? *shared_ : own_;
    busy.now += load > 0 ? 1 : -1;
    busy.peak = std::max(busy.peak, busy.now);
  }
  loads_[unit] = load;
  for (size_t i = (leaves_ + unit) / 2; i >= 1; i /= 2) {
    least_[i] = lesser(least_[2 * i], least_[2 * i + 1]);
  }
  if (most_.empty()) return;
  for (size_t i = (leaves_ + unit) / 2; i >= 1; i /= 2) {
    most_[i] = greater(most_[2 * i], most_[2 * i + 1]);
  }
}

}  // namespace clustersim
