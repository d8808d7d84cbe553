#include "recorder/metric.hpp"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tasklens::recorder {
namespace {

bool fill_attr(trace::Metric metric, perf_event_attr& attr) {
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  using trace::Metric;
  auto hw = [&](uint64_t config) {
    attr.type = PERF_TYPE_HARDWARE;
    attr.config = config;
    return true;
  };
  auto sw = [&](uint64_t config) {
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = config;
    // Software events happen in the kernel on the thread's behalf (a page fault, a context
    // switch, the CPU time's accounting): "kernel" exclusion would drop most of them.
    attr.exclude_kernel = 0;
    return true;
  };
  switch (metric) {
    case Metric::Cycles:
      return hw(PERF_COUNT_HW_CPU_CYCLES);
    case Metric::Instructions:
      return hw(PERF_COUNT_HW_INSTRUCTIONS);
    case Metric::CacheReferences:
      return hw(PERF_COUNT_HW_CACHE_REFERENCES);
    case Metric::CacheMisses:
      return hw(PERF_COUNT_HW_CACHE_MISSES);
    case Metric::Branches:
      return hw(PERF_COUNT_HW_BRANCH_INSTRUCTIONS);
    case Metric::BranchMisses:
      return hw(PERF_COUNT_HW_BRANCH_MISSES);
    case Metric::RefCycles:
      return hw(PERF_COUNT_HW_REF_CPU_CYCLES);
    case Metric::StalledCyclesFrontend:
      return hw(PERF_COUNT_HW_STALLED_CYCLES_FRONTEND);
    case Metric::StalledCyclesBackend:
      return hw(PERF_COUNT_HW_STALLED_CYCLES_BACKEND);
    case Metric::TaskClock:
      return sw(PERF_COUNT_SW_TASK_CLOCK);
    case Metric::PageFaults:
      return sw(PERF_COUNT_SW_PAGE_FAULTS);
    case Metric::MinorFaults:
      return sw(PERF_COUNT_SW_PAGE_FAULTS_MIN);
    case Metric::MajorFaults:
      return sw(PERF_COUNT_SW_PAGE_FAULTS_MAJ);
    case Metric::ContextSwitches:
      return sw(PERF_COUNT_SW_CONTEXT_SWITCHES);
    case Metric::CpuMigrations:
      return sw(PERF_COUNT_SW_CPU_MIGRATIONS);
    case Metric::Tsc:
      return false;
  }
  return false;
}

// Opens `metric` for the calling thread, in the group of `group_fd` (-1: alone or as a group's
// leader, whose reads then return every member's value when `read_format` says so).
int open_counter(trace::Metric metric, int group_fd, uint64_t read_format) {
  perf_event_attr attr;
  if (!fill_attr(metric, attr)) return -EINVAL;
  attr.read_format = read_format;
  long fd = syscall(SYS_perf_event_open, &attr, 0 /*this thread*/, -1 /*any cpu*/, group_fd, 0);
  if (fd < 0) return -errno;
  return static_cast<int>(fd);
}

size_t page_size() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

}  // namespace

bool PerfCounters::open(const trace::Metric* metrics, int count) {
  close();
  if (count <= 0 || count > trace::kMaxMetrics) return false;
  // A group when there are several: they then count over exactly the same intervals, and
  // without rdpmc one read(2) of the leader returns them all.
  grouped_ = count > 1;
  for (int i = 0; i < count; ++i) {
    int fd = open_counter(metrics[i], grouped_ && i > 0 ? fds_[0] : -1,
                          grouped_ && i == 0 ? PERF_FORMAT_GROUP : 0);
    if (fd < 0 && grouped_) {
      // This kernel refuses the group (a software leader with hardware members on an old
      // kernel, say): separate counters, read one by one.
      close();
      grouped_ = false;
      for (int j = 0; j < count; ++j) {
        fds_[j] = open_counter(metrics[j], -1, 0);
        if (fds_[j] < 0) {
          close();
          return false;
        }
        count_ = j + 1;
      }
      break;
    }
    if (fd < 0) {
      close();
      return false;
    }
    fds_[i] = fd;
    count_ = i + 1;
  }
  // User-space reads through the mmap pages avoid a syscall per event when every counter
  // allows them (hardware counters only).
  rdpmc_ = true;
  for (int i = 0; i < count_ && rdpmc_; ++i) {
    if (trace::is_software(metrics[i])) {
      rdpmc_ = false;
      break;
    }
    void* p = mmap(nullptr, page_size(), PROT_READ, MAP_SHARED, fds_[i], 0);
    if (p == MAP_FAILED) {
      rdpmc_ = false;
      break;
    }
    pages_[i] = static_cast<perf_event_mmap_page*>(p);
    if (!pages_[i]->cap_user_rdpmc || pages_[i]->index == 0) rdpmc_ = false;
  }
  if (!rdpmc_)
    for (int i = 0; i < count_; ++i)
      if (pages_[i]) {
        munmap(pages_[i], page_size());
        pages_[i] = nullptr;
      }
  return true;
}

void PerfCounters::close() {
  for (int i = 0; i < trace::kMaxMetrics; ++i) {
    if (pages_[i]) munmap(pages_[i], page_size());
    pages_[i] = nullptr;
  }
  // Members first: closing the leader first would leave them as singleton groups.
  for (int i = trace::kMaxMetrics - 1; i >= 0; --i) {
    if (fds_[i] >= 0) ::close(fds_[i]);
    fds_[i] = -1;
  }
  count_ = 0;
  rdpmc_ = grouped_ = false;
}

uint64_t PerfCounters::read_rdpmc(int i) {
  // The seqlock protocol of perf_event_open(2), "mmap layout".
  perf_event_mmap_page* page = pages_[i];
  uint32_t seq, idx;
  uint64_t count;
  do {
    seq = page->lock;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    idx = page->index;
    count = static_cast<uint64_t>(page->offset);
    if (page->cap_user_rdpmc && idx) {
      uint64_t pmc = __rdpmc(static_cast<int>(idx - 1));
      unsigned width = page->pmc_width;
      pmc <<= 64 - width;
      pmc = static_cast<uint64_t>(static_cast<int64_t>(pmc) >> (64 - width));
      count += pmc;
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
  } while (page->lock != seq);
  return count;
}

void PerfCounters::read(uint64_t* values) {
  if (count_ == 0) return;
  if (rdpmc_) {
    for (int i = 0; i < count_; ++i) values[i] = read_rdpmc(i);
    return;
  }
  if (grouped_) {
    uint64_t buf[1 + trace::kMaxMetrics];  // PERF_FORMAT_GROUP: nr, then nr values
    ssize_t want = static_cast<ssize_t>(sizeof(uint64_t) * (1 + size_t(count_)));
    if (::read(fds_[0], buf, sizeof buf) >= want && buf[0] == uint64_t(count_)) {
      for (int i = 0; i < count_; ++i) values[i] = buf[1 + i];
      return;
    }
    for (int i = 0; i < count_; ++i) values[i] = 0;  // the caller keeps the last good values
    return;
  }
  for (int i = 0; i < count_; ++i) {
    uint64_t v = 0;
    values[i] = ::read(fds_[i], &v, sizeof v) == sizeof v ? v : 0;
  }
}

int probe_metric(trace::Metric metric) {
  if (metric == trace::Metric::Tsc) return 0;
  int fd = open_counter(metric, -1, 0);
  if (fd < 0) return -fd;
  uint64_t v = 0;
  int err = ::read(fd, &v, sizeof v) == sizeof v ? 0 : (errno ? errno : EIO);
  ::close(fd);
  return err;
}

int probe_metric_group(const trace::Metric* metrics, int count) {
  if (count <= 1) return 0;
  if (count > trace::kMaxMetrics) return E2BIG;
  const uint64_t format =
      PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  int fds[trace::kMaxMetrics];
  int opened = 0, err = 0;
  for (; opened < count; ++opened) {
    int fd = open_counter(metrics[opened], opened ? fds[0] : -1, opened ? 0 : format);
    if (fd < 0) {
      err = -fd;
      break;
    }
    fds[opened] = fd;
  }
  if (err == 0) {
    // Run a little (0.2 ms of CPU) so that a group the PMU can schedule has run.
    timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    do clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 200000);
    uint64_t buf[3 + trace::kMaxMetrics];  // nr, time_enabled, time_running, values
    ssize_t got = ::read(fds[0], buf, sizeof buf);
    if (got < static_cast<ssize_t>(sizeof(uint64_t) * (3 + size_t(count))))
      err = got < 0 ? errno : EIO;
    else if (buf[2] == 0)
      err = EBUSY;  // enabled but never running: more counters than the PMU has
  }
  while (opened > 0) ::close(fds[--opened]);
  return err;
}

}  // namespace tasklens::recorder
