#include "recorder/metric.hpp"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
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
  switch (metric) {
    case trace::Metric::Cycles:
      attr.type = PERF_TYPE_HARDWARE;
      attr.config = PERF_COUNT_HW_CPU_CYCLES;
      return true;
    case trace::Metric::Instructions:
      attr.type = PERF_TYPE_HARDWARE;
      attr.config = PERF_COUNT_HW_INSTRUCTIONS;
      return true;
    case trace::Metric::TaskClock:
      attr.type = PERF_TYPE_SOFTWARE;
      attr.config = PERF_COUNT_SW_TASK_CLOCK;
      attr.exclude_kernel = 0;  // a software counter: "kernel" exclusion would zero it
      return true;
    case trace::Metric::Tsc:
      return false;
  }
  return false;
}

int open_counter(trace::Metric metric) {
  perf_event_attr attr;
  if (!fill_attr(metric, attr)) return -EINVAL;
  long fd = syscall(SYS_perf_event_open, &attr, 0 /*this thread*/, -1 /*any cpu*/, -1, 0);
  if (fd < 0) return -errno;
  return static_cast<int>(fd);
}

}  // namespace

bool PerfCounter::open(trace::Metric metric) {
  int fd = open_counter(metric);
  if (fd < 0) return false;
  fd_ = fd;
  if (metric != trace::Metric::TaskClock) {
    // User-space reads through the mmap page avoid a syscall per strand when allowed.
    void* p =
        mmap(nullptr, static_cast<size_t>(sysconf(_SC_PAGESIZE)), PROT_READ, MAP_SHARED, fd_, 0);
    if (p != MAP_FAILED) {
      page_ = static_cast<perf_event_mmap_page*>(p);
      if (!page_->cap_user_rdpmc || page_->index == 0) {
        munmap(p, static_cast<size_t>(sysconf(_SC_PAGESIZE)));
        page_ = nullptr;
      }
    }
  }
  return true;
}

uint64_t PerfCounter::read_rdpmc() {
  // The seqlock protocol of perf_event_open(2), "mmap layout".
  uint32_t seq, idx;
  uint64_t count;
  do {
    seq = page_->lock;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    idx = page_->index;
    count = static_cast<uint64_t>(page_->offset);
    if (page_->cap_user_rdpmc && idx) {
      uint64_t pmc = __rdpmc(static_cast<int>(idx - 1));
      unsigned width = page_->pmc_width;
      pmc <<= 64 - width;
      pmc = static_cast<uint64_t>(static_cast<int64_t>(pmc) >> (64 - width));
      count += pmc;
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
  } while (page_->lock != seq);
  return count;
}

uint64_t PerfCounter::read() {
  if (fd_ < 0) return 0;
  if (page_) return read_rdpmc();
  uint64_t value = 0;
  if (::read(fd_, &value, sizeof value) != sizeof value) return 0;
  return value;
}

int probe_metric(trace::Metric metric) {
  if (metric == trace::Metric::Tsc) return 0;
  int fd = open_counter(metric);
  if (fd < 0) return -fd;
  uint64_t v = 0;
  int err = ::read(fd, &v, sizeof v) == sizeof v ? 0 : (errno ? errno : EIO);
  close(fd);
  return err;
}

}  // namespace tasklens::recorder
