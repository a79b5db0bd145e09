// The symmetry that lets a simulation run one tensor-parallel rank for all of them.
//
// Tensor-parallel ranks sit innermost (rank r of a group is GPU base + r, base a multiple of the
// group size t, inside one NVLink domain: a node, or the trays of an NVL72 rack), and every rank
// does the same work at the same time. If XOR-ing every GPU's index in its NVLink domain with j
// (j < t, t a power of two) is an automorphism of the cluster
// graph — it maps every link onto a link of the same kind, capacity and latency — then rank j's
// traffic is the image of rank 0's, the max-min fair rates are invariant under the map, and every
// rank's transfer progresses at the same rate at every instant. Rank 0's transfers then stand for
// all t: a link L of rank 0's route counts |stabiliser of L| times per use, against the capacity
// of one representative of L's orbit (the load of every link of the orbit is the same).
//
// This file finds the automorphisms and answers orbit questions; sim/net/network.h uses them.
// Immutable once built; safe to share between threads.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/net/topology.h"

namespace clustersim {

class RankSymmetry {
 public:
  // The symmetries of `topology` for XOR-ing GPU indices in their NVLink domain with every j below
  // the largest power of two t that divides every domain's GPU count and for which each such map
  // is an automorphism (max_ranks() == 1 when there is none).
  explicit RankSymmetry(const Topology& topology);

  // Largest tensor-parallel size whose ranks are interchangeable.
  int max_ranks() const { return max_ranks_; }
  // The link `link` maps onto when local indices are XOR-ed with j. Requires: j < max_ranks().
  int32_t image(int j, int32_t link) const {
    return j == 0 ? link : images_[(j - 1) * link_count_ + link];
  }
  // The representative of `link`'s orbit under the maps j < ranks (its smallest link id), and
  // how many of those maps fix it (ranks / orbit size). Requires: ranks <= max_ranks(), a power
  // of two.
  int32_t representative(int32_t link, int ranks) const;
  int stabiliser_size(int32_t link, int ranks) const;

 private:
  int max_ranks_ = 1;
  size_t link_count_ = 0;
  std::vector<int32_t> images_;  // (j - 1) * link_count_ + link, for j in [1, max_ranks_)
};

}  // namespace clustersim
