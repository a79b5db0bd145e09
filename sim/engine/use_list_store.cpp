// Interning of use lists by a hash of their contents, equal lists compared in full.
#include "sim/engine/use_list_store.h"

#include <algorithm>

#include "sim/util/fnv1a.h"

namespace clustersim {

int32_t UseListStore::intern(std::span<const MaxMinFair::Use> uses) {
  Fnv1a hash;
  for (const MaxMinFair::Use& u : uses) {
    hash.add(static_cast<uint32_t>(u.constraint));
    hash.add(static_cast<uint32_t>(u.multiplicity));
  }
  const auto [first, last] = by_hash_.equal_range(hash.value());
  for (auto it = first; it != last; ++it) {
    const std::span<const MaxMinFair::Use> stored = get(it->second);
    if (std::equal(stored.begin(), stored.end(), uses.begin(), uses.end(),
                   [](const MaxMinFair::Use& a, const MaxMinFair::Use& b) {
                     return a.constraint == b.constraint && a.multiplicity == b.multiplicity;
                   })) {
      return it->second;
    }
  }
  const auto id = static_cast<int32_t>(size());
  uses_.insert(uses_.end(), uses.begin(), uses.end());
  begin_.push_back(uses_.size());
  by_hash_.emplace(hash.value(), id);
  return id;
}

}  // namespace clustersim
