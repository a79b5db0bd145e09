// The times of collectives on an idle network kept per topology (Topology::idle_collective_times),
// for collective_time and concurrent_collectives_time: a sweep times the same collectives on the
// same cluster configuration after configuration (NCCL's choice among ring, tree and NVLS for a
// data-parallel group's buckets, a tensor-parallel group's all-reduces, an expert group's
// all-to-alls beside the stage's others), and each time is a simulation on an idle network that
// depends on nothing but the topology and the collectives started together (each one's operation,
// GPUs in order, size, algorithm and kernels, in the order they start). So collectives timed
// before get the time their simulation gave then, bit for bit, without simulating them again.
//
// At most kMaxCollectives are kept; when full, all are forgotten (the next calls refill it), so
// memory stays bounded and no time depends on what was kept. Not thread-safe, as the topology's
// cached routes.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "sim/net/collective.h"

namespace clustersim {

class IdleCollectiveTimes {
 public:
  static constexpr size_t kMaxCollectives = 1 << 12;

  // The time kept for `collectives` started together, if any.
  std::optional<Picoseconds> find(std::span<const Collective> collectives) const;
  // Keeps `time` as theirs.
  void keep(std::span<const Collective> collectives, Picoseconds time);

 private:
  // Hash and equality of a list of collectives, kept (a vector) or looked up (a span).
  struct CollectivesHash {
    using is_transparent = void;
    size_t operator()(std::span<const Collective> collectives) const;
  };
  struct SameCollectives {
    using is_transparent = void;
    bool operator()(std::span<const Collective> a, std::span<const Collective> b) const;
  };
  std::unordered_map<std::vector<Collective>, Picoseconds, CollectivesHash, SameCollectives>
      times_;
  size_t collectives_kept_ = 0;  // in times_
};

}  // namespace clustersim
