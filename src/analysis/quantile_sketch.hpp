// A distribution of non-negative integers kept in bounded memory, for the analyses that read a
// recording in one pass (analysis/stream_tasks.hpp): its count, total, minimum, maximum and
// octave counts exactly; its percentiles within a relative error of kRelativeError.
//
// The buckets are HdrHistogram's: every value below 2^(kSubBits + 1) has a bucket of its own,
// and each octave above is split into 2^kSubBits buckets of equal width, so that a bucket is at
// most 1/2^kSubBits of its lower bound wide. A percentile is the lower bound of the bucket that
// holds the value of its rank (clamped to the minimum and maximum): never above the exact
// value, and below it by less than kRelativeError of it. About 7,400 buckets cover 64 bits
// (8 bytes each), allocated up to the largest value met.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

namespace tasklens::analysis {

class QuantileSketch {
 public:
  static constexpr int kSubBits = 7;
  static constexpr double kRelativeError = 1.0 / (1 << kSubBits);

  void add(uint64_t v) {
    const size_t b = bucket_of(v);
    if (b >= counts_.size()) counts_.resize(b + 1, 0);
    ++counts_[b];
    if (count_ == 0 || v < min_) min_ = v;
    max_ = std::max(max_, v);
    ++count_;
    total_ += v;
  }
  uint64_t count() const { return count_; }
  uint64_t total() const { return total_; }
  uint64_t min() const { return count_ ? min_ : 0; }
  uint64_t max() const { return max_; }

  // The nearest-rank percentile (rank ceil(p/100 x n), at least 1), as analysis::percentile of
  // the sorted values, to within kRelativeError below; 0 when empty.
  uint64_t percentile(double p) const {
    return count_ == 0 ? 0 : std::clamp(lower_of(bucket_at(p)), min_, max_);
  }
  // An upper bound of the same percentile: the last value of that bucket (at most the maximum),
  // never below the exact value and above it by at most kRelativeError of it.
  uint64_t percentile_upper(double p) const {
    return count_ == 0 ? 0 : std::min(lower_of(bucket_at(p) + 1) - 1, max_);
  }
  // How many values are above `threshold`, counting those of the bucket that holds it as not:
  // short of the exact count by at most the values within kRelativeError below the threshold's
  // bucket's upper end.
  uint64_t count_above(uint64_t threshold) const {
    uint64_t n = 0;
    for (size_t b = counts_.empty() ? 0 : bucket_of(threshold) + 1; b < counts_.size(); ++b)
      n += counts_[b];
    return n;
  }
  // The values per octave (bit_width(v): 0 -> 0, 1 -> 1, 2..3 -> 2, ...): exact, as a bucket
  // never straddles two octaves.
  std::array<uint64_t, 65> octaves() const {
    std::array<uint64_t, 65> out{};
    for (size_t b = 0; b < counts_.size(); ++b)
      if (counts_[b]) out[static_cast<size_t>(std::bit_width(lower_of(b)))] += counts_[b];
    return out;
  }

  static size_t bucket_of(uint64_t v) {
    constexpr uint64_t kExact = uint64_t{2} << kSubBits;
    if (v < kExact) return static_cast<size_t>(v);
    const int shift = std::bit_width(v) - (kSubBits + 1);
    const uint64_t top = v >> shift;  // in [2^kSubBits, 2^(kSubBits + 1))
    return static_cast<size_t>(kExact + uint64_t(shift - 1) * (uint64_t{1} << kSubBits) +
                               (top - (uint64_t{1} << kSubBits)));
  }
  static uint64_t lower_of(size_t b) {
    constexpr uint64_t kExact = uint64_t{2} << kSubBits;
    if (b < kExact) return b;
    const uint64_t k = b - kExact;
    const int shift = static_cast<int>(k >> kSubBits) + 1;
    const uint64_t top = (uint64_t{1} << kSubBits) + (k & ((uint64_t{1} << kSubBits) - 1));
    return top << shift;
  }

 private:
  // The bucket holding the value of the nearest rank for `p` (count_ > 0).
  size_t bucket_at(double p) const {
    uint64_t rank = static_cast<uint64_t>(std::ceil(p / 100.0 * double(count_) - 1e-9));
    rank = std::clamp<uint64_t>(rank, 1, count_);
    uint64_t seen = 0;
    for (size_t b = 0; b < counts_.size(); ++b) {
      seen += counts_[b];
      if (seen >= rank) return b;
    }
    return counts_.size() - 1;  // (not reached: the counts add up to count_)
  }
  std::vector<uint64_t> counts_;
  uint64_t count_ = 0, total_ = 0, min_ = 0, max_ = 0;
};

}  // namespace tasklens::analysis
