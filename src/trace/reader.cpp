#include "trace/reader.hpp"

#include <fcntl.h>
#include <lz4.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "trace/off_cpu_pack.hpp"

namespace tasklens::trace {

namespace {

// The OffCpuKind of a Preemptions, Blocked or SlowFaults record.
int off_cpu_kind(RecordType type) {
  return type == RecordType::Blocked      ? int(OffCpuKind::Blocked)
         : type == RecordType::SlowFaults ? int(OffCpuKind::SlowFault)
                                          : int(OffCpuKind::Preempted);
}

// Can `data_size` bytes of a block in `compression` hold `raw_size` bytes of events? LZ4 expands
// at most 255 times (a match length byte), and zstd frames carry their content size.
bool plausible_raw_size(uint8_t compression, size_t data_size, const uint8_t* data,
                        uint32_t raw_size) {
  switch (static_cast<Compression>(compression)) {
    case Compression::None:
      return raw_size == data_size;
    case Compression::Lz4:
      return raw_size <= data_size * 255 + 64;
    case Compression::Zstd: {
      const unsigned long long content = ZSTD_getFrameContentSize(data, data_size);
      if (content == ZSTD_CONTENTSIZE_ERROR) return false;
      if (content == ZSTD_CONTENTSIZE_UNKNOWN) return raw_size <= data_size * 65536ull + 64;
      return content == raw_size;
    }
  }
  return false;
}

}  // namespace

void TraceFile::fail(const std::string& what) const { throw TraceError(path_ + ": " + what); }

namespace {

// What a path that is not a regular file is, for the message refusing it.
const char* not_regular(mode_t mode) {
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

// Reads up to `size` bytes; fewer only at the end of the file.
ssize_t read_full(int fd, uint8_t* out, size_t size) {
  size_t have = 0;
  while (have < size) {
    const ssize_t got = ::read(fd, out + have, size - have);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return -1;
    if (got == 0) break;
    have += static_cast<size_t>(got);
  }
  return static_cast<ssize_t>(have);
}

// How many bytes past a file's size at open (all of a pipe's) the reader takes in: a quarter of
// the memory free now, and of the address space the process may have (the buffer doubles as it
// grows, and the old one is copied into the new one). A pipe that sends a
// valid header and then never ends (`report <(cat run.tlens /dev/zero)`) grew until the kernel
// killed a process; the reader stops first, with a message, and leaves the memory to the rest.
size_t unknown_size_budget() {
  const long pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  uint64_t budget = pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) / 4 : 1ull << 32;
  struct rlimit as {};
  if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY)
    budget = std::min<uint64_t>(budget, as.rlim_cur / 4);
  return static_cast<size_t>(budget);
}

}  // namespace

TraceFile::FileHandle::~FileHandle() {
  if (fd >= 0) ::close(fd);
}

namespace {

// Reads `size` bytes at `offset` (pread until done): false if the file ended first or failed.
bool read_at(int fd, uint8_t* out, size_t size, uint64_t offset) {
  while (size > 0) {
    const ssize_t got = ::pread(fd, out, size, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    out += got;
    size -= static_cast<size_t>(got);
    offset += static_cast<uint64_t>(got);
  }
  return true;
}

// What parse() reads the records from: the file held whole, or windows of a few MB read from
// the file as the parse goes (its event blocks left there).
class Records {
 public:
  Records(const std::vector<uint8_t>& whole, int fd, uint64_t size)
      : whole_(whole), fd_(fd), size_(size) {}
  uint64_t size() const { return size_; }
  // Bytes [pos, pos + n) (within size()), valid until the next call; null if they could not be
  // read (the file was cut or changed since its size was taken).
  const uint8_t* at(uint64_t pos, size_t n) {
    if (fd_ < 0) return whole_.data() + pos;
    static const uint8_t kNothing = 0;
    if (n == 0) return &kNothing;
    if (pos < window_pos_ || pos + n > window_pos_ + window_.size()) {
      constexpr size_t kWindow = size_t{8} << 20;
      window_pos_ = pos;
      window_.resize(static_cast<size_t>(std::min<uint64_t>(std::max(n, kWindow), size_ - pos)));
      if (!read_at(fd_, window_.data(), window_.size(), pos)) {
        window_.clear();
        return nullptr;
      }
    }
    return window_.data() + (pos - window_pos_);
  }

 private:
  const std::vector<uint8_t>& whole_;
  int fd_;
  uint64_t size_;
  std::vector<uint8_t> window_;
  uint64_t window_pos_ = 0;
};

}  // namespace

TraceFile TraceFile::open(const std::string& path, bool events_in_memory) {
  TraceFile t;
  t.path_ = path;
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it waited forever).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    t.fail(std::string("cannot open trace (") + std::strerror(errno) +
           "); record one with `tasklens record -- ./program`");
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    t.fail(std::string("cannot stat trace (") + std::strerror(errno) + ")");
  if (S_ISDIR(st.st_mode))
    t.fail("is a directory, not a trace; give a trace file (the default is tasklens.data)");
  // A device has no end to read to (/dev/zero would grow the reader's memory until the kernel
  // killed it), and a trace is parsed as a whole anyway. A pipe still reads (`report <(zstdcat
  // run.tlens.zst)`, tests/unit/trace_test.cpp): its header is checked from its first bytes, as a
  // file's, so what is not a trace stops there.
  const bool pipe = S_ISFIFO(st.st_mode);
  if (!S_ISREG(st.st_mode) && !pipe)
    t.fail(std::string("is ") + not_regular(st.st_mode) +
           ", not a trace file; tasklens reads traces from regular files: copy it to one first "
           "(cat " +
           path + " > run.tlens)");
  if (pipe)
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // a slow writer is waited for
  // The header first, and nothing more when it is not a trace's: a large file given by mistake
  // is refused at once, not after reading it whole.
  uint8_t head[kFileHeaderV2Size];
  const ssize_t head_size = read_full(fd, head, sizeof head);
  if (head_size < 0) t.fail(std::string("cannot read trace (") + std::strerror(errno) + ")");
  if (pipe && head_size == 0)  // a FIFO without a writer: at its end at once
    t.fail(
        "is a FIFO (a pipe) that nothing writes to: no trace to read; give the trace file itself, "
        "or copy it to a regular file first");
  t.check_identity(head, static_cast<size_t>(head_size));
  if (!events_in_memory && !pipe) {
    // The event blocks stay in the file: the parse reads it in windows, the decoders block by
    // block.
    const int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (own < 0) t.fail(std::string("cannot read trace (") + std::strerror(errno) + ")");
    t.file_ = std::make_shared<FileHandle>();
    t.file_->fd = own;
    t.file_size_ = static_cast<uint64_t>(st.st_size);
    t.parse();
    return t;
  }
  // Then the whole file at once (it is parsed as a whole anyway; stream iterators were several
  // times slower). A file that grew meanwhile is read to its end.
  t.data_.resize(std::max<size_t>(static_cast<size_t>(st.st_size), sizeof head));
  std::memcpy(t.data_.data(), head, sizeof head);
  size_t have = sizeof head;
  uint8_t more[1 << 16];  // past the known size
  const size_t limit = t.data_.size() + unknown_size_budget();
  for (;;) {
    const bool inside = have < t.data_.size();
    const ssize_t got = inside ? ::read(fd, t.data_.data() + have, t.data_.size() - have)
                               : ::read(fd, more, sizeof more);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) t.fail(std::string("cannot read trace (") + std::strerror(errno) + ")");
    if (got == 0) break;
    if (!inside) {
      if (have + static_cast<size_t>(got) > limit)
        t.fail(std::string(pipe ? "the pipe" : "the file") + " sent " +
               std::to_string((have + got) >> 20) +
               " MiB and does not end: more than a quarter of the memory free to tasklens; give a "
               "finished trace (a regular file), or free memory");
      t.data_.insert(t.data_.end(), more, more + got);
    }
    have += static_cast<size_t>(got);
  }
  t.data_.resize(have);
  t.file_size_ = have;
  t.parse();
  return t;
}

void TraceFile::check_identity(const uint8_t* data, size_t size) const {
  if (size < kFileHeaderV2Size) {
    if (size == 0) fail("the file is empty: not a tasklens trace");
    fail("the file is too short to be a tasklens trace (" + std::to_string(size) + " bytes)");
  }
  FileHeader h{};
  std::memcpy(&h, data, kFileHeaderV2Size);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) fail("not a tasklens trace (bad magic)");
  if (h.version_major < 1 || h.version_major > kVersionMajor)
    fail("trace format version " + std::to_string(h.version_major) +
         " is not supported by this tasklens (reads version " + std::to_string(kVersionMajor) +
         ")");
}

void TraceFile::parse() {
  Records file(data_, file_ ? file_->fd : -1, file_size_);
  auto changed = [&] {
    fail("the file changed while it was read (it is shorter than it was): give a finished trace");
  };
  const size_t first = static_cast<size_t>(std::min<uint64_t>(file.size(), sizeof(FileHeader)));
  const uint8_t* head = file.at(0, first);
  if (!head) changed();
  check_identity(head, first);
  std::memcpy(&header_, head, kFileHeaderV2Size);
  const uint32_t known_size =
      header_.version_major >= 3 ? uint32_t{sizeof(FileHeader)} : kFileHeaderV2Size;
  if (header_.header_size < known_size || header_.header_size > file.size())
    fail("corrupted file header");
  if (header_.version_major >= 3) {
    std::memcpy(&header_, head, sizeof header_);
    if (header_.metric_count < 1 || header_.metric_count > kMaxMetrics)
      fail("corrupted file header (" + std::to_string(header_.metric_count) + " metrics)");
    metrics_.clear();
    for (int i = 0; i < header_.metric_count; ++i) {
      if (header_.metrics[i] >= kMetricCount)
        fail("unknown metric " + std::to_string(header_.metrics[i]) + " in the file header");
      for (Metric m : metrics_)
        if (static_cast<uint8_t>(m) == header_.metrics[i])
          fail(std::string("metric ") + to_string(m) + " listed twice in the file header");
      metrics_.push_back(static_cast<Metric>(header_.metrics[i]));
    }
    if (header_.metric != header_.metrics[0])
      fail("corrupted file header (the primary metric is not the first of its metrics)");
  } else {
    if (header_.metric > static_cast<uint8_t>(Metric::TaskClock)) fail("unknown metric in header");
    header_.metric_count = 1;
    header_.metrics[0] = header_.metric;
    metrics_.assign(1, static_cast<Metric>(header_.metric));
  }

  size_t pos = header_.header_size;
  bool saw_schema = false;
  bool truncated = false;
  while (pos < file.size()) {
    if (file.size() - pos < sizeof(RecordHeader)) {
      truncated = true;
      break;
    }
    RecordHeader rh;
    const uint8_t* at = file.at(pos, sizeof rh);
    if (!at) changed();
    std::memcpy(&rh, at, sizeof rh);
    if (rh.size < sizeof(RecordHeader)) fail("corrupted record at byte " + std::to_string(pos));
    if (rh.size > file.size() - pos) {  // the last record was cut: a killed or interrupted write
      truncated = true;
      break;
    }
    size_t n = rh.size - sizeof(RecordHeader);
    const uint8_t* p = file.at(pos + sizeof(RecordHeader), n);
    if (!p) changed();
    auto need = [&](size_t bytes) {
      if (n < bytes) fail("corrupted record at byte " + std::to_string(pos) + " (too short)");
    };
    const auto type = static_cast<RecordType>(rh.type);
    switch (type) {
      case RecordType::EventSchema: {
        need(4);
        uint32_t count;
        std::memcpy(&count, p, 4);
        const size_t entry = header_.version_major >= 2 ? 6 : 5;
        need(4 + size_t(count) * entry);
        schema_.assign(256, EventShape{kAbsent, 0, 0, 0, 0});
        for (uint32_t i = 0; i < count; ++i) {
          const uint8_t* e = p + 4 + i * entry;
          if (e[1] > 32 || (e[2] && e[1] == 0)) fail("corrupted event schema");
          schema_[e[0]] = EventShape{e[1], e[2], e[3], e[4], entry >= 6 ? e[5] : uint8_t{0}};
        }
        saw_schema = true;
        break;
      }
      case RecordType::RuntimeInfo:
        need(4);
        std::memcpy(&runtime_flags_, p, 4);
        runtime_version_.assign(reinterpret_cast<const char*>(p + 4), n - 4);
        break;
      case RecordType::ThreadInfo: {
        need(sizeof(ThreadInfo));
        ThreadInfo ti;
        std::memcpy(&ti, p, sizeof ti);
        threads_.push_back(ti);
        break;
      }
      case RecordType::EventBlock: {
        need(sizeof(EventBlockHeader));
        EventBlockHeader bh;
        std::memcpy(&bh, p, sizeof bh);
        if (bh.thread > 100000) fail("corrupted event block (thread index)");
        if (bh.compression > static_cast<uint8_t>(Compression::Lz4))
          fail("event block with unknown compression " + std::to_string(bh.compression) +
               " (written by a newer tasklens?)");
        // A damaged size would be allocated (and zeroed) before decompression could refuse it.
        const size_t data_size = n - sizeof bh;
        if (!plausible_raw_size(bh.compression, data_size, p + sizeof bh, bh.raw_size))
          fail("corrupted event block (its size does not match its data)");
        if (blocks_.size() <= bh.thread) blocks_.resize(bh.thread + 1);
        blocks_[bh.thread].push_back(Block{bh.chunk_seq, bh.offset, bh.raw_size, bh.compression,
                                           pos + sizeof(RecordHeader) + sizeof bh, n - sizeof bh});
        break;
      }
      case RecordType::ClockSync: {
        need(sizeof(ClockSync));
        ClockSync cs;
        std::memcpy(&cs, p, sizeof cs);
        clock_syncs_.push_back(cs);
        break;
      }
      case RecordType::ModuleMap: {
        need(4);
        uint32_t count;
        std::memcpy(&count, p, 4);
        std::vector<ModuleInfo> mods;
        size_t off = 4;
        for (uint32_t i = 0; i < count; ++i) {
          need(off + sizeof(ModuleEntry));
          ModuleEntry me;
          std::memcpy(&me, p + off, sizeof me);
          off += sizeof me;
          need(off + me.path_size);
          mods.push_back(
              ModuleInfo{std::string(reinterpret_cast<const char*>(p + off), me.path_size), me.base,
                         me.begin, me.end});
          off += me.path_size;
        }
        modules_ = std::move(mods);  // the last map wins: it saw every dlopen
        break;
      }
      case RecordType::Finish:
        need(sizeof(Finish));
        std::memcpy(&finish_, p, sizeof finish_);
        has_finish_ = true;
        break;
      case RecordType::OffCpuPacked: {
        need(sizeof(OffCpuPackedHeader));
        OffCpuPackedHeader h;
        std::memcpy(&h, p, sizeof h);
        if (h.thread > 100000 || !plausible_off_cpu_header(h, n - sizeof h))
          fail("corrupted off-CPU record at byte " + std::to_string(pos) +
               " (its header's sizes are impossible)");
        const int kind = off_cpu_kind(static_cast<RecordType>(h.type));
        auto& records = off_cpu_records_[kind];
        if (records.size() <= h.thread) {
          records.resize(h.thread + 1);
          off_cpu_last_.resize(std::max(off_cpu_last_.size(), size_t(h.thread) + 1));
        }
        if (h.count == 0) break;
        records[h.thread].push_back(OffCpuRecord{pos + sizeof(RecordHeader) + sizeof h, h.count,
                                                 static_cast<uint32_t>(n - sizeof h), h.raw_size,
                                                 h.in_order, h.first_begin, h.last_begin});
        // In time order as the header says (the cursor checks it as it reads), else held whole.
        uint64_t& last = off_cpu_last_[h.thread][kind];
        if (!h.in_order || h.first_begin < last) off_cpu_is_held_[kind] = true;
        last = h.last_begin;
        break;
      }
      case RecordType::Preemptions:
      case RecordType::Blocked:
      case RecordType::SlowFaults: {
        need(8);
        uint32_t hdr[2];
        std::memcpy(hdr, p, 8);
        if (hdr[0] > 100000) fail("corrupted preemption record (thread index)");
        need(8 + size_t(hdr[1]) * 16);
        const int kind = off_cpu_kind(type);
        auto& records = off_cpu_records_[kind];
        if (records.size() <= hdr[0]) {
          records.resize(hdr[0] + 1);
          off_cpu_last_.resize(std::max(off_cpu_last_.size(), size_t(hdr[0]) + 1));
        }
        if (hdr[1] == 0) break;
        records[hdr[0]].push_back(OffCpuRecord{pos + sizeof(RecordHeader) + 8, hdr[1]});
        // In time order (what a cursor needs) unless the trace is damaged: then this kind is
        // held whole, sorted (below).
        uint64_t& last = off_cpu_last_[hdr[0]][kind];
        for (uint32_t i = 0; i < hdr[1]; ++i) {
          uint64_t iv[2];
          std::memcpy(iv, p + 8 + size_t(i) * 16, 16);
          if (iv[1] <= iv[0]) continue;
          if (iv[0] < last) off_cpu_is_held_[kind] = true;
          last = iv[0];
        }
        break;
      }
      case RecordType::ProbeCost:
        need(sizeof(ProbeCost));
        std::memcpy(&probe_cost_, p, sizeof probe_cost_);
        has_probe_cost_ = true;
        break;
      case RecordType::RuntimeCost: {
        need(sizeof(RuntimeCostHeader));
        RuntimeCostHeader h;
        std::memcpy(&h, p, sizeof h);
        if (h.count > 65536 || n < sizeof h + size_t(h.count) * sizeof(RuntimeCostEntry))
          fail("corrupted runtime cost record at byte " + std::to_string(pos) + " (" +
               std::to_string(h.count) + " entries in " + std::to_string(n) + " bytes)");
        runtime_costs_.resize(h.count);
        if (h.count)
          std::memcpy(runtime_costs_.data(), p + sizeof h, h.count * sizeof(RuntimeCostEntry));
        runtime_cost_header_ = h;  // the last record wins
        break;
      }
      case RecordType::RecorderStats:
        need(sizeof(RecorderStats));
        std::memcpy(&recorder_stats_, p, sizeof recorder_stats_);
        has_recorder_stats_ = true;
        break;
      case RecordType::TaskCost:
        need(sizeof(TaskCost));
        std::memcpy(&task_cost_, p, sizeof task_cost_);
        has_task_cost_ = task_cost_.pico_per_task > 0 && task_cost_.tasks > 0;  // else: damaged
        break;
      case RecordType::HostSteal:
        need(sizeof(HostSteal));
        std::memcpy(&host_steal_, p, sizeof host_steal_);
        has_host_steal_ = host_steal_.steal_ticks <= host_steal_.total_ticks;  // else: damaged
        break;
      case RecordType::OpenAtEnd: {
        need(4);
        uint32_t count;
        std::memcpy(&count, p, 4);
        if (count > (n - 4) / sizeof(OpenRun))
          fail("corrupted open-runs record at byte " + std::to_string(pos) + " (" +
               std::to_string(count) + " entries in " + std::to_string(n) + " bytes)");
        open_at_end_.resize(count);
        if (count) std::memcpy(open_at_end_.data(), p + 4, count * sizeof(OpenRun));
        break;
      }
      case RecordType::RegionNames:
        parse_region_names(p, n, pos);
        break;
      case RecordType::SiteNames:
        parse_site_names(p, n, pos);
        break;
      case RecordType::LaunchStatus:
        need(sizeof(LaunchStatus));
        std::memcpy(&launch_status_, p, sizeof launch_status_);
        has_launch_status_ = true;
        break;
      default:
        break;  // a record type from a newer writer: skip it
    }
    pos += rh.size;
  }
  if (truncated)
    fail("the file is truncated: it ends inside a record at byte " + std::to_string(pos) + " of " +
         std::to_string(file.size()) +
         " (a killed program's trace ends at a record boundary: was the file cut or copied "
         "incompletely?)");
  if (!saw_schema)
    fail("the trace has no event schema record: corrupted or not written by tasklens");
  // `tasklens record` appends the program's exit status to every trace, killed programs
  // included: a trace with neither that nor the recorder's own end record lost its end (tasklens
  // itself was killed, the program with it, or the file was copied while being written). It
  // ends at a record boundary, so what it holds is whole: it is read, and the model says it is
  // incomplete and why (losses.cpp, incomplete_cause).
  off_cpu_last_ = {};
  // A kind out of time order is held whole, sorted and merged: an interval reported twice must
  // not be taken out of the work twice.
  for (int kind = 0; kind < kOffCpuKinds; ++kind) {
    if (!off_cpu_is_held_[kind]) continue;
    Intervals& all = off_cpu_held_[kind];
    all.resize(off_cpu_records_[kind].size());
    std::vector<uint64_t> pairs;
    for (size_t thread = 0; thread < all.size(); ++thread) {
      auto& pr = all[thread];
      for (const OffCpuRecord& r : off_cpu_records_[kind][thread]) {
        read_off_cpu(r, pairs);
        for (size_t i = 0; i < pairs.size(); i += 2)
          if (pairs[i + 1] > pairs[i]) pr.emplace_back(pairs[i], pairs[i + 1]);
      }
      std::sort(pr.begin(), pr.end());
      size_t w = 0;
      for (size_t r = 0; r < pr.size(); ++r) {
        if (w > 0 && pr[r].first <= pr[w - 1].second)
          pr[w - 1].second = std::max(pr[w - 1].second, pr[r].second);
        else
          pr[w++] = pr[r];
      }
      pr.resize(w);
    }
  }
  for (auto& bl : blocks_)
    std::sort(bl.begin(), bl.end(), [](const Block& a, const Block& b) {
      return a.chunk_seq != b.chunk_seq ? a.chunk_seq < b.chunk_seq : a.offset < b.offset;
    });
}

// A RegionNames payload (format.hpp) at file offset `pos`. Ids are dense from 0 in a trace of
// the recorder; the bound only keeps a corrupted id from allocating gigabytes.
void TraceFile::parse_region_names(const uint8_t* p, size_t n, size_t pos) {
  auto bad = [&](const std::string& why) {
    fail("corrupted region names record at byte " + std::to_string(pos) + " (" + why + ")");
  };
  if (n < 4) bad("too short");
  uint32_t count;
  std::memcpy(&count, p, 4);
  size_t off = 4;
  for (uint32_t i = 0; i < count; ++i) {
    if (n - off < 8) bad("entry " + std::to_string(i) + " of " + std::to_string(count) + " cut");
    uint32_t id, size;
    std::memcpy(&id, p + off, 4);
    std::memcpy(&size, p + off + 4, 4);
    off += 8;
    if (size > n - off) bad("name of id " + std::to_string(id) + " cut");
    if (id >= kMaxRegionNames) bad("name id " + std::to_string(id) + " out of range");
    std::string name(reinterpret_cast<const char*>(p + off), size);
    if (region_names_.size() <= id) {
      region_names_.resize(size_t(id) + 1);
      region_named_.resize(size_t(id) + 1);
    }
    if (region_named_[id] && region_names_[id] != name)
      bad("id " + std::to_string(id) + " has two different names");
    region_names_[id] = std::move(name);
    region_named_[id] = true;
    off += size;
  }
  if (off != n)
    bad(std::to_string(n - off) + " bytes after its " + std::to_string(count) + " names");
}

double TraceFile::tsc_hz() const {
  if (clock_syncs_.size() < 2) return 0;
  const ClockSync& a = clock_syncs_.front();
  const ClockSync& b = clock_syncs_.back();
  if (b.monotonic_ns <= a.monotonic_ns + 1000000 || b.tsc <= a.tsc) {
    // Too short a run for a good estimate: use the widest pair anyway if any.
    if (b.monotonic_ns <= a.monotonic_ns || b.tsc <= a.tsc) return 0;
  }
  return double(b.tsc - a.tsc) * 1e9 / double(b.monotonic_ns - a.monotonic_ns);
}

void TraceFile::read_off_cpu(const OffCpuRecord& r, std::vector<uint64_t>& pairs) const {
  if (r.packed_bytes) {
    thread_local std::vector<uint8_t> packed;
    const uint8_t* src = nullptr;  // (data_ is empty when the events stay in the file)
    if (!file_) {
      src = data_.data() + r.data_offset;
    } else {
      packed.resize(r.packed_bytes);
      if (!read_at(file_->fd, packed.data(), packed.size(), r.data_offset))
        fail("the file changed while it was read (an off-CPU record at byte " +
             std::to_string(r.data_offset) + " could not be read back): give a finished trace");
      src = packed.data();
    }
    OffCpuPackedHeader h{};
    h.count = r.count;
    h.raw_size = r.raw_size;
    h.in_order = r.in_order;
    h.first_begin = r.first_begin;
    h.last_begin = r.last_begin;
    std::string error;
    if (!unpack_off_cpu(h, src, r.packed_bytes, pairs, error))
      fail("corrupted off-CPU record at byte " + std::to_string(r.data_offset) + " (" + error +
           ")");
    return;
  }
  pairs.resize(size_t(r.count) * 2);
  const size_t bytes = pairs.size() * sizeof(uint64_t);
  if (!file_) {
    std::memcpy(pairs.data(), data_.data() + r.data_offset, bytes);
  } else if (!read_at(file_->fd, reinterpret_cast<uint8_t*>(pairs.data()), bytes, r.data_offset)) {
    fail("the file changed while it was read (an off-CPU record at byte " +
         std::to_string(r.data_offset) + " could not be read back): give a finished trace");
  }
}

void TraceFile::decompress(const Block& b, uint8_t* out) const {
  const uint8_t* src;
  if (file_) {
    // Read back from the file (each decoding thread has its own buffer).
    thread_local std::vector<uint8_t> block;
    block.resize(b.data_size);
    if (!read_at(file_->fd, block.data(), b.data_size, b.data_offset))
      fail("the file changed while it was read (an event block at byte " +
           std::to_string(b.data_offset) + " could not be read back): give a finished trace");
    src = block.data();
  } else {
    src = data_.data() + b.data_offset;
  }
  if (b.compression == static_cast<uint8_t>(Compression::None)) {
    if (b.data_size != b.raw_size) fail("corrupted event block (size mismatch)");
    std::memcpy(out, src, b.raw_size);
  } else if (b.compression == static_cast<uint8_t>(Compression::Lz4)) {
    int got = LZ4_decompress_safe(reinterpret_cast<const char*>(src), reinterpret_cast<char*>(out),
                                  static_cast<int>(b.data_size), static_cast<int>(b.raw_size));
    if (got < 0 || static_cast<uint32_t>(got) != b.raw_size)
      fail("corrupted event block (lz4: " + std::string(got < 0 ? "bad data" : "size mismatch") +
           ")");
  } else {
    size_t got = ZSTD_decompress(out, b.raw_size, src, b.data_size);
    if (ZSTD_isError(got) || got != b.raw_size)
      fail(std::string("corrupted event block (zstd: ") +
           (ZSTD_isError(got) ? ZSTD_getErrorName(got) : "size mismatch") + ")");
  }
}

std::vector<uint8_t> TraceFile::stream(uint32_t thread) const {
  std::vector<uint8_t> out;
  if (thread >= blocks_.size()) return out;
  out.reserve(stream_bytes(thread));
  for (const Block& b : blocks_[thread]) {
    size_t at = out.size();
    out.resize(at + b.raw_size);
    decompress(b, out.data() + at);
  }
  return out;
}

TraceFile::BlockCounts TraceFile::block_counts() const {
  BlockCounts c;
  for (const std::vector<Block>& thread : blocks_)
    for (const Block& b : thread) {
      if (b.compression == static_cast<uint8_t>(Compression::None)) {
        ++c.raw_blocks;
        c.raw_bytes += b.raw_size;
      } else {
        ++c.packed_blocks;
        c.packed_bytes += b.data_size;
      }
    }
  return c;
}

uint64_t TraceFile::stream_bytes(uint32_t thread) const {
  uint64_t total = 0;
  if (thread < blocks_.size())
    for (const Block& b : blocks_[thread]) total += b.raw_size;
  return total;
}

EventDecoder TraceFile::decoder(const std::vector<uint8_t>& stream) const {
  EventDecoder d(schema_, metrics_, stream.data(), stream.size(), header_.start_tsc);
  d.set_context(path_);
  d.limit_advance(advance_per_stream());
  return d;
}

EventDecoder TraceFile::decoder(uint32_t thread) const {
  EventDecoder d(schema_, metrics_, nullptr, 0, header_.start_tsc);
  d.set_context(path_);
  d.limit_advance(advance_per_stream());
  d.file_ = this;
  d.thread_ = thread;
  d.more_blocks_ = thread < blocks_.size() && !blocks_[thread].empty();
  return d;
}

// A SiteNames payload (format.hpp) at file offset `pos`.
void TraceFile::parse_site_names(const uint8_t* p, size_t n, size_t pos) {
  auto bad = [&](const std::string& why) {
    fail("corrupted site names record at byte " + std::to_string(pos) + " (" + why + ")");
  };
  if (n < 4) bad("too short");
  uint32_t count;
  std::memcpy(&count, p, 4);
  size_t off = 4;
  for (uint32_t i = 0; i < count; ++i) {
    if (n - off < 20) bad("entry " + std::to_string(i) + " of " + std::to_string(count) + " cut");
    uint64_t address;
    uint32_t line, file_size, function_size;
    std::memcpy(&address, p + off, 8);
    std::memcpy(&line, p + off + 8, 4);
    std::memcpy(&file_size, p + off + 12, 4);
    std::memcpy(&function_size, p + off + 16, 4);
    off += 20;
    if (uint64_t(file_size) + function_size > n - off)
      bad("names of entry " + std::to_string(i) + " cut");
    if (!(address & kSyntheticSite))
      bad("address of entry " + std::to_string(i) + " is not synthetic");
    SiteName s;
    s.file.assign(reinterpret_cast<const char*>(p + off), file_size);
    s.function.assign(reinterpret_cast<const char*>(p + off + file_size), function_size);
    s.line = line;
    off += uint64_t(file_size) + function_size;
    site_names_[address] = std::move(s);
  }
  if (off != n)
    bad(std::to_string(n - off) + " bytes after its " + std::to_string(count) + " entries");
}

}  // namespace tasklens::trace
