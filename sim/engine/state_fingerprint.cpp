// Canonical records of simulation states.
#include "sim/engine/state_fingerprint.h"

#include <bit>
#include <limits>

#include "sim/util/fnv1a.h"

namespace clustersim {

void StateFingerprint::add_time(Picoseconds time) {
  add(time == Picoseconds::max() ? std::numeric_limits<int64_t>::min() : (time - now_).count());
}

void StateFingerprint::add_bits(double value) { add(std::bit_cast<int64_t>(value)); }

void StateFingerprint::add_object(const void* owner, int64_t id) {
  auto [it, inserted] = objects_.try_emplace({owner, id}, static_cast<int64_t>(objects_.size()));
  if (inserted) ++objects_per_owner_[owner];
  add(it->second);
}

size_t StateFingerprint::objects_of(const void* owner) const {
  auto it = objects_per_owner_.find(owner);
  return it == objects_per_owner_.end() ? 0 : it->second;
}

uint64_t StateFingerprint::hash() const {
  Fnv1a hash;
  for (int64_t word : words_) hash.add(static_cast<uint64_t>(word));
  return hash.value();
}

}  // namespace clustersim
