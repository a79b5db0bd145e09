// SplitMix64's output function (Steele, Lea and Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014): a well-mixed 64-bit word from any word. What the network's route
// choice and speculative decoding's acceptance draws hash their keys with (so its values must
// never change: both are in results).
#pragma once

#include <cstdint>

namespace clustersim {

// The finalizer alone: xor-shift-multiply, three times.
constexpr uint64_t splitmix64_finalize(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// One step of the generator from state `x`: the golden-ratio increment, then the finalizer.
constexpr uint64_t splitmix64(uint64_t x) { return splitmix64_finalize(x + 0x9e3779b97f4a7c15ULL); }

}  // namespace clustersim
