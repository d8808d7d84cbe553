// Time a program thread did not spend on the program, though its strand's clock ran: switched
// out (preempted by another thread, or blocked), or held in a page fault far slower than the
// thread's typical one (the recorder's SlowFaults records). The builder takes these intervals out
// of the strands they fall in (handle(), builder_events.cpp) and reports each cause apart.
#include <algorithm>

#include "model/builder_state.hpp"

namespace tasklens::model::detail {

void Builder::load_preemptions() {
  if (tsc_metric_ < 0) return;
  const bool with_blocked = !options_.blocked_as_work;
  const bool with_faults = !options_.keep_slow_faults;
  if (trace_.preemptions().empty() && (!with_blocked || trace_.blocked().empty()) &&
      (!with_faults || trace_.slow_faults().empty()))
    return;
  const auto& syncs = trace_.clock_syncs();
  if (syncs.size() < 2 || trace_.tsc_hz() <= 0) return;
  const trace::ClockSync& s0 = syncs.front();
  double ticks_per_ns = trace_.tsc_hz() / 1e9;
  auto to_tsc = [&](uint64_t ns) {
    double t = double(s0.tsc) + (double(ns) - double(s0.monotonic_ns)) * ticks_per_ns;
    // A corrupted time must not overflow the conversion.
    return t <= 0 ? uint64_t(0) : t >= 1.8e19 ? ~uint64_t(0) : static_cast<uint64_t>(t);
  };
  using Intervals = std::vector<std::vector<std::pair<uint64_t, uint64_t>>>;
  const std::pair<const Intervals*, OffCpu::Cause> sources[] = {
      {&trace_.preemptions(), OffCpu::Preempted},
      {with_blocked ? &trace_.blocked() : nullptr, OffCpu::Blocked},
      {with_faults ? &trace_.slow_faults() : nullptr, OffCpu::SlowFault}};
  size_t threads = 0;
  for (auto [intervals, cause] : sources)
    if (intervals) threads = std::max(threads, intervals->size());
  preempt_.resize(threads);
  preempt_cursor_.assign(threads, 0);
  for (size_t t = 0; t < threads; ++t) {
    auto& out = preempt_[t];
    for (auto [intervals, cause] : sources)
      if (intervals && t < intervals->size())
        for (auto [b, e] : (*intervals)[t]) out.push_back({to_tsc(b), to_tsc(e), cause});
    std::sort(out.begin(), out.end(),
              [](const OffCpu& a, const OffCpu& b) { return a.begin < b.begin; });
    // The recorder never reports a fault inside a switch, but a damaged trace may: what overlaps
    // an earlier interval is not taken out twice.
    uint64_t reach = 0;
    for (OffCpu& iv : out) {
      iv.begin = std::max(iv.begin, reach);
      iv.end = std::max(iv.end, iv.begin);
      reach = std::max(reach, iv.end);
    }
  }
}

uint64_t Builder::preempted_between_slow(uint32_t thread, uint64_t from, uint64_t to,
                                         OffCpuSplit& split) {
  const auto& iv = preempt_[thread];
  size_t& c = preempt_cursor_[thread];
  while (c < iv.size() && iv[c].end <= from) ++c;
  uint64_t total = 0;
  for (size_t i = c; i < iv.size() && iv[i].begin < to; ++i) {
    uint64_t lo = std::max(iv[i].begin, from), hi = std::min(iv[i].end, to);
    if (hi > lo) {
      total += hi - lo;
      if (iv[i].cause == OffCpu::Blocked) split.blocked += hi - lo;
      if (iv[i].cause == OffCpu::SlowFault) split.faults += hi - lo;
    }
  }
  return total;
}

void Builder::preemption_in_run(Model& m, uint64_t first, uint64_t last) const {
  if (last <= first) return;
  m.threads_time = (last - first) * m.thread_count;
  for (const auto& intervals : preempt_)
    for (const OffCpu& iv : intervals)
      if (iv.cause == OffCpu::Preempted) {
        const uint64_t lo = std::max(iv.begin, first), hi = std::min(iv.end, last);
        if (hi > lo) m.preempted_in_run += hi - lo;
      }
}

}  // namespace tasklens::model::detail
