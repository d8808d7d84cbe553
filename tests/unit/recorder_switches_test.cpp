// The switch ring's rules (src/recorder/switches.cpp) on exact event streams: a ring with no perf
// event behind it, fed the kernel's records (switch_ring_synthetic), drained as the writer
// drains it. What the kernel really sends is tests/e2e/e2e_switches_test.cpp's business.
#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "recorder/switches.hpp"
#include "trace/format.hpp"

namespace tasklens::recorder {
namespace {

using Intervals = std::vector<std::pair<uint64_t, uint64_t>>;

class Ring {
 public:
  Ring() : ring_(switch_ring_synthetic(1 << 16)) {}
  ~Ring() { switch_ring_close(ring_); }
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  // A fault from `start` to `end` (its start sample, then its minor-fault sample).
  void fault(uint64_t start, uint64_t end) {
    sample(kSyntheticFaultId[0], start);
    sample(kSyntheticFaultId[1], end);
  }
  void sample(uint64_t id, uint64_t time) { put(PERF_RECORD_SAMPLE, 0, {id, time}); }
  void switch_out(uint64_t time, bool preempted) {
    put(PERF_RECORD_SWITCH,
        PERF_RECORD_MISC_SWITCH_OUT | (preempted ? PERF_RECORD_MISC_SWITCH_OUT_PREEMPT : 0),
        {time});
  }
  void switch_in(uint64_t time) { put(PERF_RECORD_SWITCH, 0, {time}); }
  void throttle(uint64_t time) { put(PERF_RECORD_THROTTLE, 0, {time, kSyntheticFaultId[0], 0}); }
  void unthrottle(uint64_t time) {
    put(PERF_RECORD_UNTHROTTLE, 0, {time, kSyntheticFaultId[0], 0});
  }
  void lost(uint64_t count) { put(PERF_RECORD_LOST, 0, {0, count}); }

  // Drains the ring: the intervals of each kind written, thread 7's.
  struct Drained {
    Intervals preempted, blocked, slow;
    uint64_t lost = 0;
    FaultsDrained faults;
  };
  Drained drain() {
    std::vector<uint8_t> out;
    Drained d;
    switch_ring_drain(ring_, 7, out, d.lost);
    for (size_t pos = 0; pos + sizeof(trace::RecordHeader) + 8 <= out.size();) {
      trace::RecordHeader rh;
      std::memcpy(&rh, out.data() + pos, sizeof rh);
      uint32_t head[2];
      std::memcpy(head, out.data() + pos + sizeof rh, sizeof head);
      EXPECT_EQ(head[0], 7u);
      Intervals* into = rh.type == uint32_t(trace::RecordType::Preemptions)  ? &d.preempted
                        : rh.type == uint32_t(trace::RecordType::Blocked)    ? &d.blocked
                        : rh.type == uint32_t(trace::RecordType::SlowFaults) ? &d.slow
                                                                             : nullptr;
      EXPECT_NE(into, nullptr) << rh.type;
      for (uint32_t i = 0; into && i < head[1]; ++i) {
        uint64_t iv[2];
        std::memcpy(iv, out.data() + pos + sizeof rh + sizeof head + i * sizeof iv, sizeof iv);
        into->emplace_back(iv[0], iv[1]);
      }
      pos += rh.size;
    }
    d.faults = switch_ring_last_faults(ring_);
    return d;
  }

 private:
  void put(uint32_t type, uint16_t misc, std::vector<uint64_t> words) {
    perf_event_header h{type, misc, static_cast<uint16_t>(sizeof h + 8 * words.size())};
    std::vector<uint8_t> rec(h.size);
    std::memcpy(rec.data(), &h, sizeof h);
    std::memcpy(rec.data() + sizeof h, words.data(), 8 * words.size());
    switch_ring_feed(ring_, rec.data(), rec.size());
  }
  SwitchRing* ring_;
};

// 300 faults of 1,000 ns: the thread's typical fault is the top of their histogram bucket (four
// buckets per power of two: [896, 1024) for 1,000 ns), 1,023 ns, and so is its 99th percentile
// while fewer than 1 in 100 of its faults are longer.
constexpr uint64_t kTypical = 1023;
void usual_faults(Ring& r, uint64_t from) {
  for (uint64_t i = 0; i < 300; ++i) r.fault(from + i * 10'000, from + i * 10'000 + 1'000);
}

TEST(SwitchRingFaults, ASlowFaultIsItsTimeBeyondTheTypicalFault) {
  Ring r;
  usual_faults(r, 1'000'000);
  Ring::Drained usual = r.drain();
  EXPECT_TRUE(usual.slow.empty());
  EXPECT_EQ(usual.faults.matched, 300u);
  EXPECT_EQ(usual.faults.longest_ns, 1'000u);
  // Slow from 20 us (above 8 x 1,023 ns and twice the 99th percentile, 2,046 ns).
  r.fault(5'000'000, 5'100'000);  // 100 us
  r.fault(6'000'000, 6'019'000);  // 19 us: not slow
  r.fault(7'000'000, 7'025'000);  // 25 us
  Ring::Drained d = r.drain();
  EXPECT_EQ(d.slow,
            (Intervals{{5'000'000 + kTypical, 5'100'000}, {7'000'000 + kTypical, 7'025'000}}));
  EXPECT_EQ(d.faults.starts, 3u);
  EXPECT_EQ(d.faults.ends, 3u);
  EXPECT_EQ(d.faults.matched, 3u);
  EXPECT_EQ(d.faults.longest_ns, 100'000u);
  EXPECT_EQ(d.faults.floor_ns, 20'000u);
  EXPECT_EQ(d.faults.faults_seen, 303u);
  EXPECT_TRUE(d.preempted.empty() && d.blocked.empty());
}

TEST(SwitchRingFaults, BeforeTheThreadsTypicalFaultIsKnownItIsTwoMicroseconds) {
  Ring r;
  r.fault(1'000'000, 1'030'000);  // 30 us: slow beyond 2 us (fewer than 128 faults seen)
  r.fault(2'000'000, 2'015'000);  // 15 us: below 20 us
  EXPECT_EQ(r.drain().slow, (Intervals{{1'000'000 + 2'000, 1'030'000}}));
}

TEST(SwitchRingFaults, AThreadWhoseFaultsAreOftenLongKeepsThem) {
  Ring r;
  // 190 faults of 1 us and 10 of 60 us: the 99th percentile is 60 us (bucket [57344, 65536)),
  // so a fault is slow only beyond twice that.
  for (uint64_t i = 0; i < 200; ++i)
    r.fault(1'000'000 + i * 100'000, 1'000'000 + i * 100'000 + (i % 20 == 0 ? 60'000 : 1'000));
  Ring::Drained d = r.drain();
  EXPECT_TRUE(d.slow.empty());
  EXPECT_EQ(d.faults.floor_ns, 2u * 65'535);
  r.fault(50'000'000, 50'120'000);  // 120 us: within twice the 99th percentile
  r.fault(60'000'000, 60'140'000);  // 140 us
  EXPECT_EQ(r.drain().slow, (Intervals{{60'000'000 + kTypical, 60'140'000}}));
}

TEST(SwitchRingFaults, AFaultThatLeftTheCpuIsTheSwitchsIntervalNotASlowFault) {
  Ring r;
  usual_faults(r, 1'000'000);
  r.drain();
  r.sample(kSyntheticFaultId[0], 5'000'000);
  r.switch_out(5'010'000, true);
  r.switch_in(5'090'000);
  r.sample(kSyntheticFaultId[1], 5'100'000);
  Ring::Drained d = r.drain();
  EXPECT_TRUE(d.slow.empty());
  EXPECT_EQ(d.preempted, (Intervals{{5'010'000, 5'090'000}}));
  EXPECT_EQ(d.faults.interrupted, 1u);
  EXPECT_EQ(d.faults.matched, 0u);
  // A sleep is blocked, not preempted.
  r.switch_out(6'000'000, false);
  r.switch_in(6'500'000);
  EXPECT_EQ(r.drain().blocked, (Intervals{{6'000'000, 6'500'000}}));
}

TEST(SwitchRingFaults, LostRecordsAndThrottlingAreSaid) {
  Ring r;
  usual_faults(r, 1'000'000);
  r.drain();
  // A lost record may be the fault's end: its start is forgotten, nothing is guessed.
  r.sample(kSyntheticFaultId[0], 5'000'000);
  r.lost(3);
  r.sample(kSyntheticFaultId[1], 5'100'000);
  Ring::Drained d = r.drain();
  EXPECT_EQ(d.lost, 3u);
  EXPECT_TRUE(d.slow.empty());
  EXPECT_EQ(d.faults.matched, 0u);
  EXPECT_FALSE(d.faults.throttled);
  // The kernel throttled the fault events: said for this drain and the next until unthrottled.
  r.throttle(6'000'000);
  EXPECT_TRUE(r.drain().faults.throttled);
  EXPECT_TRUE(r.drain().faults.throttled);
  r.unthrottle(7'000'000);
  EXPECT_TRUE(r.drain().faults.throttled);  // (throttled for part of this drain)
  EXPECT_FALSE(r.drain().faults.throttled);
  // A major fault ends a fault too.
  r.sample(kSyntheticFaultId[0], 8'000'000);
  r.sample(kSyntheticFaultId[2], 8'100'000);
  EXPECT_EQ(r.drain().slow, (Intervals{{8'000'000 + kTypical, 8'100'000}}));
}

}  // namespace
}  // namespace tasklens::recorder
