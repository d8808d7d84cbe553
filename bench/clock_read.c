// bench/clock_read: what one clock read costs on this machine, the floor of any recorder that
// times every strand (bench/overhead.sh prints it). A strand begins and ends at a clock read:
// in a one-thread team a task costs at least two (its creation, which the child's start
// shares, and its end), a fine-grained task in a team of several three to four. Prints one
// line: ns per rdtsc, per rdtscp and per clock_gettime(CLOCK_MONOTONIC), each the fastest of 5
// runs of 2 M reads, and on each online CPU separately (virtual CPUs of one machine can differ:
// they may share a physical core with other guests).
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

enum { kReads = 2000000, kRuns = 5 };

static double best_ns(int which) {
  double best = 1e9;
  volatile uint64_t sink = 0;
  for (int r = 0; r < kRuns; ++r) {
    uint64_t acc = 0;
    unsigned aux;
    struct timespec ts;
    const double t0 = now();
    for (int i = 0; i < kReads; ++i) {
      if (which == 0) acc += __rdtsc();
      else if (which == 1) acc += __rdtscp(&aux);
      else {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        acc += (uint64_t)ts.tv_nsec;
      }
    }
    const double ns = (now() - t0) / kReads * 1e9;
    sink += acc;
    if (ns < best) best = ns;
  }
  (void)sink;
  return best;
}

int main(void) {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  printf("clock reads (ns, fastest of %d x %d):", kRuns, kReads);
  for (long c = 0; c < cpus && c < 8; ++c) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET((int)c, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) continue;
    printf(" cpu%ld rdtsc %.1f rdtscp %.1f clock_gettime %.1f;", c, best_ns(0), best_ns(1),
           best_ns(2));
  }
  printf("\n");
  return 0;
}
