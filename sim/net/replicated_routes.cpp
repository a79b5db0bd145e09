// Routes folded onto the rank symmetry's orbits, kept per topology.
#include "sim/net/replicated_routes.h"

#include <algorithm>
#include <bit>

namespace clustersim {

void merge_uses(std::vector<MaxMinFair::Use>* uses) {
  std::sort(uses->begin(), uses->end(), [](const MaxMinFair::Use& a, const MaxMinFair::Use& b) {
    return a.constraint < b.constraint;
  });
  size_t kept = 0;
  for (const MaxMinFair::Use& use : *uses) {
    if (kept > 0 && (*uses)[kept - 1].constraint == use.constraint) {
      (*uses)[kept - 1].multiplicity += use.multiplicity;
    } else {
      (*uses)[kept++] = use;
    }
  }
  uses->resize(kept);
}

void fold_replicas(const RankSymmetry& symmetry, int replicas, std::vector<MaxMinFair::Use>* uses) {
  // A link's orbit carries the same load on each of its links: per replica, every use of a link
  // of the orbit lands on a given one as often as the symmetries fixing it (rank_symmetry.h).
  for (MaxMinFair::Use& use : *uses) {
    use.constraint = symmetry.representative(use.constraint, replicas);
    use.multiplicity *= symmetry.stabiliser_size(use.constraint, replicas);
  }
  merge_uses(uses);
}

const ReplicatedRoutes::Route& ReplicatedRoutes::route(int from, int to, int replicas,
                                                       const Topology& t) {
  const uint64_t key = (static_cast<uint64_t>(from) << 32) | static_cast<uint32_t>(to);
  auto [it, inserted] = routes_[std::countr_zero(static_cast<unsigned>(replicas))].try_emplace(key);
  Route& route = it->second;
  if (!inserted) return route;
  const RankSymmetry& symmetry = t.rank_symmetry();
  const std::vector<int32_t>& links = t.route(from, to);
  route.symmetric = true;
  for (int r = 1; r < replicas && route.symmetric; ++r) {
    const std::vector<int32_t>& replica = t.route(from + r, to + r);
    route.symmetric = replica.size() == links.size();
    for (size_t i = 0; i < links.size() && route.symmetric; ++i) {
      route.symmetric = replica[i] == symmetry.image(r, links[i]);
    }
  }
  for (int32_t link : links) route.uses.push_back({link, 1});
  fold_replicas(symmetry, replicas, &route.uses);
  return route;
}

}  // namespace clustersim
