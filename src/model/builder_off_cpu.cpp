// Time a program thread did not spend on the program, though its strand's clock ran: switched
// out (preempted by another thread, or blocked), or held in a page fault far slower than the
// thread's typical one (the recorder's SlowFaults records). The builder takes these intervals out
// of the strands they fall in (handle(), builder_events.cpp) and reports each cause apart.
#include <algorithm>

#include "model/builder_state.hpp"

namespace tasklens::model::detail {

OffCpuStream::OffCpuStream(const trace::TraceFile& trace, uint32_t thread, const bool (&causes)[3],
                           MonotonicToTsc to_tsc)
    : to_tsc_(to_tsc) {
  for (int k = 0; k < 3; ++k) {
    if (!causes[k]) continue;
    cursor_[k] = trace.off_cpu(trace::OffCpuKind(k), thread);
    live_[k] = cursor_[k].next(begin_[k], end_[k]);
  }
}

bool OffCpuStream::next(OffCpu& out) {
  int first = -1;
  for (int k = 0; k < 3; ++k)
    if (live_[k] && (first < 0 || begin_[k] < begin_[first])) first = k;
  if (first < 0) return false;
  out = OffCpu{to_tsc_(begin_[first]), to_tsc_(end_[first]), OffCpu::Cause(first)};
  live_[first] = cursor_[first].next(begin_[first], end_[first]);
  out.begin = std::max(out.begin, reach_);
  out.end = std::max(out.end, out.begin);
  reach_ = std::max(reach_, out.end);
  return true;
}

bool OffCpuWindow::refill(size_t& index) {
  // A few hundred at a time: one record of the recorder's holds about a thousand.
  constexpr size_t kRefill = 256;
  if (done) return false;
  intervals.erase(intervals.begin(), intervals.begin() + ptrdiff_t(cursor));
  index -= cursor;
  cursor = 0;
  const size_t had = intervals.size();
  OffCpu iv;
  while (intervals.size() - had < kRefill && stream.next(iv)) intervals.push_back(iv);
  done = intervals.size() - had < kRefill;
  return intervals.size() > had;
}

void Builder::load_preemptions() {
  if (tsc_metric_ < 0) return;
  off_cpu_causes_[OffCpu::Preempted] = true;
  off_cpu_causes_[OffCpu::Blocked] = !options_.blocked_as_work;
  off_cpu_causes_[OffCpu::SlowFault] = !options_.keep_slow_faults;
  uint32_t threads = 0;
  for (int k = 0; k < 3; ++k)
    if (off_cpu_causes_[k])
      threads = std::max(threads, trace_.off_cpu_threads(trace::OffCpuKind(k)));
  if (threads == 0) return;
  if (!MonotonicToTsc::of(trace_, monotonic_to_tsc_)) return;
  off_cpu_.resize(threads);
  for (uint32_t t = 0; t < threads; ++t) {
    OffCpuWindow& w = off_cpu_[t];
    w.stream = OffCpuStream(trace_, t, off_cpu_causes_, monotonic_to_tsc_);
    w.done = false;
    size_t unused = 0;
    w.refill(unused);
  }
}

uint64_t Builder::preempted_between_slow(uint32_t thread, uint64_t from, uint64_t to,
                                         OffCpuSplit& split) {
  OffCpuWindow& w = off_cpu_[thread];
  for (;;) {
    while (w.cursor < w.intervals.size() && w.intervals[w.cursor].end <= from) ++w.cursor;
    size_t unused = w.cursor;
    if (w.cursor < w.intervals.size() || !w.refill(unused)) break;
  }
  uint64_t total = 0;
  for (size_t i = w.cursor;; ++i) {
    if (i == w.intervals.size() && !w.refill(i)) break;
    const OffCpu& iv = w.intervals[i];
    if (iv.begin >= to) break;
    uint64_t lo = std::max(iv.begin, from), hi = std::min(iv.end, to);
    if (hi > lo) {
      total += hi - lo;
      if (iv.cause == OffCpu::Blocked) split.blocked += hi - lo;
      if (iv.cause == OffCpu::SlowFault) split.faults += hi - lo;
    }
  }
  return total;
}

void Builder::preemption_in_run(Model& m, uint64_t first, uint64_t last) const {
  if (last <= first) return;
  m.threads_time = (last - first) * m.thread_count;
  // Read again from the trace: the builder's windows hold only what is past their cursors.
  for (uint32_t t = 0; t < off_cpu_.size(); ++t) {
    OffCpuStream stream(trace_, t, off_cpu_causes_, monotonic_to_tsc_);
    OffCpu iv;
    while (stream.next(iv) && iv.begin < last)
      if (iv.cause == OffCpu::Preempted) {
        const uint64_t lo = std::max(iv.begin, first), hi = std::min(iv.end, last);
        if (hi > lo) m.preempted_in_run += hi - lo;
      }
  }
}

}  // namespace tasklens::model::detail
