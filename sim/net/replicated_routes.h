// The routes of a replicated network (network.h: transfers from rank-0 GPUs standing for those of
// every tensor-parallel rank), kept per topology (Topology::replicated_routes): a route's uses
// folded onto its links' orbits under the rank symmetry (rank_symmetry.h), and whether every
// rank's route is the image of rank 0's. Both depend on nothing but the topology, the pair and
// the ranks, and every configuration of a sweep replicates the same pairs again, so each is
// resolved once per topology, not once per simulation. Also the folding itself, for uses that
// are not a route's. Internal to sim/net; not thread-safe, as the topology's cached routes.
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "sim/engine/max_min_fair.h"
#include "sim/net/rank_symmetry.h"

namespace clustersim {

// `uses` sorted by constraint, each constraint once with the sum of its multiplicities: the same
// links give the same uses whatever their order.
void merge_uses(std::vector<MaxMinFair::Use>* uses);

// `uses` moved onto their orbits' representatives under `replicas` ranks, counted per replica,
// merged. Requires: replicas <= symmetry.max_ranks(), a power of two.
void fold_replicas(const RankSymmetry& symmetry, int replicas, std::vector<MaxMinFair::Use>* uses);

class ReplicatedRoutes {
 public:
  struct Route {
    std::vector<MaxMinFair::Use> uses;  // route(from, to)'s, folded (fold_replicas)
    bool symmetric;  // every rank's route is the image of rank 0's under the symmetry
  };
  // The route from GPU `from` to GPU `to` for `replicas` ranks, resolved the first time. Valid
  // until the topology changes. Requires: `t` owns this; from != to; replicas a power of two in
  // [2, t.rank_symmetry().max_ranks()].
  const Route& route(int from, int to, int replicas, const Topology& t);

 private:
  // By log2(replicas), then by (from, to).
  std::array<std::unordered_map<uint64_t, Route>, 32> routes_;
};

}  // namespace clustersim
