// Fluid transfers at max-min fair rates, recomputed per timestamp.
#include "sim/engine/shared_bandwidth.h"

#include <algorithm>
#include <cmath>

#include "sim/util/check.h"

namespace clustersim {
namespace {

// A transfer with no constraint moves at this rate: effectively instantly.
constexpr double kUnconstrainedRate = 1e30;

}  // namespace

int32_t SharedBandwidth::add_constraint(double bytes_per_second) {
  CLUSTERSIM_CHECK(bytes_per_second > 0, "a constraint needs a positive capacity");
  CLUSTERSIM_CHECK(transfers_.empty(), "constraints are added before any transfer starts");
  capacities_.push_back(bytes_per_second);
  bytes_through_.push_back(0);
  return static_cast<int32_t>(capacities_.size() - 1);
}

int64_t SharedBandwidth::start(double bytes, const std::vector<MaxMinFair::Use>& uses,
                               Picoseconds latency, std::function<void()> done) {
  CLUSTERSIM_CHECK(bytes >= 0, "a transfer of negative size");
  if (transfers_.empty()) solver_.set_capacities(capacities_);
  const auto id = static_cast<int64_t>(transfers_.size());
  transfers_.push_back({bytes, 0, uses_.size(), uses.size(), std::move(done)});
  for (const MaxMinFair::Use& u : uses) {
    bytes_through_[u.constraint] += bytes * u.multiplicity;
    uses_.push_back(u);
  }
  sim_->schedule_after(latency, this, static_cast<uint64_t>(id));
  return id;
}

double SharedBandwidth::rate(int64_t transfer) const {
  const Transfer& t = transfers_[transfer];
  return t.active ? t.rate : 0;
}

void SharedBandwidth::on_event(uint64_t tag) {
  if (tag & kWakeUp) {
    if ((tag & ~kWakeUp) == wake_up_generation_) sim_->request_settle(this);
    return;
  }
  advance_to_now();  // progress so far belongs to the old set of transfers
  transfers_[tag].active = true;
  active_.push_back(static_cast<int64_t>(tag));
  sim_->request_settle(this);
}

void SharedBandwidth::advance_to_now() {
  const double elapsed_s = (sim_->now() - last_advance_).seconds();
  last_advance_ = sim_->now();
  if (elapsed_s <= 0) return;
  for (int64_t id : active_) {
    Transfer& t = transfers_[id];
    t.remaining_bytes -= t.rate * elapsed_s;
  }
}

void SharedBandwidth::settle() {
  advance_to_now();
  // A transfer is done when less than a picosecond of work is left at its rate (its end time
  // was rounded up to a whole picosecond).
  finished_.clear();
  std::erase_if(active_, [&](int64_t id) {
    const Transfer& t = transfers_[id];
    if (t.remaining_bytes > t.rate * 1e-12 && t.remaining_bytes > 0) return false;
    finished_.push_back(id);
    return true;
  });
  recompute_rates();
  schedule_wake_up();
  // A callback may start transfers, which settle later: finished_ is not touched before then.
  for (size_t i = 0; i < finished_.size(); ++i) {
    Transfer& t = transfers_[finished_[i]];
    t.active = false;
    t.rate = 0;
    std::function<void()> done = std::move(t.done);
    if (done) done();
  }
}

void SharedBandwidth::recompute_rates() {
  flows_.clear();
  for (int64_t id : active_) {
    const Transfer& t = transfers_[id];
    flows_.emplace_back(uses_.data() + t.first_use, t.use_count);
  }
  solver_.solve(flows_, kUnconstrainedRate, &rates_);
  for (size_t i = 0; i < active_.size(); ++i) transfers_[active_[i]].rate = rates_[i];
}

void SharedBandwidth::schedule_wake_up() {
  ++wake_up_generation_;
  Picoseconds next = Picoseconds::max();
  for (int64_t id : active_) {
    const Transfer& t = transfers_[id];
    CLUSTERSIM_CHECK(t.rate > 0, "an active transfer without bandwidth would never finish");
    next = std::min(next, sim_->now() + transfer_time(t.remaining_bytes, t.rate));
  }
  if (next != Picoseconds::max()) sim_->schedule_at(next, this, kWakeUp | wake_up_generation_);
}

}  // namespace clustersim
