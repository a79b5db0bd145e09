// The values one axis of a sweep takes: the sweep's list for it when that is non-empty, else the
// scenario's single value (training and serving sweeps alike).
#pragma once

#include <vector>

namespace clustersim {

template <class T, class List>
std::vector<T> axis_values(const List& swept, T base) {
  if (swept.empty()) return {base};
  return std::vector<T>(swept.begin(), swept.end());
}

}  // namespace clustersim
