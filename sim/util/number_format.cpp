// Number formatting shared by messages and output tables.
#include "sim/util/number_format.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace clustersim {

std::string format_number(double value) {
  // Whole numbers up to a billion read better in full ("100000", not "1e+05").
  if (value == std::floor(value) && std::abs(value) < 1e9) {
    return std::to_string(static_cast<long long>(value));
  }
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

std::string format_significant(double value, int digits) {
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::general,
                              digits);
  return std::string(buffer, result.ptr);
}

std::string format_limit(double value, int digits) {
  if (value == 0 || !std::isfinite(value)) return format_number(value);
  const double scale = std::pow(10.0, digits - 1 - std::floor(std::log10(std::abs(value))));
  return format_significant(std::trunc(value * scale) / scale, digits);
}

std::string format_fixed(double value, int decimals) {
  // The largest double has 309 digits before the point.
  char buffer[512];
  auto result =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed, decimals);
  if (result.ec != std::errc()) return format_number(value);  // more decimals than the buffer
  return std::string(buffer, result.ptr);
}

}  // namespace clustersim
