#include "recorder/switches.hpp"

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

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
}  // namespace

struct SwitchRing {
  int fd = -1;
  perf_event_mmap_page* page = nullptr;
  uint8_t* data = nullptr;
  size_t data_size = 0;
  size_t map_size = 0;
  uint64_t pending_out = 0;  // a switch-out waiting for its switch-in
  bool pending_preempted = false;
};

SwitchRing* switch_ring_open() {
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
  return ring;
}

void switch_ring_close(SwitchRing* ring) {
  if (!ring) return;
  munmap(ring->page, ring->map_size);
  close(ring->fd);
  delete ring;
}

bool switch_ring_half_full(const SwitchRing* ring) {
  if (!ring) return false;
  const uint64_t head = __atomic_load_n(&ring->page->data_head, __ATOMIC_ACQUIRE);
  return head - ring->page->data_tail > ring->data_size / 2;
}

void switch_ring_drain(SwitchRing* ring, uint32_t thread, std::vector<uint8_t>& out,
                       uint64_t& lost) {
  if (!ring) return;
  uint64_t head = __atomic_load_n(&ring->page->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = ring->page->data_tail;
  // Reused by the writer between drains: no allocation once grown.
  static thread_local std::vector<uint64_t> preempted, blocked;
  preempted.clear();
  blocked.clear();
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
      continue;
    }
    if (h.type != PERF_RECORD_SWITCH || n < sizeof h + 8) continue;
    uint64_t time;
    std::memcpy(&time, rec + sizeof h, 8);  // sample_id_all: the sample's time comes first
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
  const std::pair<trace::RecordType, std::vector<uint64_t>*> kinds[] = {
      {trace::RecordType::Preemptions, &preempted}, {trace::RecordType::Blocked, &blocked}};
  for (auto [type, pairs] : kinds) {
    if (pairs->empty()) continue;
    uint32_t header[2] = {thread, static_cast<uint32_t>(pairs->size() / 2)};
    trace::append_record(out, type, header, sizeof header, pairs->data(),
                         pairs->size() * sizeof(uint64_t));
  }
}

}  // namespace tasklens::recorder
