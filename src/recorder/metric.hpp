// Clocks and work counters read on the recorder's hot path.
//
// The TSC is the default: ~10 ns a read, invariant on the machines we target, and always in the
// trace (every event's time). Every other metric is a perf_event counter of the thread, named as
// perf names it (trace::Metric): hardware events (cycles, instructions, cache and branch
// events...) and software ones (task-clock, the CPU time in ns; page faults, context switches,
// CPU migrations). One thread's counters are opened as one perf group, so that they count over
// the same intervals and are read together: with rdpmc from user space when the kernel allows it
// for every one of them (hardware counters with cap_user_rdpmc), otherwise with one read(2) of
// the group (PERF_FORMAT_GROUP). A syscall per event is slow (~0.3-1 us): software metrics suit
// coarse programs, or testing this path on machines without hardware counters.
#pragma once

#include <x86intrin.h>

#include <cstdint>

#include "trace/format.hpp"

struct perf_event_mmap_page;

namespace tasklens::recorder {

__attribute__((always_inline)) inline uint64_t read_tsc() { return __rdtsc(); }

// One thread's perf_event counters. Not thread-safe: each thread owns its own.
class PerfCounters {
 public:
  PerfCounters() = default;
  PerfCounters(const PerfCounters&) = delete;
  PerfCounters& operator=(const PerfCounters&) = delete;
  ~PerfCounters() { close(); }

  // Opens `count` counters (none of them the TSC, at most trace::kMaxMetrics) for the calling
  // thread. Returns false if one of them cannot be opened: then every counter reads 0.
  bool open(const trace::Metric* metrics, int count);
  // Writes the current value of every counter, in open() order, to values[0 .. count).
  void read(uint64_t* values);
  void close();

 private:
  uint64_t read_rdpmc(int i);
  int count_ = 0;
  int fds_[trace::kMaxMetrics] = {-1, -1, -1, -1, -1, -1, -1, -1};
  perf_event_mmap_page* pages_[trace::kMaxMetrics] = {};
  bool rdpmc_ = false;    // every counter is read with rdpmc
  bool grouped_ = false;  // fds_[0] leads a group: one read(2) gives every value
};

// Checks, from the calling process, whether `metric` can be measured here. Returns 0 when it can,
// otherwise the errno of perf_event_open. Used by the launcher before it starts the program.
int probe_metric(trace::Metric metric);

// Checks that the counters of `metrics` (each available on its own, none the TSC) can count
// together as one group, the way the recorder opens them: returns 0 when they can, otherwise an
// errno (EBUSY when the group opens but never runs: the PMU has fewer counters than asked).
int probe_metric_group(const trace::Metric* metrics, int count);

}  // namespace tasklens::recorder
