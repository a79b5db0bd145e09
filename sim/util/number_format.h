// Turning numbers into the short text users read in messages and tables.
#pragma once

#include <string>

namespace clustersim {

// Shortest text that reads back as the same double, whole numbers below 1e9 in full:
// "8", "100000", "0.25", "1e+11", "nan", "inf".
std::string format_number(double value);

// `digits` significant digits, rounded: format_significant(27109.14, 3) == "2.71e+04";
// format_significant(0.5, 3) == "0.5".
std::string format_significant(double value, int digits);
// `digits` significant digits, cut toward zero so the text never exceeds the value (for limits):
// format_limit(5380658239111168, 3) == "5.38e+15", format_limit(2999, 2) == "2.9e+03".
std::string format_limit(double value, int digits);

// Fixed number of decimals: format_fixed(3.14159, 2) == "3.14"; every digit of the largest
// doubles (1e300: 301 digits).
std::string format_fixed(double value, int decimals);

}  // namespace clustersim
