#include "recorder/host_steal.hpp"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace tasklens::recorder {
namespace {

struct Times {
  uint64_t steal = 0, total = 0;
  uint32_t cpus = 0;
  bool valid = false;
};

Times g_start;
cpu_set_t g_allowed;

// Sums the steal and all the times of the "cpuN" lines of /proc/stat whose CPU is allowed.
// (A buffer of its own, read whole: one line per CPU, about 100 bytes each.)
Times read_times() {
  Times t;
  const int fd = ::open("/proc/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return t;
  size_t size = 1 << 16, used = 0;
  char* text = static_cast<char*>(std::malloc(size + 1));
  while (text) {
    const ssize_t n = ::read(fd, text + used, size - used);
    if (n <= 0) break;
    used += static_cast<size_t>(n);
    if (used == size) {
      char* bigger = static_cast<char*>(std::realloc(text, 2 * size + 1));
      if (!bigger) break;
      text = bigger;
      size *= 2;
    }
  }
  ::close(fd);
  if (!text) return t;
  text[used] = '\0';
  for (char *line = text, *next; line && *line; line = next) {
    next = std::strchr(line, '\n');
    if (next) ++next;
    if (std::strncmp(line, "cpu", 3) != 0 || line[3] < '0' || line[3] > '9') continue;
    char* p = line + 3;
    const unsigned long cpu = std::strtoul(p, &p, 10);
    if (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &g_allowed)) continue;
    // user nice system idle iowait irq softirq steal (guest times are inside user and nice)
    uint64_t fields[8] = {};
    for (int i = 0; i < 8; ++i) fields[i] = std::strtoull(p, &p, 10);
    for (int i = 0; i < 8; ++i) t.total += fields[i];
    t.steal += fields[7];
    ++t.cpus;
  }
  std::free(text);
  t.valid = t.cpus > 0;
  return t;
}

}  // namespace

void host_steal_start() {
  if (sched_getaffinity(0, sizeof g_allowed, &g_allowed) != 0) {
    CPU_ZERO(&g_allowed);
    for (int c = 0; c < CPU_SETSIZE; ++c) CPU_SET(c, &g_allowed);
  }
  g_start = read_times();
}

bool host_steal_end(trace::HostSteal& out) {
  if (!g_start.valid) return false;
  const Times end = read_times();
  if (!end.valid || end.total < g_start.total || end.steal < g_start.steal) return false;
  out = trace::HostSteal{};
  out.cpus = end.cpus;
  out.ticks_per_second = static_cast<uint32_t>(sysconf(_SC_CLK_TCK));
  out.steal_ticks = end.steal - g_start.steal;
  out.total_ticks = end.total - g_start.total;
  return true;
}

}  // namespace tasklens::recorder
