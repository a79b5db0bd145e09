// The progress line.
#include "tools/clustersim/progress.h"

#include <unistd.h>

#include <cstdio>

namespace clustersim::cli {

Progress::Progress(int64_t total)
    : total_(total), shown_(isatty(STDERR_FILENO)), start_(std::chrono::steady_clock::now()) {}

void Progress::update(int64_t done) {
  if (!shown_) return;
  const double elapsed = seconds();
  const double rate = elapsed > 0 ? done / elapsed : 0;
  const double eta = rate > 0 ? (total_ - done) / rate : 0;
  std::fprintf(stderr, "\r  %lld/%lld configurations  %.1f/s  ETA %d:%02d   ",
               static_cast<long long>(done), static_cast<long long>(total_), rate,
               static_cast<int>(eta) / 60, static_cast<int>(eta) % 60);
}

void Progress::finish() {
  if (shown_) std::fprintf(stderr, "\r%60s\r", "");
}

double Progress::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

}  // namespace clustersim::cli
