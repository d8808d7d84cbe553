// The threads' off-CPU intervals, read a record at a time (OffCpuCursor, reader.hpp).
#include <algorithm>

#include "trace/reader.hpp"

namespace tasklens::trace {

bool OffCpuCursor::next_raw(uint64_t& begin, uint64_t& end) {
  for (;;) {
    if (at_ < pairs_.size()) {
      begin = pairs_[at_];
      end = pairs_[at_ + 1];
      at_ += 2;
      if (end > begin) return true;  // an empty or reversed interval is no time
      continue;
    }
    const auto& records = file_->off_cpu_records_[kind_];
    if (thread_ >= records.size() || record_ >= records[thread_].size()) return false;
    file_->read_off_cpu(records[thread_][record_++], pairs_);
    at_ = 0;
  }
}

bool OffCpuCursor::next(uint64_t& begin, uint64_t& end) {
  if (!pending_ && !next_raw(pending_begin_, pending_end_)) return false;
  pending_ = false;
  begin = pending_begin_;
  end = pending_end_;
  // What overlaps or touches it is one interval (as a reported-twice interval must not be taken
  // out twice); the first that does not is kept for the next call.
  while (next_raw(pending_begin_, pending_end_)) {
    if (pending_begin_ > end) {
      pending_ = true;
      break;
    }
    end = std::max(end, pending_end_);
  }
  return true;
}

OffCpuCursor TraceFile::off_cpu(OffCpuKind kind, uint32_t thread) const {
  OffCpuCursor c;
  c.file_ = this;
  c.kind_ = int(kind);
  c.thread_ = thread;
  if (off_cpu_is_held_[c.kind_]) {
    // Already sorted and merged: the cursor walks them as one record's pairs.
    c.record_ = ~size_t(0);
    if (thread < off_cpu_held_[c.kind_].size())
      for (auto [b, e] : off_cpu_held_[c.kind_][thread]) {
        c.pairs_.push_back(b);
        c.pairs_.push_back(e);
      }
  }
  return c;
}

Intervals TraceFile::off_cpu_intervals(OffCpuKind kind) const {
  if (off_cpu_is_held_[int(kind)]) return off_cpu_held_[int(kind)];
  Intervals all(off_cpu_threads(kind));
  for (uint32_t t = 0; t < all.size(); ++t) {
    OffCpuCursor c = off_cpu(kind, t);
    uint64_t b, e;
    while (c.next(b, e)) all[t].emplace_back(b, e);
  }
  return all;
}

}  // namespace tasklens::trace
