// Simulated time as an integer count of picoseconds, and the one place where seconds, bytes and
// bandwidths are converted into it.
#pragma once

#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>

namespace clustersim {

// A duration or a point in simulated time. 2^63 ps is about 107 days of simulated time.
class Picoseconds {
 public:
  constexpr Picoseconds() = default;
  constexpr explicit Picoseconds(int64_t count) : count_(count) {}

  static constexpr Picoseconds max() { return Picoseconds(std::numeric_limits<int64_t>::max()); }
  // Nearest picosecond to `seconds`. Requires: 0 <= seconds < max().
  static Picoseconds from_seconds(double seconds) {
    return Picoseconds(static_cast<int64_t>(std::llround(seconds * 1e12)));
  }
  static constexpr Picoseconds from_microseconds(double us) {
    return Picoseconds(static_cast<int64_t>(us * 1e6 + 0.5));
  }

  constexpr int64_t count() const { return count_; }
  constexpr double seconds() const { return static_cast<double>(count_) * 1e-12; }
  constexpr double microseconds() const { return static_cast<double>(count_) * 1e-6; }

  constexpr Picoseconds operator+(Picoseconds o) const { return Picoseconds(count_ + o.count_); }
  constexpr Picoseconds operator-(Picoseconds o) const { return Picoseconds(count_ - o.count_); }
  constexpr Picoseconds& operator+=(Picoseconds o) {
    count_ += o.count_;
    return *this;
  }
  constexpr auto operator<=>(const Picoseconds&) const = default;

 private:
  int64_t count_ = 0;
};

// Time to move `bytes` at `bytes_per_second`, rounded up to a whole picosecond so that a transfer
// never finishes early. Requires: bytes >= 0, bytes_per_second > 0.
inline Picoseconds transfer_time(double bytes, double bytes_per_second) {
  return Picoseconds(static_cast<int64_t>(std::ceil(bytes / bytes_per_second * 1e12)));
}

inline constexpr double kBytesPerGigabyte = 1e9;       // GB, as in GB/s
inline constexpr double kBitsPerByte = 8;
inline constexpr double kBytesPerGibibyte = 1073741824;  // GiB
inline constexpr double kMegabytesPerMebibyte = 1.048576;  // MiB in MB (the catalog's MB/s)

}  // namespace clustersim
