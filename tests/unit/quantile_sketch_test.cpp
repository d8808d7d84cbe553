// analysis/quantile_sketch.hpp: exact counts, totals, extremes and octaves; percentiles never
// above the exact nearest-rank ones and below them by less than kRelativeError of them (their
// upper bounds never below, and above by less than that).
#include "analysis/quantile_sketch.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <random>
#include <vector>

#include "analysis/tasks.hpp"

namespace tasklens::analysis {
namespace {

// The sketch of `values` against analysis::percentile and the rest computed exactly.
void expect_within_bound(std::vector<uint64_t> values) {
  QuantileSketch q;
  for (uint64_t v : values) q.add(v);
  std::sort(values.begin(), values.end());
  ASSERT_EQ(q.count(), values.size());
  uint64_t total = 0;
  std::array<uint64_t, 65> octaves{};
  for (uint64_t v : values) {
    total += v;
    ++octaves[static_cast<size_t>(std::bit_width(v))];
  }
  EXPECT_EQ(q.total(), total);
  EXPECT_EQ(q.min(), values.empty() ? 0 : values.front());
  EXPECT_EQ(q.max(), values.empty() ? 0 : values.back());
  EXPECT_EQ(q.octaves(), octaves);
  for (double p : {0.0, 1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 100.0}) {
    const uint64_t exact = percentile(values, p), sketched = q.percentile(p);
    EXPECT_LE(sketched, exact) << "p" << p;
    EXPECT_LT(double(exact - sketched), QuantileSketch::kRelativeError * double(exact) + 1e-9)
        << "p" << p << ": " << sketched << " for " << exact;
    const uint64_t upper = q.percentile_upper(p);
    EXPECT_GE(upper, exact) << "p" << p;
    EXPECT_LT(double(upper - exact), QuantileSketch::kRelativeError * double(exact) + 1e-9)
        << "p" << p << ": " << upper << " for " << exact;
  }
  for (uint64_t threshold : {uint64_t{0}, uint64_t{100}, uint64_t{1000}, uint64_t{1} << 20,
                             values.empty() ? 0 : values[values.size() / 2]}) {
    const uint64_t exact = static_cast<uint64_t>(
        values.end() - std::upper_bound(values.begin(), values.end(), threshold));
    // Missed: at most the values above the threshold in its bucket.
    const uint64_t bucket_end = QuantileSketch::lower_of(QuantileSketch::bucket_of(threshold) + 1);
    const uint64_t at_most_missed =
        static_cast<uint64_t>(std::lower_bound(values.begin(), values.end(), bucket_end) -
                              std::upper_bound(values.begin(), values.end(), threshold));
    EXPECT_LE(q.count_above(threshold), exact);
    EXPECT_GE(q.count_above(threshold) + at_most_missed, exact) << threshold;
  }
}

TEST(QuantileSketch, SmallValuesAreExact) {
  std::vector<uint64_t> v;
  for (uint64_t x = 0; x < 256; ++x) v.push_back(x * 7 % 256);
  QuantileSketch q;
  for (uint64_t x : v) q.add(x);
  std::sort(v.begin(), v.end());
  for (double p : {1.0, 33.0, 50.0, 90.0}) EXPECT_EQ(q.percentile(p), percentile(v, p));
}

TEST(QuantileSketch, PercentilesAreWithinTheBoundOnEveryShape) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 40; ++round) {
    std::vector<uint64_t> v;
    const size_t n = 1 + rng() % 5000;
    for (size_t i = 0; i < n; ++i) {
      switch (round % 4) {
        case 0:  // uniform over a wide range
          v.push_back(rng() % (uint64_t{1} << (8 + round)));
          break;
        case 1:  // log-uniform: every octave up to 2^62
          v.push_back(rng() >> (2 + rng() % 62));
          break;
        case 2:  // a few distinct values, many times each
          v.push_back(uint64_t{1000003} * (1 + rng() % 3));
          break;
        default:  // a narrow band near a bucket's edge
          v.push_back((uint64_t{1} << 30) - 64 + rng() % 128);
      }
    }
    expect_within_bound(v);
  }
  expect_within_bound({});
  expect_within_bound({~uint64_t{0}, 0, ~uint64_t{0} - 1});
}

TEST(QuantileSketch, BucketsTileTheValuesInOrder) {
  // Each bucket starts where the one before ends, and a value lies in the bucket of its lower
  // bound: no value falls between two buckets, none is counted in a lower one.
  for (size_t b = 1; b < QuantileSketch::bucket_of(~uint64_t{0}); ++b) {
    const uint64_t lo = QuantileSketch::lower_of(b);
    ASSERT_GT(lo, QuantileSketch::lower_of(b - 1)) << b;
    ASSERT_EQ(QuantileSketch::bucket_of(lo), b);
    ASSERT_EQ(QuantileSketch::bucket_of(lo - 1), b - 1);
  }
}

}  // namespace
}  // namespace tasklens::analysis
