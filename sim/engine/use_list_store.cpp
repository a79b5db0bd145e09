// Interning of use lists by a hash of their contents, equal lists compared in full.
#include "sim/engine/use_list_store.h"

#include <algorithm>

namespace clustersim {

int32_t UseListStore::intern(std::span<const MaxMinFair::Use> uses) {
  uint64_t hash = 14695981039346656037ull;  // FNV-1a's offset basis and prime, per field
  for (const MaxMinFair::Use& u : uses) {
    hash = (hash ^ static_cast<uint32_t>(u.constraint)) * 1099511628211ull;
    hash = (hash ^ static_cast<uint32_t>(u.multiplicity)) * 1099511628211ull;
  }
  const auto [first, last] = by_hash_.equal_range(hash);
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
  by_hash_.emplace(hash, id);
  return id;
}

}  // namespace clustersim
