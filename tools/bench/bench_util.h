// Helpers shared by the benchmark programs: timing a function over repeated runs and measuring a
// piece of work's peak memory in a child process of its own.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace clustersim::bench {

// Median wall time in seconds of `runs` calls of `work` after one warm-up call.
template <class F>
double median_seconds(F work, int runs = 5) {
  using Clock = std::chrono::steady_clock;
  work();
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    const auto start = Clock::now();
    work();
    times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Peak resident memory of this process so far, MiB.
inline double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024;
}

// Runs `work` (which prints its own results and returns an exit code) in a child process, so that
// its peak memory is its own. Returns false when the child failed.
template <class F>
bool in_child_process(F work) {
  std::fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    const int code = work();
    std::fflush(stdout);
    std::_Exit(code);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace clustersim::bench
