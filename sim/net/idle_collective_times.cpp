// Collective times on an idle network, looked up by the collectives started together.
#include "sim/net/idle_collective_times.h"

#include <algorithm>
#include <bit>

#include "sim/util/fnv1a.h"

namespace clustersim {

size_t IdleCollectiveTimes::CollectivesHash::operator()(
    std::span<const Collective> collectives) const {
  Fnv1a hash;
  for (const Collective& c : collectives) {
    hash.add(static_cast<uint64_t>(c.op));
    hash.add(static_cast<uint64_t>(c.algorithm));
    hash.add(c.dispatcher_kernels);
    hash.add(std::bit_cast<uint64_t>(c.bytes));
    hash.add(c.gpus.size());
    for (int gpu : c.gpus) hash.add(static_cast<uint32_t>(gpu));
  }
  return static_cast<size_t>(hash.value());
}

bool IdleCollectiveTimes::SameCollectives::operator()(std::span<const Collective> a,
                                                      std::span<const Collective> b) const {
  // Sizes by their bits, not their values: the same bits give the same simulation.
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const Collective& x, const Collective& y) {
                      return x.op == y.op && x.algorithm == y.algorithm &&
                             x.dispatcher_kernels == y.dispatcher_kernels &&
                             std::bit_cast<uint64_t>(x.bytes) == std::bit_cast<uint64_t>(y.bytes) &&
                             x.gpus == y.gpus;
                    });
}

std::optional<Picoseconds> IdleCollectiveTimes::find(
    std::span<const Collective> collectives) const {
  auto it = times_.find(collectives);
  if (it == times_.end()) return std::nullopt;
  return it->second;
}

void IdleCollectiveTimes::keep(std::span<const Collective> collectives, Picoseconds time) {
  if (collectives_kept_ + collectives.size() > kMaxCollectives) {
    times_.clear();
    collectives_kept_ = 0;
  }
  collectives_kept_ += collectives.size();
  times_.emplace(std::vector<Collective>(collectives.begin(), collectives.end()), time);
}

}  // namespace clustersim
