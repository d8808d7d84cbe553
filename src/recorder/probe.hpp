// The recorder's cost per event as the run measures it: one event in kProbeSampleEvery has its
// recording timed (see begin_event), and the times go into a histogram per thread.
//
// Why a histogram and not a sum: a timed event that a disturbance stretched (an interrupt, a
// page fault, the host pausing the machine, a preemption that the switch records remove anyway)
// holds microseconds to milliseconds where an event costs 20-100 ns. One such sample in a mean
// of ~2,000 can double the cost per event of a fine-grained program, and the model then takes
// twice the recorder's real cost out of every strand: the work falls by more than half, and the
// parallelism with it. The cost is the
// mean of the samples at or below the 99th percentile, and never of those over the histogram's
// range (~1.6 us at 2.6 GHz): none of the recorder's events takes that long undisturbed.
#pragma once

#include <cstdint>

namespace tasklens::recorder {

inline constexpr uint32_t kProbeBuckets = 1024;
inline constexpr uint32_t kProbeBucketTicks = 4;

struct ProbeHistogram {
  // counts[i]: samples of [i, i + 1) * kProbeBucketTicks ticks; the last one: that or longer.
  uint32_t counts[kProbeBuckets] = {};

  void add(uint64_t ticks) {
    const uint64_t i = ticks / kProbeBucketTicks;
    ++counts[i < kProbeBuckets ? i : kProbeBuckets - 1];
  }
  void merge(const ProbeHistogram& other) {
    for (uint32_t i = 0; i < kProbeBuckets; ++i) counts[i] += other.counts[i];
  }
  uint64_t samples() const {
    uint64_t n = 0;
    for (uint32_t c : counts) n += c;
    return n;
  }
};

// The mean in ticks (times 1000, the ProbeCost record's unit) of the samples at or below the
// 99th percentile that are within the histogram's range, each counted at its bucket's middle,
// minus `timing_ticks` (what the two clock reads that time an event add to it). Returns -1 when
// fewer than `min_samples` samples are in range (too few to say).
inline int64_t probe_cost_milli_ticks(const ProbeHistogram& h, uint64_t timing_ticks,
                                      uint64_t min_samples = 100) {
  uint64_t in_range = 0;
  for (uint32_t i = 0; i + 1 < kProbeBuckets; ++i) in_range += h.counts[i];
  const uint64_t all = in_range + h.counts[kProbeBuckets - 1];
  if (in_range < min_samples) return -1;
  // The samples kept: the fastest 99% of all of them (those over the range are in the top 1%
  // when they are rare; when they are not, every in-range sample is kept).
  uint64_t keep = all - all / 100;
  if (keep > in_range) keep = in_range;
  uint64_t taken = 0, sum_milli = 0;
  for (uint32_t i = 0; i + 1 < kProbeBuckets && taken < keep; ++i) {
    const uint64_t n = h.counts[i] < keep - taken ? h.counts[i] : keep - taken;
    sum_milli += n * (uint64_t{i} * kProbeBucketTicks * 1000 + kProbeBucketTicks * 500);
    taken += n;
  }
  const uint64_t mean_milli = sum_milli / taken;
  const uint64_t timing_milli = timing_ticks * 1000;
  return mean_milli > timing_milli ? static_cast<int64_t>(mean_milli - timing_milli) : 0;
}

}  // namespace tasklens::recorder
