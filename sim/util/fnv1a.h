// FNV-1a, the 64-bit Fowler-Noll-Vo hash, over a sequence of integer words: what the engine's and
// the network's lookup tables hash their keys with, what a state fingerprint reduces to, and the
// catalog's fingerprint of each file's bytes (so its values must never change).
#pragma once

#include <cstdint>

namespace clustersim {

class Fnv1a {
 public:
  // Mixes in one word (a narrower value widened without its sign: pass an int32_t as uint32_t).
  constexpr void add(uint64_t word) { hash_ = (hash_ ^ word) * kPrime; }
  constexpr uint64_t value() const { return hash_; }

 private:
  static constexpr uint64_t kOffsetBasis = 14695981039346656037ull;
  static constexpr uint64_t kPrime = 1099511628211ull;
  uint64_t hash_ = kOffsetBasis;
};

}  // namespace clustersim
