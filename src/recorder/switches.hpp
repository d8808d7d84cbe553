// Context-switch tracking: the TSC measures wall time, so a strand whose thread is preempted by
// another thread, or blocks, would grow by the time it spent off the CPU. The kernel reports every
// context switch of a thread into a perf ring buffer (a "dummy" software event with context_switch
// set: no counter, no syscall on our hot path); the writer thread drains the rings and writes the
// preempted intervals into the trace, and the model subtracts them from the strands.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tasklens::recorder {

struct SwitchRing;

// Opens the calling thread's ring. Returns null where perf events are not available. With
// `watch_faults` the ring also receives the thread's page faults (see switches.cpp): those that
// take far longer than the thread's typical fault are written as SlowFaults records.
SwitchRing* switch_ring_open(bool watch_faults = false);

// Whether the ring watches the thread's page faults: asked for, and the kernel gave the events
// and a ring large enough (switches.cpp); when it does not, no SlowFaults record comes.
bool switch_ring_watches_faults(const SwitchRing* ring);

// Releases the ring (the recorder keeps its rings until the process ends).
void switch_ring_close(SwitchRing* ring);

// True when the ring is more than half full: the writer drains it before its next flush, so
// that a thread switching tens of thousands of times a second loses no record.
bool switch_ring_half_full(const SwitchRing* ring);

// Moves the complete intervals seen so far into a Preemptions record (switched out while
// runnable), a Blocked record (switched out while not runnable: sleeping, waiting for I/O,
// a futex) and a SlowFaults record appended to `out` (nothing for a kind without intervals),
// and adds to `lost` the switch records the kernel dropped because the ring was full. Called by
// the writer thread only. The last drain (`at_end`, the recording's end) also closes a switch-out
// still waiting for its switch-in there: the thread was off its CPU from then to the end (a
// thread preempted inside a oneTBB task whose end is not recorded, whose work the reader counts
// up to the wait that joined it: this interval is not work).
void switch_ring_drain(SwitchRing* ring, uint32_t thread, std::vector<uint8_t>& out, uint64_t& lost,
                       bool at_end = false);

// What the last drain read of the thread's page faults, for the recorder's tests and for telling,
// when a slow fault went unreported, whether the kernel sent no event or the rule judged it.
struct FaultsDrained {
  uint32_t starts = 0;       // fault-start samples read
  uint32_t ends = 0;         // fault-end samples (minor or major) read
  uint32_t matched = 0;      // ends that closed a start: faults timed
  uint32_t interrupted = 0;  // starts a switch record cut (their time counts as the switch's)
  // Whether the kernel stopped sending the fault events for part of the drain: it throttles an
  // event that samples more often than perf_event_max_sample_rate allows per tick (a burst of
  // faults) until the next tick, and the faults meanwhile are not seen.
  bool throttled = false;
  uint64_t longest_ns = 0;   // the longest fault timed
  uint64_t floor_ns = 0;     // the rule's threshold for a slow fault at this drain
  uint32_t faults_seen = 0;  // faults timed since the ring opened
};
FaultsDrained switch_ring_last_faults(const SwitchRing* ring);

// Tests only: a ring with no perf event behind it, `data_bytes` of data the test writes records
// into as the kernel would (switch_ring_feed: perf_event_header-framed records, advancing the
// head), watching faults whose samples carry the ids of kSyntheticFaultId (fault start, minor
// end, major end), so that switch_ring_drain's rules are tested on exact event streams.
inline constexpr uint64_t kSyntheticFaultId[3] = {101, 102, 103};
SwitchRing* switch_ring_synthetic(size_t data_bytes);
void switch_ring_feed(SwitchRing* ring, const void* record, size_t bytes);

}  // namespace tasklens::recorder
