// Token FIFO, waiters on both sides and stall accounting of a BoundedQueue.
#include "sim/engine/bounded_queue.h"

#include <algorithm>
#include <utility>

#include "sim/util/check.h"

namespace clustersim {

BoundedQueue::BoundedQueue(Simulation* sim, uint64_t capacity) : sim_(sim), capacity_(capacity) {
  CLUSTERSIM_CHECK(capacity >= 1, "a bounded queue of capacity 0");
}

void BoundedQueue::put(uint64_t token, std::function<void()> accepted) {
  if (!consumers_.empty()) {
    CLUSTERSIM_CHECK(tokens_.empty(), "consumers wait on a non-empty queue");
    Consumer consumer = std::move(consumers_.front());
    consumers_.pop_front();
    stall_time_ += sim_->now() - consumer.since;
    deliver(token, std::move(consumer.got));
    accept(std::move(accepted));
    return;
  }
  if (tokens_.size() < capacity_) {
    CLUSTERSIM_CHECK(producers_.empty(), "producers blocked on a queue with room");
    tokens_.push_back(token);
    max_occupancy_ = std::max<uint64_t>(max_occupancy_, tokens_.size());
    accept(std::move(accepted));
    return;
  }
  producers_.push_back({token, std::move(accepted), sim_->now()});
}

void BoundedQueue::get(std::function<void(uint64_t)> got) {
  CLUSTERSIM_CHECK(got != nullptr, "get() without a callback");
  if (tokens_.empty()) {
    consumers_.push_back({std::move(got), sim_->now()});
    return;
  }
  deliver(tokens_.front(), std::move(got));
  tokens_.pop_front();
  if (producers_.empty()) return;
  // The slot just freed goes to the oldest blocked producer.
  Producer producer = std::move(producers_.front());
  producers_.pop_front();
  producer_block_time_ += sim_->now() - producer.since;
  tokens_.push_back(producer.token);
  accept(std::move(producer.accepted));
}

void BoundedQueue::accept(std::function<void()> accepted) {
  ++tokens_accepted_;
  if (!accepted) return;
  accepting_.push_back(std::move(accepted));
  // Zero-delay events at one timestamp run in scheduling order, so they pop the FIFOs in order.
  sim_->schedule_after(Picoseconds(0), this, kAccepted);
}

void BoundedQueue::deliver(uint64_t token, std::function<void(uint64_t)> got) {
  ++tokens_delivered_;
  delivering_.push_back({token, std::move(got)});
  sim_->schedule_after(Picoseconds(0), this, kDelivered);
}

void BoundedQueue::on_event(uint64_t tag) {
  if (tag == kAccepted) {
    CLUSTERSIM_CHECK(!accepting_.empty(), "an accept event without a pending callback");
    std::function<void()> accepted = std::move(accepting_.front());
    accepting_.pop_front();
    accepted();
    return;
  }
  CLUSTERSIM_CHECK(tag == kDelivered && !delivering_.empty(), "a delivery event without a token");
  Delivery delivery = std::move(delivering_.front());
  delivering_.pop_front();
  delivery.got(delivery.token);
}

}  // namespace clustersim
