// Compute slowed by the SMs that overlapped collectives hold.
#include "sim/parallel/collective_sm_contention.h"

#include <algorithm>
#include <cmath>

#include "sim/util/check.h"

namespace clustersim {

Picoseconds exposed_beside_compute(Picoseconds communication, Picoseconds compute, int sms) {
  if (sms == 0) return std::max(communication - compute, Picoseconds());
  if (sms <= kNcclCollectiveCtas) return communication;
  const double c = static_cast<double>(communication.count());
  if (c * (sms - kNcclCollectiveCtas) >= static_cast<double>(compute.count()) * sms) {
    return communication - compute;
  }
  return Picoseconds(static_cast<int64_t>(std::llround(c * kNcclCollectiveCtas / sms)));
}

CollectiveSmContention::CollectiveSmContention(int sms) : sms_(sms) {
  CLUSTERSIM_CHECK(sms >= 0, "a GPU's SMs are not negative");
}

std::optional<Picoseconds> CollectiveSmContention::end_from(Picoseconds now) const {
  const int held = held_sms();
  if (sms_ != 0 && held == sms_) return std::nullopt;
  const double alone = held == 0 ? remaining_ : remaining_ * sms_ / (sms_ - held);
  return now + Picoseconds(static_cast<int64_t>(std::ceil(alone)));
}

std::optional<Picoseconds> CollectiveSmContention::reaches(Picoseconds now,
                                                           Picoseconds work) const {
  CLUSTERSIM_CHECK(running_, "a compute running to reach its work");
  const int held = held_sms();
  if (sms_ != 0 && held == sms_) return std::nullopt;
  const double share = held == 0 ? 1.0 : static_cast<double>(sms_ - held) / sms_;
  const double done = static_cast<double>(work_.count()) - remaining_ +
                      static_cast<double>((now - mark_).count()) * share;
  const double left = static_cast<double>(work.count()) - done;
  if (left <= 0) return now;
  return now + Picoseconds(static_cast<int64_t>(std::ceil(left / share)));
}

std::optional<Picoseconds> CollectiveSmContention::start(Picoseconds now, Picoseconds work) {
  CLUSTERSIM_CHECK(!running_, "one compute at a time on a stage's stream");
  running_ = true;
  remaining_ = static_cast<double>(work.count());
  mark_ = now;
  started_ = now;
  work_ = work;
  return moved_end(now);
}

std::optional<Picoseconds> CollectiveSmContention::add_ctas(Picoseconds now, int ctas) {
  const int held_before = held_sms();
  const int ctas_before = ctas_;
  ctas_ += ctas;
  CLUSTERSIM_CHECK(ctas_ >= 0, "collective CTAs not negative");
  if (running_) {
    const double elapsed = static_cast<double>((now - mark_).count());
    remaining_ = std::max(
        0.0, remaining_ - (held_before == 0 ? elapsed : elapsed * (sms_ - held_before) / sms_));
    mark_ = now;
  }
  // A spell begins with the first collective after a gap; the last one ending closes it.
  if (ctas_before == 0 && ctas_ > 0 && spell_end_ != now) spell_start_work_ = work_done(now);
  if (ctas_before > 0 && ctas_ == 0) spell_end_ = now;
  if (!running_) return std::nullopt;
  return moved_end(now);
}

Picoseconds CollectiveSmContention::work_done(Picoseconds now) const {
  if (!running_) return finished_work_;
  const int held = held_sms();
  const double share = held == 0 ? 1.0 : static_cast<double>(sms_ - held) / sms_;
  const double left =
      std::max(0.0, remaining_ - static_cast<double>((now - mark_).count()) * share);
  return finished_work_ + work_ - Picoseconds(static_cast<int64_t>(std::llround(left)));
}

void CollectiveSmContention::record_work_beside(Picoseconds now, Picoseconds chain_start_work) {
  const Picoseconds done = work_done(now);
  work_beside_ += std::max(Picoseconds(0), done - std::max(chain_start_work, recorded_until_work_));
  recorded_until_work_ = done;
}

void CollectiveSmContention::record_work_beside_spell(Picoseconds now) {
  if (ctas_ > 0) record_work_beside(now, spell_start_work_);
}

std::optional<Picoseconds> CollectiveSmContention::moved_end(Picoseconds now) {
  const std::optional<Picoseconds> end = end_from(now);
  waiting_ = !end;
  if (end) end_ = *end;
  return end;
}

void CollectiveSmContention::finish() {
  running_ = false;
  stretch_ += end_ - started_ - work_;
  finished_work_ += work_;
}

void CollectiveSmContention::translate(Picoseconds delta) {
  mark_ += delta;
  end_ += delta;
  started_ += delta;
  if (spell_end_) *spell_end_ += delta;
}

}  // namespace clustersim
