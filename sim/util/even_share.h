// The near-even split of whole things over parts: how a pipeline's layers fall on its stages (and a
// stage's on its model chunks) when nothing says otherwise, the first parts taking the remainder.
#pragma once

namespace clustersim {

// What part `index` of `parts` holds of `total`: total / parts, plus one for each of the first
// total % parts parts. Requires: parts >= 1, 0 <= index < parts.
constexpr int even_share(int total, int parts, int index) {
  return total / parts + (index < total % parts ? 1 : 0);
}

}  // namespace clustersim
