// A recorded thread's off-CPU time (preempted, blocked, in a slow page fault), the causes merged
// in time order and mapped onto the TSC, read from the trace as the builder reaches it: the
// builder takes each interval out of the strand it falls in (builder_off_cpu.cpp), holding a
// few hundred at a time instead of the recording's (a busy machine switches a program's
// threads out tens of thousands of times a second: millions in a long recording).
#pragma once

#include <cstdint>
#include <vector>

#include "trace/reader.hpp"

namespace tasklens::model::detail {

struct OffCpu {
  uint64_t begin, end;  // TSC ticks
  enum Cause : uint8_t { Preempted, Blocked, SlowFault } cause;
};

// CLOCK_MONOTONIC ns onto the TSC through the first clock sync and the measured rate.
struct MonotonicToTsc {
  double base_tsc = 0, base_ns = 0, ticks_per_ns = 0;
  // A trace's mapping; false when it has too few clock syncs to measure the rate.
  static bool of(const trace::TraceFile& t, MonotonicToTsc& out) {
    const auto& syncs = t.clock_syncs();
    if (syncs.size() < 2 || t.tsc_hz() <= 0) return false;
    out = {double(syncs.front().tsc), double(syncs.front().monotonic_ns), t.tsc_hz() / 1e9};
    return true;
  }
  uint64_t operator()(uint64_t ns) const {
    const double t = base_tsc + (double(ns) - base_ns) * ticks_per_ns;
    // A corrupted time must not overflow the conversion.
    return t <= 0 ? uint64_t(0) : t >= 1.8e19 ? ~uint64_t(0) : static_cast<uint64_t>(t);
  }
};

// One thread's intervals of the causes asked for, in time order. The recorder never reports a
// fault inside a switch, but a damaged trace may: what overlaps an earlier interval is cut to
// what is new, so that no time is taken out twice.
class OffCpuStream {
 public:
  OffCpuStream() = default;
  OffCpuStream(const trace::TraceFile& trace, uint32_t thread, const bool (&causes)[3],
               MonotonicToTsc to_tsc);
  bool next(OffCpu& out);

 private:
  trace::OffCpuCursor cursor_[3];
  bool live_[3] = {};
  uint64_t begin_[3] = {}, end_[3] = {};  // each cause's next interval (ns)
  uint64_t reach_ = 0;
  MonotonicToTsc to_tsc_;
};

// What the builder holds of one thread's stream: the intervals from the cursor on (its queries
// come in time order), refilled from the stream as they reach its end.
struct OffCpuWindow {
  std::vector<OffCpu> intervals;
  size_t cursor = 0;
  bool done = true;  // the stream has no more
  OffCpuStream stream;
  // Drops what is before the cursor (moving `index`, at or after it, with it) and appends the
  // next intervals of the stream: false if there were none.
  bool refill(size_t& index);
};

}  // namespace tasklens::model::detail
