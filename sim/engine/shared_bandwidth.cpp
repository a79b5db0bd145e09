// Fluid transfers at max-min fair rates, recomputed per timestamp.
#include "sim/engine/shared_bandwidth.h"

#include <algorithm>
#include <cmath>

#include "sim/util/check.h"

namespace clustersim {
namespace {

// A transfer with no constraint moves at this rate: effectively instantly.
constexpr double kUnconstrainedRate = 1e30;

// Orders the heap of transfer ends: the earliest on top.
struct LaterEnd {
  template <class E>
  bool operator()(const E& a, const E& b) const {
    return a.time != b.time ? a.time > b.time : a.id > b.id;
  }
};

}  // namespace

int32_t SharedBandwidth::add_constraint(double bytes_per_second) {
  CLUSTERSIM_CHECK(bytes_per_second > 0, "a constraint needs a positive capacity");
  CLUSTERSIM_CHECK(transfers_.empty(), "constraints are added before any transfer starts");
  CLUSTERSIM_CHECK(capacities_.size() == owned_capacities_.size(),
                   "constraints added to capacities given at construction");
  owned_capacities_.push_back(bytes_per_second);
  capacities_ = owned_capacities_;
  return static_cast<int32_t>(capacities_.size() - 1);
}

void SharedBandwidth::make_constraint_state() {
  if (users_.size() == capacities_.size()) return;
  bytes_through_.resize(capacities_.size(), 0);
  users_.resize(capacities_.size());
  constraint_seen_.resize(capacities_.size(), 0);
}

int32_t SharedBandwidth::intern_uses(std::span<const MaxMinFair::Use> uses) {
  for (const MaxMinFair::Use& u : uses) {
    CLUSTERSIM_CHECK(static_cast<size_t>(u.constraint) < capacities_.size(),
                     "an unknown constraint");
  }
  return use_lists_.intern(uses);
}

int64_t SharedBandwidth::start_interned(double bytes, int32_t uses, Picoseconds latency,
                                        std::function<void()> done) {
  CLUSTERSIM_CHECK(bytes >= 0, "a transfer of negative size");
  if (transfers_.empty()) solver_.set_capacities(capacities_);
  int64_t id;
  if (free_ids_.empty()) {
    id = static_cast<int64_t>(transfers_.size());
    transfers_.emplace_back();
  } else {
    id = free_ids_.back();
    free_ids_.pop_back();
  }
  Transfer& t = transfers_[id];
  t.remaining_bytes = bytes;
  t.rate = 0;
  t.end = Picoseconds::max();
  t.uses = uses;
  t.done = std::move(done);
  make_constraint_state();
  for (const MaxMinFair::Use& u : uses_of(t)) {
    bytes_through_[u.constraint] += bytes * u.multiplicity;
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
  const auto id = static_cast<int64_t>(tag);
  Transfer& t = transfers_[id];
  t.active = true;
  t.activation = activations_++;
  t.updated = sim_->now();
  ++active_count_;
  ++stamp_;
  t.seen = stamp_;
  t.crowded = false;
  for (const MaxMinFair::Use& u : uses_of(t)) {
    for (int64_t other : users_[u.constraint]) {
      Transfer& o = transfers_[other];
      if (o.seen == stamp_) continue;
      o.seen = stamp_;
      add_neighbour(&o, id);
      add_neighbour(&t, other);
    }
    users_[u.constraint].push_back(id);
  }
  started_.push_back(id);
  sim_->request_settle(this);
}

void SharedBandwidth::add_neighbour(Transfer* t, int64_t neighbour) {
  if (t->crowded) return;
  if (t->neighbours.size() == kMaxNeighbours) {
    t->crowded = true;
    t->neighbours = {};  // its memory too: there may be many crowded transfers
    return;
  }
  t->neighbours.push_back(neighbour);
}

void SharedBandwidth::forget_neighbour(Transfer* t, int64_t neighbour) {
  if (t->crowded) return;
  *std::find(t->neighbours.begin(), t->neighbours.end(), neighbour) = t->neighbours.back();
  t->neighbours.pop_back();
}

void SharedBandwidth::describe_event(uint64_t tag, StateFingerprint* f) const {
  if (tag & kWakeUp) return f->add((tag & ~kWakeUp) == wake_up_generation_ ? 1 : 2);
  f->add(0);
  f->add_object(this, static_cast<int64_t>(tag));
}

void SharedBandwidth::describe_transfer(int64_t transfer, StateFingerprint* f) const {
  const Transfer& t = transfers_[transfer];
  f->add_object(this, transfer);
  f->add(static_cast<int64_t>(uses_of(t).size()));
  for (const MaxMinFair::Use& u : uses_of(t)) {
    f->add(u.constraint);
    f->add(u.multiplicity);
  }
  f->add_bits(t.remaining_bytes);
  f->add(t.active);
  if (!t.active) return;
  f->add_bits(t.rate);
  f->add_time(t.updated);
  f->add_time(t.end);
  f->add(static_cast<int64_t>(activations_ - t.activation));
}

void SharedBandwidth::fingerprint(StateFingerprint* f) const {
  const bool all_described = f->objects_of(this) == transfers_.size() - free_ids_.size();
  if (!all_described || !started_.empty() || !neighbours_of_ended_.empty() || !freed_.empty()) {
    f->make_incomparable();
  }
  f->add_handler(this);
  f->add_time(wake_up_at_);
}

void SharedBandwidth::translate(Picoseconds delta) {
  for (Transfer& t : transfers_) {
    t.updated += delta;
    if (t.end != Picoseconds::max()) t.end += delta;
  }
  for (End& end : ends_) end.time += delta.count();
  if (wake_up_at_ != Picoseconds::max()) wake_up_at_ += delta;
}

bool SharedBandwidth::stale(const End& end) const {
  const Transfer& t = transfers_[end.id];
  return !t.active || t.version != end.version;
}

void SharedBandwidth::pop_end() {
  std::pop_heap(ends_.begin(), ends_.end(), LaterEnd{});
  ends_.pop_back();
}

void SharedBandwidth::settle() {
  // Transfers end at their end time (rounded up to a whole picosecond when it was computed).
  finished_.clear();
  const int64_t now = sim_->now().count();
  while (!ends_.empty() && ends_.front().time <= now) {
    const End end = ends_.front();
    pop_end();
    if (stale(end)) continue;
    Transfer& t = transfers_[end.id];
    t.active = false;
    t.rate = 0;
    --active_count_;
    for (const MaxMinFair::Use& u : uses_of(t)) {
      std::vector<int64_t>& users = users_[u.constraint];
      *std::find(users.begin(), users.end(), end.id) = users.back();
      users.pop_back();
    }
    if (t.crowded) {
      // Its neighbours are the users left on its constraints: those that list it forget it, and
      // all are found again from its constraints.
      ++stamp_;
      for (const MaxMinFair::Use& u : uses_of(t)) {
        for (int64_t other : users_[u.constraint]) {
          Transfer& o = transfers_[other];
          if (o.crowded || o.seen == stamp_) continue;
          o.seen = stamp_;
          forget_neighbour(&o, end.id);
        }
        freed_.push_back(u.constraint);
      }
    } else {
      for (int64_t other : t.neighbours) {
        forget_neighbour(&transfers_[other], end.id);
        neighbours_of_ended_.push_back(other);
      }
      t.neighbours.clear();
    }
    finished_.push_back(end.id);
  }
  std::sort(finished_.begin(), finished_.end(), [&](int64_t a, int64_t b) {
    return transfers_[a].activation < transfers_[b].activation;
  });
  recompute_rates();
  schedule_wake_up();
  // A callback may start transfers, which settle later: finished_ is not touched before then.
  // Each id is free for reuse once its callback is taken out.
  for (size_t i = 0; i < finished_.size(); ++i) {
    std::function<void()> done = std::move(transfers_[finished_[i]].done);
    free_ids_.push_back(finished_[i]);
    if (done) done();
  }
}

void SharedBandwidth::collect_affected() {
  ++stamp_;
  affected_.clear();
  const auto visit_transfer = [&](int64_t id) {
    Transfer& t = transfers_[id];
    if (!t.active || t.seen == stamp_) return;
    t.seen = stamp_;
    affected_.push_back(id);
  };
  const auto visit_constraint = [&](int32_t c) {
    if (constraint_seen_[c] == stamp_) return;
    constraint_seen_[c] = stamp_;
    for (int64_t id : users_[c]) visit_transfer(id);
  };
  for (int64_t id : started_) visit_transfer(id);
  for (int64_t id : neighbours_of_ended_) visit_transfer(id);
  for (int32_t c : freed_) visit_constraint(c);
  started_.clear();
  neighbours_of_ended_.clear();
  freed_.clear();
  // affected_ grows while it is scanned: a breadth-first search over neighbours, listed or (for
  // a crowded transfer) found on its constraints.
  for (size_t i = 0; i < affected_.size(); ++i) {
    const Transfer& t = transfers_[affected_[i]];
    if (!t.crowded) {
      for (int64_t id : t.neighbours) visit_transfer(id);
      continue;
    }
    for (const MaxMinFair::Use& u : uses_of(t)) visit_constraint(u.constraint);
  }
  std::sort(affected_.begin(), affected_.end(), [&](int64_t a, int64_t b) {
    return transfers_[a].activation < transfers_[b].activation;
  });
}

void SharedBandwidth::recompute_rates() {
  collect_affected();
  flows_.clear();
  for (int64_t id : affected_) flows_.push_back(transfers_[id].uses);
  const std::vector<double>& rates = solver_.solve(flows_, use_lists_, kUnconstrainedRate);
  const Picoseconds now = sim_->now();
  for (size_t i = 0; i < affected_.size(); ++i) {
    Transfer& t = transfers_[affected_[i]];
    if (rates[i] == t.rate) continue;  // same rate: same end
    CLUSTERSIM_CHECK(rates[i] > 0, "an active transfer without bandwidth would never finish");
    t.remaining_bytes = std::max(0.0, t.remaining_bytes - t.rate * (now - t.updated).seconds());
    t.updated = now;
    t.rate = rates[i];
    t.end = now + transfer_time(t.remaining_bytes, t.rate);
    ends_.push_back({t.end.count(), affected_[i], ++t.version});
    std::push_heap(ends_.begin(), ends_.end(), LaterEnd{});
  }
}

void SharedBandwidth::schedule_wake_up() {
  while (!ends_.empty() && stale(ends_.front())) pop_end();
  const Picoseconds next = ends_.empty() ? Picoseconds::max() : Picoseconds(ends_.front().time);
  // The wake-up already queued for that time serves; any other is made stale.
  if (next == wake_up_at_ && next > sim_->now()) return;
  ++wake_up_generation_;
  wake_up_at_ = next;
  if (next != Picoseconds::max()) sim_->schedule_at(next, this, kWakeUp | wake_up_generation_);
}

}  // namespace clustersim
