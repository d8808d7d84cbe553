// The OpenMP runtime's own cost per kind of interval between two events of a thread, as the
// builder takes it out of the strands (the rule: builder_runtime_cost.cpp). Internal to
// src/model.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "trace/format.hpp"
#include "trace/reader.hpp"

namespace tasklens::model::detail {

// The interval key of an event (trace::interval_key): its kind and what changes the runtime's
// path through it.
inline uint16_t interval_event_key(const trace::Event& e) {
  using trace::EventKind;
  uint64_t sub = 0;
  switch (e.kind) {
    case EventKind::TaskCreate:
      // The paths differ for untied, undeferred (if(0), included) and final tasks.
      sub = (e.f[2] & 0x10000000 ? 1 : 0) | (e.f[2] & 0x08000000 ? 2 : 0) |
            (e.f[2] & 0x20000000 ? 4 : 0);
      break;
    case EventKind::TaskSchedule:
      sub = e.f[1];  // the prior task's status
      break;
    case EventKind::SyncBegin:
    case EventKind::SyncEnd:
    case EventKind::SyncWaitBegin:
    case EventKind::SyncWaitEnd:
    case EventKind::WorkBegin:
    case EventKind::WorkEnd:
    case EventKind::Dispatch:
      sub = e.f[0];
      break;
    default:
      break;
  }
  return trace::interval_key(e.kind, sub);
}

// The calibrated kinds of interval (trace::RuntimeCostEntry): the keys' dense indexes
// (kNoCostKey: none), per kind of interval [(before * keys + after) * 2 + solo] its Kind (index
// + 1; 0: not calibrated), and what each kind has shown in this recording so far.
class RuntimeCostTable {
 public:
  // The calibration's entries; empty() after it when none can be used.
  void load(const std::vector<trace::RuntimeCostEntry>& entries);
  bool empty() const { return kinds_.empty(); }
  size_t kinds() const { return kinds_.size(); }
  // The calibration's speed scale (f: builder_runtime_cost.cpp).
  double speed() const { return speed_; }

  // What to take out of an interval of `delta` ticks of this kind (at most delta); learns the
  // kind's distribution on the way.
  uint64_t take(uint16_t before, uint16_t after, bool solo, uint64_t delta) {
    const uint8_t b = index_[before], a = index_[after];
    if (b == kNoCostKey || a == kNoCostKey) return 0;
    const uint16_t k = kind_of_pair_[(size_t(b) * keys_ + a) * 2 + solo];
    if (k == 0) return 0;
    Kind& rk = kinds_[k - 1];
    ++rk.hist[bucket(delta)];
    if (++rk.count >= 64 && (rk.count & (rk.count < 1024 ? rk.count - 1 : 1023)) == 0) update(rk);
    return std::min(delta, rk.current);
  }

 private:
  static constexpr uint8_t kNoCostKey = 0xff;
  struct Kind {
    static constexpr uint32_t kBuckets = 16 + 20 * 8;  // exact below 16 ticks, then 8 per octave
    uint64_t cap = 0;                                  // the calibration's median (ticks)
    uint64_t median = 0;   // the recording's median so far (from 64 intervals on)
    uint64_t current = 0;  // what is taken out of each interval of this kind for now
    uint64_t count = 0;    // intervals of this kind seen in strands
    uint32_t hist[kBuckets] = {};
  };
  static uint32_t bucket(uint64_t ticks) {
    if (ticks < 16) return uint32_t(ticks);
    const uint32_t e = std::min<uint32_t>(63 - __builtin_clzll(ticks), 23);  // 4 .. 23
    const uint32_t sub = e == 23 && ticks >> 24 ? 7 : uint32_t(ticks >> (e - 3)) & 7;
    return 16 + (e - 4) * 8 + sub;
  }
  static uint64_t bucket_floor(uint32_t b) {
    if (b < 16) return b;
    return uint64_t(8 + (b - 16) % 8) << (4 + (b - 16) / 8 - 3);
  }
  void update(Kind& rk);
  std::vector<uint8_t> index_;
  uint32_t keys_ = 0;
  std::vector<uint16_t> kind_of_pair_;
  std::vector<Kind> kinds_;
  double speed_ = 1;
};

}  // namespace tasklens::model::detail
