// Context-switch tracking, against the machine's own kernel: the intervals the kernel reports for
// a thread that another thread keeps preempting must match the gaps the thread itself sees in the
// TSC while it spins; a thread that sleeps is reported blocked for as long as it slept; a slow
// page fault is reported within the touch that took it. The recorder's ring is tested here, in
// the end-to-end stage (one test at a time), since what it reports is the real scheduler's; the
// match of the preempted intervals is a timing, judged by the policy of e2e_timing.hpp.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "e2e_timing.hpp"
#include "recorder/switches.hpp"
#include "trace/format.hpp"

namespace tasklens {
namespace {

uint64_t now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

bool pin_to_cpu0() {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(0, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

// The time the hypervisor took CPU 0 away from this guest so far ("steal" in /proc/stat), in
// ms, at the kernel's 10 ms resolution; 0 where the kernel does not count it.
double stolen_ms_cpu0() {
  std::ifstream stat("/proc/stat");
  std::string line;
  while (std::getline(stat, line)) {
    if (line.rfind("cpu0 ", 0) != 0) continue;
    std::istringstream fields(line.substr(5));
    unsigned long long value = 0, steal = 0;
    for (int i = 0; i < 8 && fields >> value; ++i) steal = value;  // the 8th field
    return double(steal) * 1000.0 / double(sysconf(_SC_CLK_TCK));
  }
  return 0;
}

struct Measured {
  double seen_ms = 0, reported_ms = 0;
  double stolen_ms = 0;  // of the gaps seen, the time the hypervisor took (not a preemption)
  bool clocks_agree = false;
};

// The intervals of the records of `type` in a drain's output, for thread 7, clipped to
// [begin_ns, end_ns): their total in ms.
double reported_ms(const std::vector<uint8_t>& out, trace::RecordType type, uint64_t begin_ns,
                   uint64_t end_ns) {
  uint64_t total = 0;
  for (size_t pos = 0; pos + sizeof(trace::RecordHeader) + 8 <= out.size();) {
    trace::RecordHeader rh;
    std::memcpy(&rh, out.data() + pos, sizeof rh);
    EXPECT_GE(rh.size, sizeof rh + 8);
    if (rh.size < sizeof rh + 8) break;
    if (rh.type == static_cast<uint32_t>(type)) {
      uint32_t header[2];
      std::memcpy(header, out.data() + pos + sizeof rh, 8);
      EXPECT_EQ(header[0], 7u);
      for (uint32_t i = 0; i < header[1]; ++i) {
        uint64_t iv[2];
        std::memcpy(iv, out.data() + pos + sizeof rh + 8 + i * 16, 16);
        EXPECT_LT(iv[0], iv[1]);
        const uint64_t from = std::max(iv[0], begin_ns), to = std::min(iv[1], end_ns);
        if (from < to) total += to - from;
      }
    }
    pos += rh.size;
  }
  return double(total) / 1e6;
}

// Spins 300 ms on CPU 0 beside a rival thread; returns the off-CPU time the spinning thread
// saw in the TSC and the time its ring reported as preempted.
Measured measure(recorder::SwitchRing* ring) {
  Measured result;
  std::atomic<bool> stop{false};
  if (!pin_to_cpu0()) return result;
  // The TSC's rate, before the rival exists: calibrated beside it, a preemption just after the
  // 2 ms window (the rival's time slice, 3-4 ms) made the rate 2.9x too high, the spin 2.9x too
  // long and the gaps seen 2.9x too short.
  uint64_t ticks_per_ms = 0;
  {
    uint64_t n0 = now_ns(), t0 = __rdtsc();
    while (now_ns() - n0 < 2000000) {
    }
    ticks_per_ms = (__rdtsc() - t0) / 2;
  }
  std::thread rival([&] {  // shares CPU 0: preempts the measured thread again and again
    pin_to_cpu0();
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  // Spin 300 ms of wall time; a jump of more than ~20 us between two TSC reads is time the
  // thread spent off the CPU.
  uint64_t start = __rdtsc(), last = start, gaps = 0;
  // The reported intervals count only inside the spin itself (clipped to it): a preemption
  // just before or after it (the calibration above, the rival's last time slice) is none of
  // the thread's TSC gaps. Counting whole intervals anywhere around the spin can report three
  // times the gaps seen on a disturbed machine.
  const double stolen0 = stolen_ms_cpu0();
  const uint64_t begin_ns = now_ns();
  start = last = __rdtsc();
  while (__rdtsc() - start < 300 * ticks_per_ms) {
    uint64_t x = __rdtsc();
    if (x - last > ticks_per_ms / 50) gaps += x - last;
    last = x;
  }
  const uint64_t end_ns = now_ns();
  result.stolen_ms = stolen_ms_cpu0() - stolen0;
  stop = true;
  rival.join();
  std::vector<uint8_t> out;
  uint64_t lost = 0;
  recorder::switch_ring_drain(ring, 7, out, lost);
  EXPECT_EQ(lost, 0u);
  // In ms at the rate the spin itself shows (its TSC ticks over its wall time, 300 ms long):
  // a disturbed 2 ms calibration does not scale what was seen.
  const double spin_ticks_per_ms =
      end_ns > begin_ns ? double(last - start) / (double(end_ns - begin_ns) / 1e6) : 0;
  result.seen_ms = spin_ticks_per_ms > 0 ? double(gaps) / spin_ticks_per_ms : 0;
  // The TSC and the system clock agreed on the spin's length: a host that pauses the guest may
  // move one and not the other (a "300 ms" spin can last 1.5 s of the system clock).
  result.clocks_agree = spin_ticks_per_ms > 0.9 * double(ticks_per_ms) &&
                        spin_ticks_per_ms < 1.1 * double(ticks_per_ms);
  result.reported_ms = reported_ms(out, trace::RecordType::Preemptions, begin_ns, end_ns);
  return result;
}

// The thread also sees, as gaps, the time the hypervisor paused its virtual CPU, which the
// kernel does not count as a preemption (a noisy host can add 20-30 ms to 150 ms): that time,
// give or take the kernel's 10 ms resolution, may be missing from what was reported.
double lowest_expected(const Measured& m) {
  const double granularity = m.stolen_ms > 0 ? 10.0 : 0.0;
  return m.seen_ms - m.stolen_ms - granularity - (0.1 * m.seen_ms + 2.0);
}
double highest_expected(const Measured& m) { return m.seen_ms + 0.1 * m.seen_ms + 2.0; }

bool close_enough(const Measured& m) {
  return m.reported_ms >= lowest_expected(m) && m.reported_ms <= highest_expected(m);
}

TEST(RecorderSwitches, PreemptedIntervalsMatchWhatTheThreadSees) {
  recorder::SwitchRing* ring = recorder::switch_ring_open();
  if (!ring) GTEST_SKIP() << "perf context-switch records are not available here";
  // A sample is disturbed by what it measured itself: the host pausing the guest (its TSC and
  // system clock disagreeing on the spin's length), or taking CPU 0 away (steal).
  e2e::judge_timing<Measured>(
      "the preempted intervals against the gaps the spinning thread saw", e2e::Needs::SpinTiming,
      [&] { return measure(ring); },
      [](const Measured& m) {
        e2e::Violations v;
        std::ostringstream figures;
        figures << "reported " << m.reported_ms << " ms, seen " << m.seen_ms << " ms, want "
                << lowest_expected(m) << " to " << highest_expected(m) << "\n";
        if (!m.clocks_agree)
          v.disturbed = "the TSC and the system clock disagreed on the spin's length";
        else if (m.stolen_ms > 0)
          v.disturbed = "the host took " + std::to_string(m.stolen_ms) + " ms of CPU 0";
        if (m.clocks_agree && !(m.seen_ms > 30.0))
          v.hard = "the rival thread did not preempt the measured one: " + figures.str();
        else if (!close_enough(m))
          v.soft = figures.str();
        return v;
      },
      [](const Measured&) { return std::vector<nlohmann::json>{}; });
  recorder::switch_ring_close(ring);
}

}  // namespace
}  // namespace tasklens

namespace tasklens {
namespace {

TEST(RecorderSwitches, SleepIsReportedBlockedNotPreempted) {
  recorder::SwitchRing* ring = recorder::switch_ring_open();
  if (!ring) GTEST_SKIP() << "perf context-switch records are not available here";
  const uint64_t begin_ns = now_ns();
  for (int i = 0; i < 3; ++i) {
    timespec ts{0, 20000000};
    nanosleep(&ts, nullptr);
  }
  const uint64_t end_ns = now_ns();
  std::vector<uint8_t> out;
  uint64_t lost = 0;
  recorder::switch_ring_drain(ring, 7, out, lost);
  recorder::switch_ring_close(ring);
  const double blocked = reported_ms(out, trace::RecordType::Blocked, begin_ns, end_ns);
  const double preempted = reported_ms(out, trace::RecordType::Preemptions, begin_ns, end_ns);
  const double slept = double(end_ns - begin_ns) / 1e6;
  // Three sleeps of 20 ms: blocked for at least that, and off the CPU for no more than the time
  // measured (after a wake-up the thread may wait for its CPU: preempted, not blocked).
  EXPECT_GE(blocked, 60.0);
  EXPECT_LE(blocked + preempted, slept + 0.5);
}

}  // namespace
}  // namespace tasklens

namespace tasklens {
namespace {

// A page fault that keeps the thread on its CPU far longer than its usual ones is reported as
// a SlowFaults interval: here the first touch of a transparent huge page, which has the kernel
// clear 2 MiB (tens to hundreds of us) where the small-page faults before it took a microsecond
// or two. The interval lies within the slow touch and holds most of it.
struct FaultSample {
  bool usable = false;  // a huge-page touch well past the recorder's slow-fault rule, on the CPU
  double took_ms = 0;   // that touch, as the thread timed it
  double threshold_ms = 0;    // the rule's threshold, from the thread's own touches before this one
  double slow_ms = 0;         // the SlowFaults intervals reported
  double slow_within_ms = 0;  // of those, inside the touch
  std::string unusable;       // why no touch could judge the rule, when none could
  recorder::FaultsDrained faults;  // what the ring read of the faults during the touch
};

// The recorder's rule (switches.cpp): a fault is slow beyond 20 us, 8 times the thread's median
// fault and twice its 99th percentile. The thread's small-page touches stand for its faults.
double slow_fault_threshold_ms(std::vector<double> touches_ms) {
  std::sort(touches_ms.begin(), touches_ms.end());
  const double median = touches_ms[touches_ms.size() / 2];
  const double p99 = touches_ms[touches_ms.size() * 99 / 100];
  return std::max({0.020, 8 * median, 2 * p99});
}

// The process's anonymous memory backed by huge pages, in kB (smaps_rollup's AnonHugePages; -1
// when it cannot be read).
long anon_huge_kb() {
  std::ifstream in("/proc/self/smaps_rollup");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("AnonHugePages:", 0) == 0) return std::stol(line.substr(14));
  return -1;
}

FaultSample touch_huge_pages(recorder::SwitchRing* ring, bool& no_huge_pages) {
  FaultSample sample;
  constexpr size_t kSmall = 512, kPage = 4096, kHuge = 2u << 20;
  // The thread's usual faults first: small pages (no huge page can back this mapping).
  auto* small = static_cast<volatile char*>(
      mmap(nullptr, kSmall * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  EXPECT_NE(small, MAP_FAILED);
  if (small == MAP_FAILED) return sample;
  madvise(const_cast<char*>(small), kSmall * kPage, MADV_NOHUGEPAGE);
  std::vector<double> touches_ms;
  for (size_t i = 0; i < kSmall; ++i) {
    const uint64_t t0 = now_ns();
    small[i * kPage] = 1;
    touches_ms.push_back(double(now_ns() - t0) / 1e6);
  }
  sample.threshold_ms = slow_fault_threshold_ms(touches_ms);
  std::vector<uint8_t> out;
  uint64_t lost = 0;
  recorder::switch_ring_drain(ring, 7, out, lost);  // the usual faults are known from here
  // The kernel may refuse the fault events, or give a smaller ring (its locked-memory budget for
  // perf is per user, and other recordings running at the same time hold theirs): the recorder
  // then watches no fault, and nothing here can judge its rule.
  if (!recorder::switch_ring_watches_faults(ring)) {
    sample.unusable = "the kernel gave this thread no page-fault events (or only a small ring)";
    munmap(const_cast<char*>(small), kSmall * kPage);
    return sample;
  }
  // Then huge pages, touched one by one: a touch of 1.5 times the threshold or more (clear of
  // the rule's edge) that stayed on the CPU is what this test needs; the kernel may not have a
  // free 2 MiB block for the first ones, or clear one fast.
  const size_t kTries = 8;
  char* raw = static_cast<char*>(mmap(nullptr, (kTries + 1) * kHuge, PROT_READ | PROT_WRITE,
                                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  EXPECT_NE(raw, MAP_FAILED);
  char* huge =
      reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(raw) + kHuge - 1) & ~(kHuge - 1));
  if (madvise(huge, kTries * kHuge, MADV_HUGEPAGE) != 0) no_huge_pages = true;
  for (size_t t = 0; t < kTries && !no_huge_pages && !sample.usable; ++t) {
    const long huge_before = anon_huge_kb();
    // Drained just before the touch, so that the next drain holds the touch's faults only (not
    // those of reading smaps_rollup, say, which may be slow too).
    out.clear();
    uint64_t lost_before = lost;
    recorder::switch_ring_drain(ring, 7, out, lost);
    if (lost != lost_before) continue;
    const uint64_t begin_ns = now_ns();
    *reinterpret_cast<volatile char*>(huge + t * kHuge) = 1;
    const uint64_t end_ns = now_ns();
    out.clear();
    lost_before = lost;
    recorder::switch_ring_drain(ring, 7, out, lost);
    // A record the ring dropped may be the switch that interrupted the fault (a fault that left
    // the CPU is not counted as one).
    if (lost != lost_before) continue;
    const recorder::FaultsDrained faults = recorder::switch_ring_last_faults(ring);
    const double took_ms = double(end_ns - begin_ns) / 1e6;
    // The rule's threshold counts every fault before this one, the earlier huge pages' too (the
    // 99th percentile of a few hundred faults is among the slowest few).
    sample.threshold_ms = slow_fault_threshold_ms(touches_ms);
    touches_ms.push_back(took_ms);
    const double switched = reported_ms(out, trace::RecordType::Preemptions, begin_ns, end_ns) +
                            reported_ms(out, trace::RecordType::Blocked, begin_ns, end_ns);
    // A fault that left the CPU is counted as the switch's interval, not as a fault; one the
    // kernel did not send whole (its events throttled by a burst of faults) is not seen.
    if (took_ms < 1.5 * sample.threshold_ms || switched > 0 || faults.interrupted > 0 ||
        faults.throttled)
      continue;
    // A touch the kernel did not back with a huge page (none free: it fell back to a small one)
    // faulted as fast as the others, and what made it slow was not its fault (the virtual
    // machine's host may pause a CPU at any time, unseen by the kernel's accounts).
    const long huge_after = anon_huge_kb();
    if (huge_before >= 0 && huge_after >= 0 && huge_after - huge_before < long{kHuge / 1024})
      continue;
    // The fault itself, as the kernel timed it, must be slow by the rule too: a touch slow around
    // a fast fault was slowed by something else (the host pausing the CPU, or a small page the
    // kernel fell back to while khugepaged collapsed an earlier touch's block). Judged against
    // the threshold the touches give, not the recorder's own: a recorder whose threshold is too
    // high fails here. 1.5 times it, clear of the rule's histogram buckets (a quarter wide).
    if (faults.matched > 0 && double(faults.longest_ns) / 1e6 < 1.5 * sample.threshold_ms) continue;
    sample.usable = true;
    sample.took_ms = took_ms;
    sample.faults = faults;
    sample.slow_ms = reported_ms(out, trace::RecordType::SlowFaults, 0, ~0ull);
    sample.slow_within_ms = reported_ms(out, trace::RecordType::SlowFaults, begin_ns, end_ns);
  }
  munmap(raw, (kTries + 1) * kHuge);
  munmap(const_cast<char*>(small), kSmall * kPage);
  return sample;
}

TEST(RecorderSwitches, SlowPageFaultIsReportedWithinTheTouchThatTookIt) {
  recorder::SwitchRing* ring = recorder::switch_ring_open(/*watch_faults=*/true);
  if (!ring) GTEST_SKIP() << "perf context-switch records are not available here";
  bool no_huge_pages = false;
  // Judged by the timing policy: where the slow fault's interval lies is exact (within the
  // touch, nowhere else); how much of the touch it holds is a timing. A sample without a slow
  // enough touch cannot judge either.
  e2e::judge_timing<FaultSample>(
      "the slow fault's interval against the touch that took it", e2e::Needs::SpinTiming,
      [&] { return touch_huge_pages(ring, no_huge_pages); },
      [](const FaultSample& f) {
        e2e::Violations v;
        std::ostringstream figures;
        figures << "the touch took " << f.took_ms << " ms (slow from " << f.threshold_ms
                << " ms); reported slow " << f.slow_ms << " ms, " << f.slow_within_ms
                << " ms of it within the touch; the ring read " << f.faults.starts
                << " fault starts and " << f.faults.ends << " ends during it, timed "
                << f.faults.matched << " faults, the longest " << f.faults.longest_ns / 1e6
                << " ms against the rule's threshold of " << f.faults.floor_ns / 1e6 << " ms ("
                << f.faults.faults_seen << " faults timed so far"
                << (f.faults.throttled ? "; the kernel throttled the fault events" : "") << ")\n";
        if (!f.usable) {
          v.disturbed =
              !f.unusable.empty()
                  ? f.unusable
                  : "no huge-page touch took 1.5 times the slow-fault threshold on the CPU";
          return v;
        }
        if (!(f.slow_ms > 0) || f.slow_within_ms != f.slow_ms || f.slow_ms > f.took_ms)
          v.hard = "the slow fault is not reported within its touch: " + figures.str();
        else if (f.slow_ms < 0.5 * f.took_ms)
          v.soft = figures.str();
        return v;
      },
      [](const FaultSample&) { return std::vector<nlohmann::json>{}; });
  recorder::switch_ring_close(ring);
  if (no_huge_pages) GTEST_SKIP() << "transparent huge pages are not available here";
}

}  // namespace
}  // namespace tasklens
