// Fresh memory faulted in page by page costs about 3 us per 4 KiB page here (a quarter of the
// time of building a large model). The builder reserves its big vectors at their expected sizes
// and hands the ranges to a Prefaulter, which populates them (madvise MADV_POPULATE_WRITE,
// Linux 5.14+) while the builder works, so that the faults are taken on another core. Two ways:
//  * start(): a thread of its own populates everything, for memory in 4 KiB pages;
//  * step(), called by a thread with time to spare (the event decoder, while the builder
//    catches up), populates a huge page at a time just ahead of where the builder writes, as
//    the builder reports with progress(): with memory in huge pages, faults are few and cheap,
//    and a thread of its own only took the second core from the decoder, while the capacity
//    reserved and never used is better left untouched.
// Populating never changes memory contents, so it may run while the owner writes; a range
// freed meanwhile only makes madvise fail (or populates pages kept for the next blocks, see
// src/cli/huge_blocks.cpp). Internal to src/model.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace tasklens::model::detail {

class Prefaulter {
 public:
  Prefaulter() = default;
  Prefaulter(const Prefaulter&) = delete;
  Prefaulter& operator=(const Prefaulter&) = delete;
  ~Prefaulter() { join(); }

  // Adds the unused capacity of v (its elements beyond size(), up to capacity()) and returns
  // its index for progress().
  template <class T>
  size_t add_capacity(const std::vector<T>& v) {
    const uintptr_t page = 4096, p = reinterpret_cast<uintptr_t>(v.data() + v.size());
    const uintptr_t n = (v.capacity() - v.size()) * sizeof(T);
    // Whole pages inside the range only: a partly used page at either end is the owner's. A
    // small range is left to the owner.
    uintptr_t begin = (p + page - 1) & ~(page - 1), end = (p + n) & ~(page - 1);
    if (n < kMinBytes || begin >= end) begin = end = 0;
    ranges_.push_back({begin, end});
    return ranges_.size() - 1;
  }
  // Where the owner writes in range i (step() keeps kAhead bytes ahead of it).
  void progress(size_t i, const void* at) {
    if (reach_)
      reach_[i].store(reinterpret_cast<uintptr_t>(at) + kAhead, std::memory_order_relaxed);
  }

  // For step(): from now on, only ahead of the progress() reported.
  void follow_owner() {
    reach_ = std::make_unique<std::atomic<uintptr_t>[]>(ranges_.size());
    for (size_t i = 0; i < ranges_.size(); ++i)
      reach_[i].store(ranges_[i].at + kAhead, std::memory_order_relaxed);
  }
  // Populates the next huge page of the next range that has one to populate (round-robin, so
  // that ranges the owner fills together are ready together; for the thread of start(), one
  // range after the other measured the same); false when none has.
  bool step() {
    for (size_t tries = 0; tries < ranges_.size(); ++tries) {
      const size_t i = next_++ % ranges_.size();
      Range& r = ranges_[i];
      const uintptr_t limit =
          reach_ ? std::min(r.end, reach_[i].load(std::memory_order_relaxed)) : r.end;
      if (r.at >= limit) continue;
      const uintptr_t n = std::min(kStep, limit - r.at);
      // Failing: an old kernel, or the range was freed; the owner faults it in itself.
      if (madvise(reinterpret_cast<void*>(r.at), n, MADV_POPULATE_WRITE) != 0)
        r.at = r.end;
      else
        r.at += n;
      return true;
    }
    return false;
  }
  // Populates everything on a thread of its own.
  void start() {
    join();
    thread_ = std::thread([this] {
      while (step()) {
      }
    });
  }
  void join() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  static constexpr size_t kMinBytes = size_t{1} << 20;
  static constexpr uintptr_t kStep = uintptr_t{2} << 20;
  static constexpr uintptr_t kAhead = uintptr_t{8} << 20;
  struct Range {
    uintptr_t at, end;
  };
  std::vector<Range> ranges_;
  std::unique_ptr<std::atomic<uintptr_t>[]> reach_;  // per range, when following the owner
  size_t next_ = 0;
  std::thread thread_;
};

}  // namespace tasklens::model::detail
