// Turning numbers into the short text users read in messages and tables.
#pragma once

#include <string>

namespace clustersim {

// Shortest text that reads back as the same double, whole numbers below 1e9 in full:
// "8", "100000", "0.25", "1e+11", "nan", "inf".
std::string format_number(double value);

// Fixed number of decimals: format_fixed(3.14159, 2) == "3.14".
std::string format_fixed(double value, int decimals);

}  // namespace clustersim
