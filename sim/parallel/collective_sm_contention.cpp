// Compute slowed by the SMs that overlapped collectives hold.
#include "sim/parallel/collective_sm_contention.h"

#include <algorithm>
#include <cmath>

#include "sim/util/check.h"

namespace clustersim {

Picoseconds exposed_beside_compute(Picoseconds communication, Picoseconds compute) {
  const double c = static_cast<double>(communication.count());
  if (c * (kGpuSms - kNcclCollectiveCtas) >= static_cast<double>(compute.count()) * kGpuSms) {
    return communication - compute;
  }
  return Picoseconds(static_cast<int64_t>(std::llround(c * kNcclCollectiveCtas / kGpuSms)));
}

Picoseconds CollectiveSmContention::end_from(Picoseconds now) const {
  return now +
         Picoseconds(static_cast<int64_t>(std::ceil(remaining_ * kGpuSms / (kGpuSms - ctas_))));
}

Picoseconds CollectiveSmContention::start(Picoseconds now, Picoseconds work) {
  CLUSTERSIM_CHECK(!running_, "one compute at a time on a stage's stream");
  running_ = true;
  remaining_ = static_cast<double>(work.count());
  mark_ = now;
  end_ = end_from(now);
  return end_;
}

std::optional<Picoseconds> CollectiveSmContention::add_ctas(Picoseconds now, int ctas) {
  const int free_before = kGpuSms - ctas_;
  ctas_ += ctas;
  CLUSTERSIM_CHECK(ctas_ >= 0 && ctas_ < kGpuSms, "collective CTAs between 0 and the SMs");
  if (!running_) return std::nullopt;
  remaining_ = std::max(
      0.0, remaining_ - static_cast<double>((now - mark_).count()) * free_before / kGpuSms);
  mark_ = now;
  end_ = end_from(now);
  return end_;
}

void CollectiveSmContention::translate(Picoseconds delta) {
  mark_ += delta;
  end_ += delta;
}

}  // namespace clustersim
