// The OpenMP runtime's own cost inside the strands. Between two consecutive events of a thread,
// the strand's measured time holds the runtime's code after the first event's callback and before
// the second's (creating a task, switching to it, entering a taskwait, fetching a loop chunk)
// besides the program's own. `tasklens record` times each kind of interval on empty tasks after
// the run (trace::RuntimeCostEntry: the calibration's median C), and handle()
// (builder_events.cpp) takes out of each interval of a calibrated kind
//
//     min(interval, M, f x C)
//
// where M is the kind's median in this recording and f the calibration's speed scale:
//   - never more than C: what the runtime costs there when the program does nothing. Where the
//     program does real work between the two events (M far above C), only that goes;
//   - never more than M: a kind whose intervals are mostly shorter than the calibration's is
//     not charged more than its typical length;
//   - f: a machine's speed can change by half or double between two moments (frequency, a busy
//     sibling thread, a host's other guests), and the calibration ran at another moment than
//     the program. f is the median over the intervals of M / C of their kind, between 0.5 and 1:
//     below 1 when most intervals are shorter than the calibration says (the run was faster),
//     so that the calibration is scaled to the run; never above 1, since intervals longer than
//     C are as likely the program's own work as a slower machine.
// M is learnt as the intervals come (a histogram of 8 buckets per octave, its floor taken at 64
// intervals, 128, ... 1024, then every 1024), and f with it: the first 63 intervals of a kind
// keep their time.
#include <algorithm>

#include "model/builder_state.hpp"

namespace tasklens::model::detail {

void RuntimeCostTable::update(Kind& rk) {
  const uint64_t half = (rk.count + 1) / 2;
  uint64_t seen = 0;
  uint32_t b = 0;
  for (; b + 1 < Kind::kBuckets; ++b) {
    seen += rk.hist[b];
    if (seen >= half) break;
  }
  rk.median = bucket_floor(b);
  // The speed scale: the median of M / C over the intervals seen (kinds weighted by their
  // counts), between 0.5 and 1; then every kind's amount with it.
  std::vector<std::pair<double, uint64_t>> ratios;
  uint64_t total = 0;
  for (const Kind& k : kinds_)
    if (k.count >= 64 && k.cap > 0) {
      ratios.emplace_back(double(k.median) / double(k.cap), k.count);
      total += k.count;
    }
  std::sort(ratios.begin(), ratios.end());
  double f = 1;
  uint64_t acc = 0;
  for (const auto& [ratio, count] : ratios) {
    acc += count;
    if (2 * acc >= total) {
      f = ratio;
      break;
    }
  }
  speed_ = std::clamp(f, 0.5, 1.0);
  for (Kind& k : kinds_)
    if (k.count >= 64)
      k.current = std::min<uint64_t>(k.median, uint64_t(speed_ * double(k.cap) + 0.5));
}

void Builder::load_runtime_cost() {
  // Only the TSC as the primary metric: the costs are TSC ticks, and handle() takes them out of
  // the primary metric's delta.
  if (tsc_metric_ != 0) return;
  if (options_.interval_sink) {
    track_keys_ = true;
    return;
  }
  if (options_.keep_runtime_cost) return;
  runtime_costs_.load(trace_.runtime_costs());
  track_keys_ = !runtime_costs_.empty();
}

void RuntimeCostTable::load(const std::vector<trace::RuntimeCostEntry>& entries) {
  if (entries.empty()) return;
  index_.assign(size_t{1} << 16, kNoCostKey);
  for (const trace::RuntimeCostEntry& c : entries)
    for (uint16_t k : {c.before, c.after})
      if (index_[k] == kNoCostKey && keys_ < kNoCostKey) index_[k] = uint8_t(keys_++);
  kind_of_pair_.assign(size_t(keys_) * keys_ * 2, 0);
  for (const trace::RuntimeCostEntry& c : entries) {
    const uint8_t b = index_[c.before], a = index_[c.after];
    const uint64_t cap = (c.milli_ticks + 500) / 1000;
    if (b == kNoCostKey || a == kNoCostKey || cap == 0 || kinds_.size() >= 0xfffe) continue;
    uint16_t& k = kind_of_pair_[(size_t(b) * keys_ + a) * 2 + (c.solo ? 1 : 0)];
    if (k == 0) {
      kinds_.emplace_back();
      k = uint16_t(kinds_.size());
    }
    kinds_[k - 1].cap = cap;
  }
}

}  // namespace tasklens::model::detail
