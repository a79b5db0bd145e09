// CLUSTERSIM_CHECK: an invariant that holds in every build type. A failure is a bug in clustersim,
// never a user error (those are reported as diagnostics): it prints where and why, then aborts.
#pragma once

#include <cstdio>
#include <cstdlib>

#define CLUSTERSIM_CHECK(condition, message)                                                \
  do {                                                                                      \
    if (!(condition)) {                                                                     \
      std::fprintf(stderr, "%s:%d: internal error: %s (%s)\n", __FILE__, __LINE__, message, \
                   #condition);                                                             \
      std::abort();                                                                         \
    }                                                                                       \
  } while (false)
