// Progress of a long command on one rewritten line of stderr: "done/total configurations, rate,
// ETA". Shown only when stderr is a terminal, so logs and pipes stay clean.
#pragma once

#include <chrono>
#include <cstdint>

namespace clustersim::cli {

class Progress {
 public:
  explicit Progress(int64_t total);
  void update(int64_t done);
  // Clears the line.
  void finish();
  double seconds() const;

 private:
  int64_t total_;
  bool shown_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace clustersim::cli
