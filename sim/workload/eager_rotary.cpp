// Memory traffic of the eager rotary embedding (the closed forms are in the header, with the
// Megatron-Core code they count).
#include "sim/workload/eager_rotary.h"

namespace clustersim {

namespace {

constexpr double kRotatedElement = 2;  // bytes of a 16-bit query or key element

}  // namespace

EagerExpertBytes unfused_rotary_bytes(double elements) {
  const double n = elements;
  // x cos; the negated half and the rotated concatenation; x sin; the sum; the concatenation.
  const double forward = (2 * n + (n + 2 * n) + 2 * n + 3 * n + 2 * n) * kRotatedElement;
  // Two products' gradients; the negated half; the halves joined; the paths summed; the slice's.
  const double backward = (2 * 2 * n + n + 2 * n + 3 * n + 3 * n) * kRotatedElement;
  return {forward, backward};
}

}  // namespace clustersim
