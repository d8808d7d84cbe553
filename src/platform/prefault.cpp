// Faulting memory in ahead of its use (platform.hpp says what and why).
#include <sys/mman.h>

#include <algorithm>

#include "platform/platform.hpp"

namespace tasklens::platform {
namespace {

// A range under a megabyte is left to its owner: the thread is not worth it.
constexpr size_t kMinBytes = size_t{1} << 20;
// One step populates a huge page; the follower stays this far ahead of the owner, so that the
// pages it populates are not the ones the owner is writing.
constexpr uintptr_t kStep = uintptr_t{2} << 20;
constexpr uintptr_t kAhead = uintptr_t{8} << 20;

}  // namespace

Prefaulter::Prefaulter() = default;
Prefaulter::~Prefaulter() { join(); }

size_t Prefaulter::add_range(const void* begin, size_t bytes) {
  const uintptr_t page = 4096, p = reinterpret_cast<uintptr_t>(begin);
  // Whole pages inside the range only: a partly used page at either end is the owner's.
  uintptr_t first = (p + page - 1) & ~(page - 1), end = (p + bytes) & ~(page - 1);
  if (bytes < kMinBytes || first >= end) first = end = 0;
  ranges_.push_back({first, end});
  return ranges_.size() - 1;
}

void Prefaulter::progress(size_t i, const void* at) {
  if (reach_) reach_[i].store(reinterpret_cast<uintptr_t>(at) + kAhead, std::memory_order_relaxed);
}

void Prefaulter::follow_owner() {
  reach_ = std::make_unique<std::atomic<uintptr_t>[]>(ranges_.size());
  for (size_t i = 0; i < ranges_.size(); ++i)
    reach_[i].store(ranges_[i].at + kAhead, std::memory_order_relaxed);
}

bool Prefaulter::step() {
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

void Prefaulter::start() {
  join();
  thread_ = std::thread([this] {
    while (step()) {
    }
  });
}

void Prefaulter::join() {
  if (thread_.joinable()) thread_.join();
}

}  // namespace tasklens::platform
