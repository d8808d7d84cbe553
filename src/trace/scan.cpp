// TraceFile::scan: what the launcher says of a recording as it ends (its size, threads, tasks,
// the run's clock), from the record headers alone. Kept apart from the reader's parse, which
// reads every record.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "trace/reader.hpp"

namespace tasklens::trace {

TraceFile::Scan TraceFile::scan(const std::string& path) {
  // Reads the record headers only (a few bytes per 256 KiB block), with pread: the launcher runs
  // this on every recording, whose wall time users see.
  Scan r;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return r;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return r;
  }
  r.file_bytes = static_cast<uint64_t>(st.st_size);
  const auto read_at = [fd](void* out, size_t bytes, uint64_t at) {
    return ::pread(fd, out, bytes, static_cast<off_t>(at)) == static_cast<ssize_t>(bytes);
  };
  FileHeader h{};
  if (r.file_bytes < kFileHeaderV2Size || !read_at(&h, kFileHeaderV2Size, 0) ||
      std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.header_size > r.file_bytes) {
    ::close(fd);
    return r;
  }
  uint64_t pos = h.header_size;
  r.primary = static_cast<Metric>(h.metric);
  r.start_tsc = h.start_tsc;
  std::vector<bool> seen;
  while (r.file_bytes - pos >= sizeof(RecordHeader)) {
    // A record header and what follows it (an event block's header, or a Finish record).
    uint8_t head[sizeof(RecordHeader) +
                 std::max({sizeof(EventBlockHeader), sizeof(Finish), sizeof(RecorderStats),
                           sizeof(HostSteal), sizeof(ClockSync)})];
    const size_t want = static_cast<size_t>(std::min<uint64_t>(sizeof head, r.file_bytes - pos));
    if (!read_at(head, want, pos)) break;
    RecordHeader rh;
    std::memcpy(&rh, head, sizeof rh);
    if (rh.size < sizeof(RecordHeader) || rh.size > r.file_bytes - pos) break;
    const size_t payload = rh.size - sizeof(RecordHeader);
    if (rh.type == static_cast<uint32_t>(RecordType::EventBlock) &&
        payload >= sizeof(EventBlockHeader)) {
      EventBlockHeader bh;
      std::memcpy(&bh, head + sizeof rh, sizeof bh);
      if (bh.thread <= 100000) {
        if (seen.size() <= bh.thread) seen.resize(bh.thread + 1);
        if (!seen[bh.thread]) ++r.streams;
        seen[bh.thread] = true;
        r.event_bytes += bh.raw_size;
      }
    } else if (rh.type == static_cast<uint32_t>(RecordType::Finish) && payload >= sizeof(Finish)) {
      Finish f;
      std::memcpy(&f, head + sizeof rh, sizeof f);
      r.has_finish = true;
      r.tasks_created = f.tasks_created;
      r.events_lost = f.events_lost;
      r.finish_reason = f.reason;
      r.end_tsc = f.end_tsc;
    } else if (rh.type == static_cast<uint32_t>(RecordType::ClockSync) &&
               payload >= sizeof(ClockSync)) {
      ClockSync c;
      std::memcpy(&c, head + sizeof rh, sizeof c);
      if (r.first_sync.tsc == 0) r.first_sync = c;
      r.last_sync = c;
    } else if (rh.type == static_cast<uint32_t>(RecordType::RuntimeInfo) && payload >= 4) {
      // u32 flags, then the version string: oneTBB's starts with "oneTBB".
      const size_t text = std::min(payload, want - sizeof rh) - 4;
      const char* version = reinterpret_cast<const char*>(head + sizeof rh + 4);
      if (text < 6 || std::memcmp(version, "oneTBB", 6) != 0)
        r.openmp = true;
      else
        r.tbb = true;
    } else if (rh.type == static_cast<uint32_t>(RecordType::ModuleMap) && payload <= (1u << 20)) {
      // A program built by gcc loads libgomp beside the preloaded runtime (it calls its GOMP_*
      // entry points, which the runtime also has).
      std::string map(payload, '\0');
      if (read_at(map.data(), payload, pos + sizeof rh))
        r.libgomp = map.find("/libgomp.so") != std::string::npos;
    } else if (rh.type == static_cast<uint32_t>(RecordType::RecorderStats) &&
               payload >= sizeof(RecorderStats)) {
      std::memcpy(&r.stats, head + sizeof rh, sizeof r.stats);
      r.has_stats = true;
    } else if (rh.type == static_cast<uint32_t>(RecordType::HostSteal) &&
               payload >= sizeof(HostSteal)) {
      HostSteal steal;
      std::memcpy(&steal, head + sizeof rh, sizeof steal);
      r.host_steal_percent = host_steal_percent(steal);
    }
    pos += rh.size;
  }
  r.whole_bytes = pos;
  ::close(fd);
  return r;
}

double TraceFile::Scan::run_seconds() const {
  const ClockSync &a = first_sync, &b = last_sync;
  if (a.tsc == 0 || b.tsc <= a.tsc || b.monotonic_ns <= a.monotonic_ns || start_tsc == 0 ||
      end_tsc <= start_tsc)
    return 0;
  const double hz = double(b.tsc - a.tsc) * 1e9 / double(b.monotonic_ns - a.monotonic_ns);
  return double(end_tsc - start_tsc) / hz;
}

}  // namespace tasklens::trace
