// A stable LSD radix sort on 64-bit keys, for the analyses' big sorts (every strand's events or
// start times): a comparison sort of millions of records was a third of `sched`'s time.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tasklens::analysis {

// Sorts `items` by key(item) (a uint64_t), keeping the order of equal keys. 11 bits a pass, as
// many passes as the largest key needs: keys relative to the smallest time of a run take 3 or 4.
template <class T, class KeyFn>
void radix_sort(std::vector<T>& items, KeyFn key) {
  uint64_t max_key = 0;
  for (const T& x : items) max_key = std::max<uint64_t>(max_key, key(x));
  constexpr int kBits = 11;
  constexpr size_t kBuckets = size_t{1} << kBits;
  std::vector<T> tmp(items.size());
  std::vector<size_t> count(kBuckets);
  for (int shift = 0; shift < 64 && (max_key >> shift) != 0; shift += kBits) {
    std::fill(count.begin(), count.end(), 0);
    for (const T& x : items) ++count[(key(x) >> shift) & (kBuckets - 1)];
    size_t sum = 0;
    for (size_t& c : count) {
      const size_t here = c;
      c = sum;
      sum += here;
    }
    for (const T& x : items) tmp[count[(key(x) >> shift) & (kBuckets - 1)]++] = x;
    items.swap(tmp);
  }
}

}  // namespace tasklens::analysis
