// Compute slowed by the SMs that overlapped collectives hold.
#include "sim/parallel/collective_sm_contention.h"

#include <algorithm>
#include <cmath>

#include "sim/util/check.h"

namespace clustersim {

Picoseconds exposed_beside_compute(Picoseconds communication, Picoseconds compute, int sms) {
  if (sms == 0) return std::max(communication - compute, Picoseconds());
  const double c = static_cast<double>(communication.count());
  if (c * (sms - kNcclCollectiveCtas) >= static_cast<double>(compute.count()) * sms) {
    return communication - compute;
  }
  return Picoseconds(static_cast<int64_t>(std::llround(c * kNcclCollectiveCtas / sms)));
}

CollectiveSmContention::CollectiveSmContention(int sms) : sms_(sms) {
  CLUSTERSIM_CHECK(sms >= 0, "a GPU's SMs are not negative");
}

Picoseconds CollectiveSmContention::end_from(Picoseconds now) const {
  const double alone = sms_ == 0 ? remaining_ : remaining_ * sms_ / (sms_ - ctas_);
  return now + Picoseconds(static_cast<int64_t>(std::ceil(alone)));
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
  const int ctas_before = ctas_;
  ctas_ += ctas;
  CLUSTERSIM_CHECK(ctas_ >= 0 && (sms_ == 0 || ctas_ < sms_),
                   "collective CTAs between 0 and the SMs");
  if (!running_) return std::nullopt;
  const double elapsed = static_cast<double>((now - mark_).count());
  remaining_ =
      std::max(0.0, remaining_ - (sms_ == 0 ? elapsed : elapsed * (sms_ - ctas_before) / sms_));
  mark_ = now;
  end_ = end_from(now);
  return end_;
}

void CollectiveSmContention::translate(Picoseconds delta) {
  mark_ += delta;
  end_ += delta;
}

}  // namespace clustersim
