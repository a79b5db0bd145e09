// Collective times on an idle network, looked up by the whole collective.
#include "sim/net/idle_collective_times.h"

#include <bit>

#include "sim/util/fnv1a.h"

namespace clustersim {

size_t IdleCollectiveTimes::CollectiveHash::operator()(const Collective& c) const {
  Fnv1a hash;
  hash.add(static_cast<uint64_t>(c.op));
  hash.add(static_cast<uint64_t>(c.algorithm));
  hash.add(c.dispatcher_kernels);
  hash.add(std::bit_cast<uint64_t>(c.bytes));
  for (int gpu : c.gpus) hash.add(static_cast<uint32_t>(gpu));
  return static_cast<size_t>(hash.value());
}

bool IdleCollectiveTimes::SameCollective::operator()(const Collective& a,
                                                     const Collective& b) const {
  // The size's bits, not its value: the same bits give the same simulation.
  return a.op == b.op && a.algorithm == b.algorithm &&
         a.dispatcher_kernels == b.dispatcher_kernels &&
         std::bit_cast<uint64_t>(a.bytes) == std::bit_cast<uint64_t>(b.bytes) && a.gpus == b.gpus;
}

std::optional<Picoseconds> IdleCollectiveTimes::find(const Collective& c) const {
  auto it = times_.find(c);
  if (it == times_.end()) return std::nullopt;
  return it->second;
}

void IdleCollectiveTimes::keep(const Collective& c, Picoseconds time) {
  if (times_.size() >= kMaxCollectives) times_.clear();
  times_.emplace(c, time);
}

}  // namespace clustersim
