// Tests of BoundedQueue: a slow consumer blocks the producer, a fast one stalls, both sides FIFO.
#include "sim/engine/bounded_queue.h"

#include <catch2/catch.hpp>
#include <vector>

namespace clustersim {
namespace {

// Produces `items` tokens 0, 1, ...: works `per_item`, puts the token, and starts the next item
// once the queue has accepted it.
struct Producer {
  Producer(Simulation* s, BoundedQueue* q, Picoseconds p, uint64_t n)
      : sim(s), queue(q), per_item(p), items(n) {}
  Simulation* sim;
  BoundedQueue* queue;
  Picoseconds per_item;
  uint64_t items;
  uint64_t next = 0;
  std::vector<int64_t> put_at, accepted_at;

  void start() {
    sim->call_after(per_item, [this] { produce(); });
  }
  void produce() {
    put_at.push_back(sim->now().count());
    queue->put(next++, [this] {
      accepted_at.push_back(sim->now().count());
      if (next < items) start();
    });
  }
};

// Takes `items` tokens: gets one, works `per_item` on it, then asks for the next.
struct Consumer {
  Consumer(Simulation* s, BoundedQueue* q, Picoseconds p, uint64_t n)
      : sim(s), queue(q), per_item(p), items(n) {}
  Simulation* sim;
  BoundedQueue* queue;
  Picoseconds per_item;
  uint64_t items;
  std::vector<uint64_t> tokens;
  std::vector<int64_t> got_at;

  void start() {
    queue->get([this](uint64_t token) {
      tokens.push_back(token);
      got_at.push_back(sim->now().count());
      if (tokens.size() < items) sim->call_after(per_item, [this] { start(); });
    });
  }
};

TEST_CASE("a slow consumer fills the queue and the producer blocks") {
  // Producer 1 item / 10 ps, consumer 1 item / 30 ps, capacity 2, 8 items.
  Simulation sim;
  BoundedQueue queue(&sim, 2);
  Producer producer(&sim, &queue, Picoseconds(10), 8);
  Consumer consumer(&sim, &queue, Picoseconds(30), 8);
  consumer.start();
  producer.start();
  sim.run();

  // The consumer waits from 0 for token 0 (put at 10), then takes token k at 10 + 30k.
  CHECK(consumer.got_at == std::vector<int64_t>{10, 40, 70, 100, 130, 160, 190, 220});
  CHECK(consumer.tokens == std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6, 7});
  // Token 0 goes straight to the waiting consumer; tokens 1 and 2 fill the queue (20, 30). From
  // then a put of token k is accepted when the consumer takes token k - 2, that is at
  // max(put_k, 10 + 30(k - 2)): token 3 at max(40, 40) = 40, token k >= 4 at 10 + 30(k - 2).
  CHECK(producer.accepted_at == std::vector<int64_t>{10, 20, 30, 40, 70, 100, 130, 160});
  // Puts come 10 ps after the previous accept.
  CHECK(producer.put_at == std::vector<int64_t>{10, 20, 30, 40, 50, 80, 110, 140});
  // Tokens 4..7 each wait 30 - 10 = 20 ps for room: 4 * 20.
  CHECK(queue.producer_block_time() == Picoseconds(80));
  CHECK(queue.max_occupancy() == 2);
  // The only consumer wait is the first: 10 - 0.
  CHECK(queue.stall_time() == Picoseconds(10));
  CHECK(queue.tokens_accepted() == 8);
  CHECK(queue.tokens_delivered() == 8);
  CHECK(queue.size() == 0);
}

TEST_CASE("a consumer faster than its producer accrues stall time") {
  // Producer 1 item / P = 30 ps, consumer 1 item / C = 10 ps, capacity 2, N = 5 items.
  Simulation sim;
  BoundedQueue queue(&sim, 2);
  Producer producer(&sim, &queue, Picoseconds(30), 5);
  Consumer consumer(&sim, &queue, Picoseconds(10), 5);
  consumer.start();
  producer.start();
  sim.run();

  // Token k is put at P(k + 1) and handed straight to the waiting consumer.
  CHECK(consumer.got_at == std::vector<int64_t>{30, 60, 90, 120, 150});
  // Stall = P (first wait, from 0) + (N - 1)(P - C) = 30 + 4 * 20 = 110.
  CHECK(queue.stall_time() == Picoseconds(110));
  CHECK(queue.max_occupancy() == 0);  // every token went straight to a consumer
  CHECK(queue.producer_block_time() == Picoseconds(0));
}

TEST_CASE("waiting consumers are served in the order they asked") {
  Simulation sim;
  BoundedQueue queue(&sim, 1);
  std::vector<uint64_t> first, second;
  queue.get([&](uint64_t token) { first.push_back(token); });
  queue.get([&](uint64_t token) { second.push_back(token); });
  sim.call_at(Picoseconds(5), [&] {
    queue.put(7, nullptr);
    queue.put(8, nullptr);
  });
  sim.run();
  CHECK(first == std::vector<uint64_t>{7});
  CHECK(second == std::vector<uint64_t>{8});
  // Both waited from 0 to 5: 2 * 5.
  CHECK(queue.stall_time() == Picoseconds(10));
  CHECK(queue.waiting_consumers() == 0);
}

TEST_CASE("blocked producers are admitted in the order they put, one per freed slot") {
  Simulation sim;
  BoundedQueue queue(&sim, 1);
  std::vector<int64_t> accepted_at(3, -1);
  for (uint64_t token = 0; token < 3; ++token) {
    queue.put(token, [&, token] { accepted_at[token] = sim.now().count(); });
  }
  CHECK(queue.size() == 1);
  CHECK(queue.blocked_producers() == 2);
  std::vector<uint64_t> got;
  for (int64_t t : {10, 20, 30}) {
    sim.call_at(Picoseconds(t), [&] { queue.get([&](uint64_t token) { got.push_back(token); }); });
  }
  sim.run();
  // Token 0 fills the queue at 0; each get at 10, 20 frees the slot for the next producer.
  CHECK(accepted_at == std::vector<int64_t>{0, 10, 20});
  CHECK(got == std::vector<uint64_t>{0, 1, 2});
  // Producer 1 waited 10 - 0, producer 2 waited 20 - 0.
  CHECK(queue.producer_block_time() == Picoseconds(30));
  CHECK(queue.max_occupancy() == 1);
  CHECK(queue.size() == 0);
}

}  // namespace
}  // namespace clustersim
