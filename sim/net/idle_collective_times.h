// collective_time's answers kept per topology (Topology::idle_collective_times): a sweep times the
// same collectives on the same cluster configuration after configuration (NCCL's choice among
// ring, tree and NVLS for a data-parallel group's buckets, a tensor-parallel group's
// all-reduces), and each answer is a simulation on an idle network that depends on nothing but
// the topology and the collective (its operation, GPUs in order, size, algorithm and kernels).
// So a collective timed before gets the time its simulation gave then, bit for bit, without
// simulating it again.
//
// At most kMaxCollectives are kept; when full, all are forgotten (the next calls refill it), so
// memory stays bounded and no answer depends on what was kept. Not thread-safe, as the
// topology's cached routes.
#pragma once

#include <cstddef>
#include <optional>
#include <unordered_map>

#include "sim/net/collective.h"

namespace clustersim {

class IdleCollectiveTimes {
 public:
  static constexpr size_t kMaxCollectives = 1 << 12;

  // The time kept for `c`, if any.
  std::optional<Picoseconds> find(const Collective& c) const;
  // Keeps `time` as c's.
  void keep(const Collective& c, Picoseconds time);

 private:
  struct CollectiveHash {
    size_t operator()(const Collective& c) const;
  };
  struct SameCollective {
    bool operator()(const Collective& a, const Collective& b) const;
  };
  std::unordered_map<Collective, Picoseconds, CollectiveHash, SameCollective> times_;
};

}  // namespace clustersim
