// Resident prefix blocks, their users and their eviction order.
#include "sim/serve/prefix_cache.h"

#include <algorithm>

#include "sim/util/check.h"

namespace clustersim {

int64_t PrefixCache::resident(int32_t prefix, int64_t blocks) const {
  const auto it = chains_.find(prefix);
  if (it == chains_.end()) return 0;
  return std::min<int64_t>(blocks, static_cast<int64_t>(it->second.size()));
}

int64_t PrefixCache::unused(int32_t prefix, int64_t blocks) const {
  const auto it = chains_.find(prefix);
  if (it == chains_.end()) return 0;
  const Chain& chain = it->second;
  const int64_t n = std::min<int64_t>(blocks, static_cast<int64_t>(chain.size()));
  // Users fall along the chain: the unused blocks are its last ones.
  const auto first_unused = std::partition_point(chain.begin(), chain.begin() + n,
                                                 [](const Block& b) { return b.users > 0; });
  return (chain.begin() + n) - first_unused;
}

void PrefixCache::untrack(int32_t prefix) {
  const Chain& chain = chains_[prefix];
  if (!chain.empty() && chain.back().users == 0) tails_.erase({chain.back().released, prefix});
}

void PrefixCache::track(int32_t prefix) {
  const Chain& chain = chains_[prefix];
  if (!chain.empty() && chain.back().users == 0) tails_.insert({chain.back().released, prefix});
}

void PrefixCache::acquire(int32_t prefix, int64_t blocks) {
  if (blocks <= 0) return;
  untrack(prefix);
  Chain& chain = chains_[prefix];
  CLUSTERSIM_CHECK(blocks <= static_cast<int64_t>(chain.size()), "acquiring blocks not resident");
  for (int64_t i = 0; i < blocks; ++i) {
    if (chain[i].users++ == 0) --unused_;
  }
  track(prefix);
}

int64_t PrefixCache::extend(int32_t prefix, int64_t index) {
  untrack(prefix);
  Chain& chain = chains_[prefix];
  CLUSTERSIM_CHECK(index <= static_cast<int64_t>(chain.size()), "a prefix block beyond the chain");
  int64_t freed = 0;
  if (index == static_cast<int64_t>(chain.size())) {
    chain.push_back(Block{});
    ++resident_;
  } else if (chain[index].users == 0) {
    --unused_;
  } else {
    freed = 1;
  }
  ++chain[index].users;
  track(prefix);
  return freed;
}

int64_t PrefixCache::release(int32_t prefix, int64_t blocks) {
  if (blocks <= 0) return 0;
  untrack(prefix);
  Chain& chain = chains_[prefix];
  const uint64_t now = ++releases_;
  int64_t freed = 0;
  for (int64_t i = 0; i < blocks; ++i) {
    chain[i].released = now;
    if (--chain[i].users == 0) ++freed;
  }
  unused_ += freed;
  track(prefix);
  return freed;
}

void PrefixCache::evict_to(int64_t limit) {
  while (unused_ > limit) {
    const int32_t prefix = tails_.begin()->second;
    tails_.erase(tails_.begin());
    Chain& chain = chains_[prefix];
    chain.pop_back();
    --unused_;
    --resident_;
    track(prefix);
  }
}

}  // namespace clustersim
