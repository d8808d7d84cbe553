// A stable LSD radix sort on 64-bit keys, for the analyses' big sorts (every strand's events or
// start times): a comparison sort of millions of records was a third of `sched`'s time.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tasklens::analysis {

// Sorts [first, last) by key(item) (a uint64_t), keeping the order of equal keys. 11 bits a
// pass, as many passes as the largest key needs: keys relative to the smallest time of a run take
// 3 or 4. The key should read the item only: a key that reads elsewhere (another array indexed
// by the item) misses the cache on every item of every pass.
// `scratch`: a buffer to reuse between sorts (else one is allocated, and its pages zeroed, each
// time).
template <class T, class KeyFn>
void radix_sort(T* first, T* last, KeyFn key, std::vector<T>* scratch = nullptr) {
  const size_t size = static_cast<size_t>(last - first);
  uint64_t max_key = 0;
  for (const T* x = first; x != last; ++x) max_key = std::max<uint64_t>(max_key, key(*x));
  if (max_key == 0 || size < 2) return;
  constexpr int kBits = 11;
  constexpr size_t kBuckets = size_t{1} << kBits;
  std::vector<T> own;
  std::vector<T>& tmp = scratch ? *scratch : own;
  if (tmp.size() < size) tmp.resize(size);
  std::vector<size_t> count(kBuckets);
  T* from = first;
  T* to = tmp.data();
  for (int shift = 0; shift < 64 && (max_key >> shift) != 0; shift += kBits) {
    std::fill(count.begin(), count.end(), 0);
    for (size_t i = 0; i < size; ++i) ++count[(key(from[i]) >> shift) & (kBuckets - 1)];
    size_t sum = 0;
    for (size_t& c : count) {
      const size_t here = c;
      c = sum;
      sum += here;
    }
    for (size_t i = 0; i < size; ++i)
      to[count[(key(from[i]) >> shift) & (kBuckets - 1)]++] = from[i];
    std::swap(from, to);
  }
  if (from != first) std::copy(from, from + size, first);
}

template <class T, class KeyFn>
void radix_sort(std::vector<T>& items, KeyFn key, std::vector<T>* scratch = nullptr) {
  radix_sort(items.data(), items.data() + items.size(), key, scratch);
}

}  // namespace tasklens::analysis
