// Clocks and work counters read on the recorder's hot path.
//
// The TSC is the default: ~10 ns a read, invariant on the machines we target. Hardware cycles
// and instructions come from perf_event: read with rdpmc from user space when the kernel allows
// it (cap_user_rdpmc), with read(2) otherwise. task-clock is perf's software CPU-time counter
// (nanoseconds; a syscall per read, so only for coarse programs or for testing this path on
// machines without hardware counters).
#pragma once

#include <x86intrin.h>

#include <cstdint>

#include "trace/format.hpp"

struct perf_event_mmap_page;

namespace tasklens::recorder {

__attribute__((always_inline)) inline uint64_t read_tsc() { return __rdtsc(); }

// One thread's perf_event counter. Not thread-safe: each thread owns its own.
class PerfCounter {
 public:
  // Opens the counter for the calling thread. Returns false (and leaves the counter unusable,
  // reading 0) if the machine does not have it.
  bool open(trace::Metric metric);
  uint64_t read();

 private:
  uint64_t read_rdpmc();
  int fd_ = -1;
  perf_event_mmap_page* page_ = nullptr;
};

// Checks, from the calling process, whether `metric` can be measured here. Returns 0 when it can,
// otherwise the errno of perf_event_open. Used by the launcher before it starts the program.
int probe_metric(trace::Metric metric);

}  // namespace tasklens::recorder
