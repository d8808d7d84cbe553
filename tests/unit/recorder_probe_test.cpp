// The recorder's in-run cost per event (src/recorder/probe.hpp): a trimmed mean of the sampled
// events' recording times, which a few disturbed samples do not move.
#include <gtest/gtest.h>

#include <random>

#include "recorder/probe.hpp"

namespace tasklens::recorder {
namespace {

TEST(ProbeCost, MeanOfUndisturbedSamplesMinusTheClockRead) {
  ProbeHistogram h;
  for (int i = 0; i < 1000; ++i) h.add(i % 2 ? 40 : 60);  // buckets [40,44) and [60,64)
  // Kept: the fastest 990 (500 at 42, 490 at 62), minus 10 ticks of timing.
  const double expected = (500 * 42.0 + 490 * 62.0) / 990 - 10;
  EXPECT_NEAR(probe_cost_milli_ticks(h, 10) / 1000.0, expected, 0.01);
}

TEST(ProbeCost, ADisturbedSampleDoesNotMoveIt) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> cost(40, 80);
  ProbeHistogram clean, disturbed;
  for (int i = 0; i < 2000; ++i) {
    const int c = cost(rng);
    clean.add(c);
    disturbed.add(c);
  }
  // One sample held a 1 ms pause (2.6 M ticks); a mean of all 2001 would rise by 1,300 ticks.
  disturbed.add(2600000);
  // Ten held interrupts of 1-1.5 us: inside the histogram's range, but above the 99th percentile.
  for (int i = 0; i < 10; ++i) disturbed.add(2600 + 130 * i);
  const int64_t a = probe_cost_milli_ticks(clean, 8);
  const int64_t b = probe_cost_milli_ticks(disturbed, 8);
  ASSERT_GT(a, 0);
  EXPECT_NEAR(static_cast<double>(b) / a, 1.0, 0.02);
  EXPECT_NEAR(a / 1000.0, 60 - 8, 2.0);  // uniform 40-80: about 60, less the timing
}

TEST(ProbeCost, TooFewSamplesSayNothing) {
  ProbeHistogram h;
  for (int i = 0; i < 99; ++i) h.add(50);
  EXPECT_EQ(probe_cost_milli_ticks(h, 0), -1);
  h.add(50);
  EXPECT_EQ(probe_cost_milli_ticks(h, 0), 50 * 1000);  // bucket [48,52): its middle
  // Samples over the range never count, however many.
  for (int i = 0; i < 5000; ++i) h.add(1u << 20);
  EXPECT_EQ(probe_cost_milli_ticks(h, 0), 50 * 1000);
}

TEST(ProbeCost, NeverNegative) {
  ProbeHistogram h;
  for (int i = 0; i < 200; ++i) h.add(3);
  EXPECT_EQ(probe_cost_milli_ticks(h, 40), 0);
}

TEST(ProbeCost, HistogramsOfThreadsMerge) {
  ProbeHistogram a, b;
  for (int i = 0; i < 300; ++i) a.add(20);
  for (int i = 0; i < 300; ++i) b.add(100);
  a.merge(b);
  EXPECT_EQ(a.samples(), 600u);
  // 594 kept: 300 at 22 and 294 at 102.
  EXPECT_NEAR(probe_cost_milli_ticks(a, 0) / 1000.0, (300 * 22.0 + 294 * 102.0) / 594, 0.01);
}

}  // namespace
}  // namespace tasklens::recorder
