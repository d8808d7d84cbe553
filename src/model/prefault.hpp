// Fresh memory faulted in page by page costs about 3 us per 4 KiB page here (a quarter of the
// time of building a large model). The builder reserves its big vectors at their expected sizes
// and hands the ranges to a Prefaulter, whose thread populates them (madvise
// MADV_POPULATE_WRITE, Linux 5.14+) while the builder works: the faults are taken on another
// core. Populating never changes memory contents, so it may run while the owner writes; a range
// freed meanwhile only makes madvise fail. Internal to src/model.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

namespace tasklens::model::detail {

class Prefaulter {
 public:
  Prefaulter() = default;
  Prefaulter(const Prefaulter&) = delete;
  Prefaulter& operator=(const Prefaulter&) = delete;
  ~Prefaulter() { join(); }

  // The unused capacity of v (its elements beyond size(), up to capacity()).
  template <class T>
  void add_capacity(const std::vector<T>& v) {
    add(v.data() + v.size(), (v.capacity() - v.size()) * sizeof(T));
  }
  void add(const void* p, size_t bytes) {
    if (bytes >= kMinBytes) ranges_.emplace_back(reinterpret_cast<uintptr_t>(p), bytes);
  }
  // Populates the ranges added so far, in order, on a thread of its own.
  void start() {
    join();
    if (ranges_.empty()) return;
    thread_ = std::thread([ranges = std::move(ranges_)] {
      const uintptr_t page = 4096;
      for (auto [p, n] : ranges) {
        // Whole pages inside the range only: a partly used page at either end is the owner's.
        const uintptr_t begin = (p + page - 1) & ~(page - 1), end = (p + n) & ~(page - 1);
        // In steps, so that the owner, filling the range from its start, soon finds it ready.
        for (uintptr_t at = begin; at < end; at += kStep)
          if (madvise(reinterpret_cast<void*>(at), std::min(kStep, end - at),
                      MADV_POPULATE_WRITE) != 0)
            break;  // an old kernel, or the range was freed: the owner faults it in itself
      }
    });
    ranges_.clear();
  }
  void join() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  static constexpr size_t kMinBytes = size_t{1} << 20;
  static constexpr uintptr_t kStep = uintptr_t{2} << 20;
  std::vector<std::pair<uintptr_t, size_t>> ranges_;
  std::thread thread_;
};

}  // namespace tasklens::model::detail
