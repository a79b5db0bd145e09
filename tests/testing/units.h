// Short names for the sizes and durations tests write by hand.
#pragma once

#include "sim/util/units.h"

namespace clustersim::testing {

inline constexpr double kGB = kBytesPerGigabyte;
inline constexpr double kGiB = kBytesPerGibibyte;

inline Picoseconds ms(double milliseconds) {
  return Picoseconds::from_seconds(milliseconds * 1e-3);
}

}  // namespace clustersim::testing
