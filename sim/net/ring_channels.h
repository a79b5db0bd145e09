// A ring's channels (NCCL's: one ring per GPU of an NVLink domain, each entering every domain at
// a different GPU), built from its GPU list and kept per topology (Topology::ring_channels) for
// start_ring: a simulation starts the same rings again and again (a data-parallel group's
// gradient buckets, every configuration of a sweep on the same cluster), and a ring's channels
// (their edges and summed step latencies) depend on nothing but the topology and the GPUs in
// order. So a ring built before is looked up, equal to a fresh build, not built again.
//
// At most kMaxEdges edges are kept (or one ring's, where a ring alone has more): a ring that would
// pass the bound forgets all kept before it, so memory stays bounded and nothing depends on what
// was kept. Internal to sim/net; not thread-safe, as the topology's cached routes.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/net/collective_algorithms.h"

namespace clustersim {

// One channel: its ring (or chain) of edges and their step latencies added up
// (summed_step_latencies).
struct RingChannel {
  std::vector<std::pair<int, int>> edges;
  ProtocolLatencies step_latency_sum;
};

struct RingChannels {
  size_t domains = 0;  // NVLink domains the GPUs span
  std::vector<RingChannel> channels;
};

// The channels of a ring over `gpus`, or of a chain (`chain`: broadcast's, from gpus[0], not
// closed), built afresh: across NVLink domains, one per GPU of the smallest domain, channel c
// taking the domains in order of first appearance, each domain's GPUs rotated by c.
RingChannels build_ring_channels(const std::vector<int>& gpus, bool chain, const Topology& t);

class RingChannelCache {
 public:
  static constexpr size_t kMaxEdges = 1 << 20;

  // build_ring_channels(gpus, chain, t), built the first time and kept. Valid until the next
  // call. Requires: `t` is the topology that owns this cache.
  const RingChannels& channels(const std::vector<int>& gpus, bool chain, const Topology& t);
  // Edges of the rings kept now.
  size_t edges_kept() const { return edges_kept_; }

 private:
  // Hash of a GPU list, kept (a vector) or looked up (a span).
  struct GpusHash {
    using is_transparent = void;
    size_t operator()(std::span<const int> gpus) const;
  };
  struct SameGpus {
    using is_transparent = void;
    bool operator()(std::span<const int> a, std::span<const int> b) const;
  };
  using Rings = std::unordered_map<std::vector<int>, RingChannels, GpusHash, SameGpus>;
  std::array<Rings, 2> rings_;  // rings, chains
  size_t edges_kept_ = 0;       // in rings_
};

}  // namespace clustersim
