#include "recorder/switches.hpp"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>

#include "trace/format.hpp"
#include "trace/reader.hpp"

namespace tasklens::recorder {

namespace {
// 256 KiB: 16,000 switch records (16 bytes each) between two drains (100 ms). A thread that
// yields to another on a shared CPU switches tens of thousands of times a second; a smaller
// ring loses records, and with them intervals that then count as work. The kernel limits the
// locked memory of perf rings (perf_event_mlock_kb, per user): smaller rings are tried next.
constexpr size_t kDataPages[] = {64, 16, 4};

// Page faults. A first touch of memory takes 1-2 us, but now and then one takes hundreds of us
// or milliseconds: the hypervisor backing the page, memory reclaim, a compaction. The thread
// stays on its CPU throughout, so no switch record shows it, and a strand that faults once at
// the wrong moment (a start-up strand on the critical path) grows tenfold. The kernel reports
// each fault's start (PERF_COUNT_SW_PAGE_FAULTS, in the fault handler) and its end (the
// minor/major fault counts, when it is accounted). A fault is slow when it took longer than
// kSlowFaultNs, kSlowFaultFactor times the thread's typical (median) fault and twice its 99th
// percentile (a program whose faults are often long, huge pages say, keeps them): the time
// beyond the typical fault is written as an interval, which the model takes out like a
// preemption.
constexpr uint64_t kSlowFaultNs = 20'000;
constexpr uint64_t kSlowFaultFactor = 8;
// Each watched fault costs the kernel about a microsecond more (a sample into the ring). Each
// fault event may deliver this many samples per budget period, then the kernel disables it until
// the writer refreshes it: a program that faults a million pages pays at most ~1% for the watch.
constexpr uint32_t kFaultBudget = 1024;
constexpr uint64_t kFaultBudgetPeriodNs = 100'000'000;
// The thread's fault times: a histogram with four buckets per power of two of ns (1 ns to 1 s).
// Until kTypicalAfter faults were seen the typical fault is kDefaultTypicalNs and there is no
// percentile test.
constexpr size_t kFaultBuckets = 128;
constexpr uint64_t kDefaultTypicalNs = 2'000;
constexpr uint32_t kTypicalAfter = 128;
size_t fault_bucket(uint64_t ns) {
  if (ns < 4) return ns;
  int lg = 63 - __builtin_clzll(ns);
  size_t b = size_t(lg) * 4 + ((ns >> (lg - 2)) & 3);
  return b < kFaultBuckets ? b : kFaultBuckets - 1;
}
uint64_t fault_bucket_top(size_t b) {  // the largest time in bucket b (4-7 stay empty)
  if (b < 8) return b;
  return ((4 + (b & 3) + 1) << (b / 4 - 2)) - 1;
}
enum FaultEvent { kFaultStart, kFaultMinor, kFaultMajor, kFaultEvents };
constexpr uint64_t kFaultConfig[kFaultEvents] = {
    PERF_COUNT_SW_PAGE_FAULTS, PERF_COUNT_SW_PAGE_FAULTS_MIN, PERF_COUNT_SW_PAGE_FAULTS_MAJ};
}  // namespace

struct SwitchRing {
  int fd = -1;
  perf_event_mmap_page* page = nullptr;
  uint8_t* data = nullptr;
  size_t data_size = 0;
  size_t map_size = 0;
  uint64_t pending_out = 0;  // a switch-out waiting for its switch-in
  bool pending_preempted = false;
  // Page faults (none watched when fault_fd[0] < 0): the events, their sample ids, the start
  // waiting for its end, the samples each event used since its budget was last refreshed.
  int fault_fd[kFaultEvents] = {-1, -1, -1};
  uint64_t fault_id[kFaultEvents] = {};
  uint64_t fault_start = 0;
  uint32_t fault_used[kFaultEvents] = {};
  uint64_t budget_refreshed_ns = 0;
  uint32_t fault_histogram[kFaultBuckets] = {};
  uint32_t faults_seen = 0;
  bool throttled = false;  // the kernel throttled a fault event, and has not unthrottled it yet
  FaultsDrained last;      // what the last drain read of the faults
  bool synthetic = false;  // switch_ring_synthetic's: no perf event behind it
};

namespace {

// The time below which `share` of the thread's faults took (the top of its bucket).
uint64_t fault_quantile(const SwitchRing& r, double share) {
  uint64_t want = uint64_t(double(r.faults_seen) * share), below = 0;
  for (size_t i = 0; i < kFaultBuckets; ++i) {
    below += r.fault_histogram[i];
    if (below > want) return fault_bucket_top(i);
  }
  return fault_bucket_top(kFaultBuckets - 1);
}

void close_fault_events(SwitchRing* r) {
  if (r->synthetic) return;
  for (int& fd : r->fault_fd) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
}

// Sends the thread's page faults into its switch ring (sampled one by one, with their id to tell
// start from end). Without them (perf events refused, a small ring) faults are simply not
// watched.
void open_fault_events(SwitchRing* r) {
  for (int i = 0; i < kFaultEvents; ++i) {
    perf_event_attr attr;
    std::memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = kFaultConfig[i];
    attr.sample_period = 1;
    attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME;
    attr.use_clockid = 1;  // the ring's clock: a redirected event must use the same
    attr.clockid = CLOCK_MONOTONIC;
    attr.exclude_kernel = 1;
    attr.disabled = 1;  // enabled with its budget below
    long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    r->fault_fd[i] = static_cast<int>(fd);
    if (fd < 0 || ioctl(r->fault_fd[i], PERF_EVENT_IOC_SET_OUTPUT, r->fd) != 0 ||
        ioctl(r->fault_fd[i], PERF_EVENT_IOC_ID, &r->fault_id[i]) != 0) {
      close_fault_events(r);
      return;
    }
  }
  for (int fd : r->fault_fd) ioctl(fd, PERF_EVENT_IOC_REFRESH, kFaultBudget);
}

// Gives each fault event back the samples it used, once per budget period: the kernel disables
// an event whose budget ran out, and this enables it again.
void refresh_fault_budget(SwitchRing* r) {
  if (r->fault_fd[0] < 0 || r->synthetic) return;
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t now_ns = uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
  if (now_ns - r->budget_refreshed_ns < kFaultBudgetPeriodNs) return;
  r->budget_refreshed_ns = now_ns;
  for (int i = 0; i < kFaultEvents; ++i) {
    if (r->fault_used[i] == 0) continue;
    ioctl(r->fault_fd[i], PERF_EVENT_IOC_REFRESH, r->fault_used[i]);
    r->fault_used[i] = 0;
  }
}

}  // namespace

SwitchRing* switch_ring_open(bool watch_faults) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_DUMMY;
  attr.context_switch = 1;
  attr.sample_id_all = 1;
  attr.sample_type = PERF_SAMPLE_TIME;
  attr.use_clockid = 1;
  attr.clockid = CLOCK_MONOTONIC;
  attr.exclude_kernel = 1;
  long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) return nullptr;
  size_t page_size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* m = MAP_FAILED;
  size_t pages = 0;
  for (size_t try_pages : kDataPages) {
    m = mmap(nullptr, page_size * (1 + try_pages), PROT_READ | PROT_WRITE, MAP_SHARED,
             static_cast<int>(fd), 0);
    if (m != MAP_FAILED) {
      pages = try_pages;
      break;
    }
  }
  if (m == MAP_FAILED) {
    close(static_cast<int>(fd));
    return nullptr;
  }
  auto* ring = new (std::nothrow) SwitchRing();
  if (!ring) {
    munmap(m, page_size * (1 + pages));
    close(static_cast<int>(fd));
    return nullptr;
  }
  ring->fd = static_cast<int>(fd);
  ring->page = static_cast<perf_event_mmap_page*>(m);
  ring->data = static_cast<uint8_t*>(m) + page_size;
  ring->data_size = page_size * pages;
  ring->map_size = page_size * (1 + pages);
  // Two samples per fault: only a full-size ring holds a budget's worth beside the switches.
  if (watch_faults && pages == kDataPages[0]) open_fault_events(ring);
  return ring;
}

bool switch_ring_watches_faults(const SwitchRing* ring) { return ring && ring->fault_fd[0] >= 0; }

FaultsDrained switch_ring_last_faults(const SwitchRing* ring) {
  return ring ? ring->last : FaultsDrained{};
}

SwitchRing* switch_ring_synthetic(size_t data_bytes) {
  auto* ring = new SwitchRing();
  ring->synthetic = true;
  ring->page = new perf_event_mmap_page();
  ring->data = new uint8_t[data_bytes]();
  ring->data_size = data_bytes;
  for (int i = 0; i < kFaultEvents; ++i) {
    ring->fault_fd[i] = 0;  // (never used: no ioctl, no close)
    ring->fault_id[i] = kSyntheticFaultId[i];
  }
  return ring;
}

void switch_ring_feed(SwitchRing* ring, const void* record, size_t bytes) {
  const uint64_t head = ring->page->data_head;
  for (size_t i = 0; i < bytes; ++i)
    ring->data[(head + i) % ring->data_size] = static_cast<const uint8_t*>(record)[i];
  __atomic_store_n(&ring->page->data_head, head + bytes, __ATOMIC_RELEASE);
}

void switch_ring_close(SwitchRing* ring) {
  if (!ring) return;
  if (ring->synthetic) {
    delete[] ring->data;
    delete ring->page;
    delete ring;
    return;
  }
  close_fault_events(ring);
  munmap(ring->page, ring->map_size);
  close(ring->fd);
  delete ring;
}

bool switch_ring_half_full(const SwitchRing* ring) {
  if (!ring) return false;
  const uint64_t head = __atomic_load_n(&ring->page->data_head, __ATOMIC_ACQUIRE);
  return head - ring->page->data_tail > ring->data_size / 2;
}

void switch_ring_drain(SwitchRing* ring, uint32_t thread, std::vector<uint8_t>& out, uint64_t& lost,
                       bool at_end) {
  if (!ring) return;
  // Read before the ring: a switch-in until then is in it.
  uint64_t end_ns = 0;
  if (at_end) {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    end_ns = uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
  }
  uint64_t head = __atomic_load_n(&ring->page->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = ring->page->data_tail;
  // Reused by the writer between drains: no allocation once grown.
  static thread_local std::vector<uint64_t> preempted, blocked, faults;
  preempted.clear();
  blocked.clear();
  faults.clear();
  FaultsDrained& seen = ring->last;
  seen = FaultsDrained{};
  seen.throttled = ring->throttled;
  while (tail + sizeof(perf_event_header) <= head) {
    uint8_t rec[64];
    perf_event_header h;
    for (size_t i = 0; i < sizeof h; ++i)
      reinterpret_cast<uint8_t*>(&h)[i] = ring->data[(tail + i) % ring->data_size];
    if (h.size < sizeof h || tail + h.size > head) break;
    size_t n = h.size < sizeof rec ? h.size : sizeof rec;
    for (size_t i = 0; i < n; ++i) rec[i] = ring->data[(tail + i) % ring->data_size];
    tail += h.size;
    if (h.type == PERF_RECORD_LOST && n >= sizeof h + 16) {
      uint64_t dropped;
      std::memcpy(&dropped, rec + sizeof h + 8, 8);  // {u64 id, u64 lost}
      lost += dropped;
      // The switch-in matching a pending switch-out may be among them: an interval that
      // cannot be closed is dropped rather than guessed.
      ring->pending_out = 0;
      ring->fault_start = 0;
      continue;
    }
    if ((h.type == PERF_RECORD_THROTTLE || h.type == PERF_RECORD_UNTHROTTLE) &&
        n >= sizeof h + 16) {
      // {u64 time, u64 id, u64 stream_id}: only fault events sample, so only they throttle.
      ring->throttled = h.type == PERF_RECORD_THROTTLE;
      seen.throttled = true;
      // A fault started before the throttle may end unseen, and the next start replaces it.
      continue;
    }
    if (h.type == PERF_RECORD_SAMPLE && n >= sizeof h + 16) {
      uint64_t id, time;
      std::memcpy(&id, rec + sizeof h, 8);  // {u64 identifier, u64 time}
      std::memcpy(&time, rec + sizeof h + 8, 8);
      int event = kFaultEvents;
      for (int i = 0; i < kFaultEvents; ++i)
        if (ring->fault_fd[i] >= 0 && id == ring->fault_id[i]) event = i;
      if (event == kFaultEvents) continue;
      ++ring->fault_used[event];
      if (event == kFaultStart) {
        ++seen.starts;
        ring->fault_start = time;
        continue;
      }
      ++seen.ends;
      if (ring->fault_start == 0 || time < ring->fault_start) continue;
      uint64_t took = time - ring->fault_start;
      ring->fault_start = 0;
      ++seen.matched;
      seen.longest_ns = std::max(seen.longest_ns, took);
      ++ring->fault_histogram[fault_bucket(took)];
      ++ring->faults_seen;
      if (took > kSlowFaultNs) {  // judged below, against every fault of this drain too
        faults.push_back(time - took);
        faults.push_back(time);
      }
      continue;
    }
    if (h.type != PERF_RECORD_SWITCH || n < sizeof h + 8) continue;
    uint64_t time;
    std::memcpy(&time, rec + sizeof h, 8);  // sample_id_all: the sample's time comes first
    // A fault that sleeps or is preempted is off the CPU for part of it: that part is the
    // switch's interval; the fault is not also counted.
    if (ring->fault_start != 0) ++seen.interrupted;
    ring->fault_start = 0;
    if (h.misc & PERF_RECORD_MISC_SWITCH_OUT) {
      ring->pending_out = time;
      ring->pending_preempted = (h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) != 0;
    } else if (ring->pending_out) {
      auto& into = ring->pending_preempted ? preempted : blocked;
      into.push_back(ring->pending_out);
      into.push_back(time);
      ring->pending_out = 0;
    }
  }
  __atomic_store_n(&ring->page->data_tail, tail, __ATOMIC_RELEASE);
  if (at_end && ring->pending_out && end_ns > ring->pending_out) {
    auto& into = ring->pending_preempted ? preempted : blocked;
    into.push_back(ring->pending_out);
    into.push_back(end_ns);
    ring->pending_out = 0;
  }
  refresh_fault_budget(ring);
  seen.faults_seen = ring->faults_seen;
  if (seen.matched > 0) {
    const bool known = ring->faults_seen >= kTypicalAfter;
    const uint64_t typical = known ? fault_quantile(*ring, 0.5) : kDefaultTypicalNs;
    const uint64_t floor = std::max(
        {kSlowFaultNs, kSlowFaultFactor * typical, known ? 2 * fault_quantile(*ring, 0.99) : 0});
    seen.floor_ns = floor;
    size_t w = 0;
    for (size_t i = 0; i < faults.size(); i += 2)
      if (faults[i + 1] - faults[i] > floor) {
        faults[w++] = faults[i] + typical;
        faults[w++] = faults[i + 1];
      }
    faults.resize(w);
  }
  const std::pair<trace::RecordType, std::vector<uint64_t>*> kinds[] = {
      {trace::RecordType::Preemptions, &preempted},
      {trace::RecordType::Blocked, &blocked},
      {trace::RecordType::SlowFaults, &faults}};
  for (auto [type, pairs] : kinds) {
    if (pairs->empty()) continue;
    uint32_t header[2] = {thread, static_cast<uint32_t>(pairs->size() / 2)};
    trace::append_record(out, type, header, sizeof header, pairs->data(),
                         pairs->size() * sizeof(uint64_t));
  }
}

}  // namespace tasklens::recorder
