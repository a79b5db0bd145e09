// BoundedQueue: a FIFO of capacity C between producers and consumers (a prefetch queue between a
// data loader and the GPU). Owns the tokens, both sides' waiters, and the stall accounting.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>

#include "sim/engine/simulation.h"
#include "sim/util/units.h"

namespace clustersim {

// Holds up to `capacity` opaque tokens (a batch id, a sample index: the queue never reads them).
// put() waits while the queue is full, get() while it is empty; waiters on each side are served
// first come, first served. A token put while a consumer waits goes straight to that consumer and
// never occupies the queue. Every callback runs in its own zero-delay event, never inside the
// put() or get() that caused it; callbacks made ready at one timestamp run in the order they
// became ready.
//
// Measures what an input pipeline asks: the most tokens ever held, the total time consumers
// waited for a token (data stall) and the total time producers waited for room.
//
// Ownership: borrows `sim`, which must outlive this object. The queue schedules events with itself
// as handler, so it must outlive them (destroy it after the simulation stops running). Not
// thread-safe, like its Simulation.
class BoundedQueue final : public EventHandler {
 public:
  // Requires: capacity >= 1.
  BoundedQueue(Simulation* sim, uint64_t capacity);
  BoundedQueue(const BoundedQueue&) = delete;
  BoundedQueue& operator=(const BoundedQueue&) = delete;

  // Offers `token`; `accepted` runs once the queue (or a waiting consumer) has taken it: at now()
  // if there is room, else when a get() makes room. `accepted` may be empty (no event is then
  // scheduled for it). Cost: O(1) amortised, plus up to two events (O(log events queued)).
  void put(uint64_t token, std::function<void()> accepted);

  // Asks for the oldest token; `got(token)` runs at now() if one is held, else at the put() that
  // brings one. Requires: `got` non-empty. Cost: as put().
  void get(std::function<void(uint64_t)> got);

  uint64_t capacity() const { return capacity_; }
  // Tokens held now, and the most ever held at once (<= capacity()).
  uint64_t size() const { return tokens_.size(); }
  uint64_t max_occupancy() const { return max_occupancy_; }
  // Producers and consumers waiting now.
  uint64_t blocked_producers() const { return producers_.size(); }
  uint64_t waiting_consumers() const { return consumers_.size(); }
  // Sum over finished get() waits of (time the token came - time get() was called); a consumer
  // still waiting is not counted yet. Likewise for put() waits in producer_block_time().
  Picoseconds stall_time() const { return stall_time_; }
  Picoseconds producer_block_time() const { return producer_block_time_; }
  // Tokens taken by the queue or a consumer so far, and tokens handed to consumers so far.
  uint64_t tokens_accepted() const { return tokens_accepted_; }
  uint64_t tokens_delivered() const { return tokens_delivered_; }

 private:
  enum Tag : uint64_t { kAccepted = 0, kDelivered = 1 };
  struct Producer {
    uint64_t token;
    std::function<void()> accepted;
    Picoseconds since;
  };
  struct Consumer {
    std::function<void(uint64_t)> got;
    Picoseconds since;
  };
  struct Delivery {
    uint64_t token;
    std::function<void(uint64_t)> got;
  };

  void accept(std::function<void()> accepted);
  void deliver(uint64_t token, std::function<void(uint64_t)> got);
  void on_event(uint64_t tag) override;

  Simulation* sim_;
  uint64_t capacity_;
  std::deque<uint64_t> tokens_;
  std::deque<Producer> producers_;               // non-empty only while tokens_ is full
  std::deque<Consumer> consumers_;               // non-empty only while tokens_ is empty
  std::deque<std::function<void()>> accepting_;  // callbacks whose kAccepted event is pending
  std::deque<Delivery> delivering_;              // callbacks whose kDelivered event is pending
  uint64_t max_occupancy_ = 0;
  uint64_t tokens_accepted_ = 0;
  uint64_t tokens_delivered_ = 0;
  Picoseconds stall_time_;
  Picoseconds producer_block_time_;
};

}  // namespace clustersim
