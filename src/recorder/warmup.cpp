#include "recorder/warmup.hpp"

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <cstdint>

namespace tasklens::recorder {
namespace {

constexpr int kMaxHelpers = 255;  // beyond that the threads' own start-up is the cost

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

void* spin_until(void* deadline) {
  const uint64_t until = *static_cast<const uint64_t*>(deadline);
  while (now_ns() < until) {
  }
  return nullptr;
}

}  // namespace

unsigned warm_up_cpus(unsigned ms) {
  if (ms == 0) return 0;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 0;
  const int here = sched_getcpu();
  uint64_t deadline = now_ns() + uint64_t(ms) * 1'000'000u;
  pthread_t helpers[kMaxHelpers];
  int started = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE && started < kMaxHelpers; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed) || cpu == here) continue;
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) break;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    pthread_attr_setaffinity_np(&attr, sizeof one, &one);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    // Called from the recorder's own code, so the pthread_create hook lets it through.
    if (pthread_create(&helpers[started], &attr, spin_until, &deadline) == 0) ++started;
    pthread_attr_destroy(&attr);
  }
  spin_until(&deadline);
  for (int i = 0; i < started; ++i) pthread_join(helpers[i], nullptr);
  return unsigned(started) + 1;
}

}  // namespace tasklens::recorder
