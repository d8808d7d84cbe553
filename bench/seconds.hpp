// A clock in seconds for the C++ bench programs (bench/*.cpp).
#pragma once

#include <time.h>

namespace tasklens::bench {

// `clock`'s reading in seconds: CLOCK_MONOTONIC for wall time, CLOCK_THREAD_CPUTIME_ID for the
// calling thread's CPU time.
inline double seconds(clockid_t clock = CLOCK_MONOTONIC) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace tasklens::bench
