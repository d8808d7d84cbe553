#include "trace/repack.hpp"

#include <fcntl.h>
#include <lz4.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <system_error>
#include <thread>
#include <vector>

#include "trace/off_cpu_pack.hpp"

namespace tasklens::trace {
namespace {

// Records are compressed in batches of about this many bytes: enough for every thread to have
// several blocks, little enough to keep memory small (the file may hold gigabytes).
constexpr size_t kBatchBytes = 32u << 20;
// A header_size beyond this is not a trace's (FileHeader is 64 bytes today).
constexpr uint32_t kMaxHeaderBytes = 4096;

// Reads exactly n bytes (fewer only at the end of the file); -1 on a read error.
ssize_t read_full(int fd, void* to, size_t n) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(fd, static_cast<uint8_t*>(to) + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return static_cast<ssize_t>(got);
}

bool write_full(int fd, const void* from, size_t n) {
  size_t done = 0;
  while (done < n) {
    const ssize_t w = ::write(fd, static_cast<const uint8_t*>(from) + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    done += static_cast<size_t>(w);
  }
  return true;
}

// Bytes that are not zeroed when they grow (a vector's would be, and its fresh pages faulted in
// twice): records are reused from batch to batch, so after the first one nothing is allocated.
struct Bytes {
  std::unique_ptr<uint8_t[]> data;
  size_t size = 0, capacity = 0;
  void resize(size_t n) {
    if (n > capacity) {
      data.reset(new uint8_t[n]);
      capacity = n;
    }
    size = n;
  }
  uint8_t* begin() { return data.get(); }
  const uint8_t* begin() const { return data.get(); }
};

struct Record {
  Bytes bytes;   // the whole record as read (header included)
  Bytes packed;  // its compressed form, when it was a raw event block that shrank (else size 0)
  bool raw_block = false;
};

// The record's compressed form into r.packed (left empty when it does not shrink).
void compress_record(Record& r, Compression codec, int level, ZSTD_CCtx* cctx) {
  constexpr size_t kHead = sizeof(RecordHeader) + sizeof(EventBlockHeader);
  const size_t raw = r.bytes.size - kHead;
  r.packed.resize(kHead + compress_bound(raw));
  const size_t n =
      compress_events(codec, level, cctx, r.bytes.begin() + kHead, raw, r.packed.begin() + kHead);
  if (n == 0) {
    r.packed.size = 0;
    return;
  }
  uint8_t* out = r.packed.begin();
  std::memcpy(out, r.bytes.begin(), kHead);
  RecordHeader rh;
  std::memcpy(&rh, out, sizeof rh);
  rh.size = static_cast<uint32_t>(kHead + n);
  std::memcpy(out, &rh, sizeof rh);
  EventBlockHeader bh;
  std::memcpy(&bh, out + sizeof rh, sizeof bh);
  bh.compression = static_cast<uint8_t>(codec);
  std::memcpy(out + sizeof rh, &bh, sizeof bh);
  r.packed.size = kHead + n;
}

// A Preemptions, Blocked or SlowFaults record of kMinOffCpuPack intervals or more, its size
// matching its count: packed into r.packed as an OffCpuPacked record when that is smaller (the
// packed record's headers and zstd's frame take about 60 bytes: fewer intervals gain little).
constexpr uint32_t kMinOffCpuPack = 8;
bool is_off_cpu_record(const Bytes& rec) {
  if (rec.size < sizeof(RecordHeader) + 8) return false;
  RecordHeader rh;
  std::memcpy(&rh, rec.begin(), sizeof rh);
  if (!is_off_cpu_type(rh.type)) return false;
  uint32_t count;
  std::memcpy(&count, rec.begin() + sizeof rh + 4, sizeof count);
  return count >= kMinOffCpuPack && rec.size == sizeof rh + 8 + uint64_t{count} * 16;
}

void pack_off_cpu_record(Record& r, int level, ZSTD_CCtx* cctx) {
  RecordHeader rh;
  std::memcpy(&rh, r.bytes.begin(), sizeof rh);
  uint32_t head[2];  // thread, count
  std::memcpy(head, r.bytes.begin() + sizeof rh, sizeof head);
  thread_local std::vector<uint64_t> pairs;
  pairs.resize(size_t{head[1]} * 2);
  std::memcpy(pairs.data(), r.bytes.begin() + sizeof rh + sizeof head, pairs.size() * 8);
  thread_local std::vector<uint8_t> payload;
  if (!pack_off_cpu(static_cast<RecordType>(rh.type), head[0], pairs.data(), head[1], level, cctx,
                    payload) ||
      sizeof rh + payload.size() >= r.bytes.size)  // (as for a record of one or no interval)
    return;
  const RecordHeader packed_head{static_cast<uint32_t>(RecordType::OffCpuPacked),
                                 static_cast<uint32_t>(sizeof rh + payload.size())};
  r.packed.resize(packed_head.size);
  std::memcpy(r.packed.begin(), &packed_head, sizeof packed_head);
  std::memcpy(r.packed.begin() + sizeof packed_head, payload.data(), payload.size());
}

// A raw event block: its header says so and its size matches the bytes it holds.
bool is_raw_block(const Bytes& rec) {
  if (rec.size < sizeof(RecordHeader) + sizeof(EventBlockHeader)) return false;
  RecordHeader rh;
  std::memcpy(&rh, rec.begin(), sizeof rh);
  if (rh.type != static_cast<uint32_t>(RecordType::EventBlock)) return false;
  EventBlockHeader bh;
  std::memcpy(&bh, rec.begin() + sizeof rh, sizeof bh);
  return bh.compression == static_cast<uint8_t>(Compression::None) &&
         bh.raw_size == rec.size - sizeof rh - sizeof bh;
}

// Whether the trace holds a raw event block worth compressing (kMinRawBlock bytes or more), or
// off-CPU intervals as the recorder writes them, from the records' headers alone: a trace
// compressed as it was recorded (or a second pass) is not copied for nothing, which on a full
// disk would also fail for nothing.
constexpr uint32_t kMinRawBlock = 1024;
bool has_raw_blocks(int fd, uint64_t at, uint64_t file_bytes) {
  while (at + sizeof(RecordHeader) + sizeof(EventBlockHeader) <= file_bytes) {
    uint8_t head[sizeof(RecordHeader) + sizeof(EventBlockHeader)];
    if (pread(fd, head, sizeof head, off_t(at)) != ssize_t(sizeof head)) return false;
    RecordHeader rh;
    std::memcpy(&rh, head, sizeof rh);
    if (rh.size < sizeof rh) return false;
    if (rh.type == static_cast<uint32_t>(RecordType::EventBlock) &&
        rh.size >= sizeof head + kMinRawBlock) {
      EventBlockHeader bh;
      std::memcpy(&bh, head + sizeof rh, sizeof bh);
      if (bh.compression == static_cast<uint8_t>(Compression::None)) return true;
    }
    if (is_off_cpu_type(rh.type) && rh.size >= sizeof(RecordHeader) + 8 + kMinOffCpuPack * 16)
      return true;
    at += rh.size;
  }
  return false;
}

class Repacker {
 public:
  Repacker(Compression codec, int level, unsigned threads)
      : codec_(codec), level_(level), threads_(threads) {
    for (unsigned i = 0; i < threads_; ++i)
      cctx_.push_back(codec == Compression::Zstd ? ZSTD_createCCtx() : nullptr);
  }
  ~Repacker() {
    for (ZSTD_CCtx* c : cctx_) ZSTD_freeCCtx(c);
  }
  Repacker(const Repacker&) = delete;
  Repacker& operator=(const Repacker&) = delete;

  // Compresses the batch's raw blocks, thread i taking every threads-th of them.
  void compress(std::vector<Record>& batch, size_t count) {
    std::vector<Record*> raw;
    for (size_t i = 0; i < count; ++i)
      if (batch[i].raw_block) raw.push_back(&batch[i]);
    if (raw.empty()) return;
    const unsigned n = std::min<unsigned>(threads_, static_cast<unsigned>(raw.size()));
    auto work = [&](unsigned me) {
      for (size_t i = me; i < raw.size(); i += n)
        compress_record(*raw[i], codec_, level_, cctx_[me]);
    };
    std::vector<std::thread> helpers;
    for (unsigned i = 1; i < n; ++i) {
      try {
        helpers.emplace_back(work, i);
      } catch (const std::system_error&) {  // no thread: this one does that share too
        work(i);
      }
    }
    work(0);
    for (std::thread& t : helpers) t.join();
  }

 private:
  Compression codec_;
  int level_;
  unsigned threads_;
  std::vector<ZSTD_CCtx*> cctx_;
};

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

size_t compress_bound(size_t raw) {
  return std::max<size_t>(ZSTD_compressBound(raw),
                          static_cast<size_t>(LZ4_compressBound(static_cast<int>(raw))));
}

size_t compress_events(Compression codec, int zstd_level, ZSTD_CCtx* cctx, const uint8_t* src,
                       size_t raw, uint8_t* out) {
  const size_t bound = compress_bound(raw);
  size_t packed = 0;
  if (codec == Compression::Lz4) {
    const int got =
        LZ4_compress_default(reinterpret_cast<const char*>(src), reinterpret_cast<char*>(out),
                             static_cast<int>(raw), static_cast<int>(bound));
    packed = got > 0 ? static_cast<size_t>(got) : 0;
  } else if (codec == Compression::Zstd && cctx) {
    packed = ZSTD_compressCCtx(cctx, out, bound, src, raw, zstd_level);
    if (ZSTD_isError(packed)) packed = 0;
  }
  return packed < raw ? packed : 0;
}

RepackResult compress_raw_blocks(const std::string& path, Compression codec, int zstd_level,
                                 unsigned threads) {
  RepackResult result;
  if (codec != Compression::Lz4 && codec != Compression::Zstd) return result;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  Fd in;
  in.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (in.fd < 0 || fstat(in.fd, &st) != 0) {
    result.error = std::string("cannot read it: ") + std::strerror(errno);
    return result;
  }
  if (!S_ISREG(st.st_mode)) {
    result.error = "it is not a regular file";
    return result;
  }
  result.bytes_in = result.bytes_out = static_cast<uint64_t>(st.st_size);

  // The file header, copied as it is.
  std::vector<uint8_t> head(sizeof(FileHeader));
  if (read_full(in.fd, head.data(), 16) != 16) return result;  // too short to hold anything
  uint32_t header_size;
  std::memcpy(&header_size, head.data() + 12, sizeof header_size);
  if (std::memcmp(head.data(), kMagic, sizeof kMagic) != 0 || header_size < 16 ||
      header_size > kMaxHeaderBytes)
    return result;  // not a trace this code knows how to walk: left alone
  head.resize(header_size);
  if (read_full(in.fd, head.data() + 16, header_size - 16) != ssize_t(header_size - 16))
    return result;

  if (!has_raw_blocks(in.fd, header_size, uint64_t(st.st_size))) return result;  // nothing to do
  if (lseek(in.fd, off_t(header_size), SEEK_SET) != off_t(header_size)) {
    result.error = std::string("cannot read it: ") + std::strerror(errno);
    return result;
  }

  std::string tmp = path + ".repack-XXXXXX";
  Fd out;
  out.fd = mkostemp(tmp.data(), O_CLOEXEC);
  if (out.fd < 0) {
    result.error = std::string("cannot make a file beside it: ") + std::strerror(errno);
    return result;
  }
  auto fail = [&](const std::string& why) {
    ::unlink(tmp.c_str());
    result.error = why;
    result.blocks = result.off_cpu_records = 0;
    result.bytes_out = result.bytes_in;
    return result;
  };
  (void)fchmod(out.fd, st.st_mode & 07777);  // mkostemp made it 0600; best effort
  uint64_t written = head.size();
  if (!write_full(out.fd, head.data(), head.size()))
    return fail(std::string("cannot write: ") + std::strerror(errno));

  Repacker repacker(codec, zstd_level, threads);
  // The off-CPU records are packed on this thread as they are read (a few KB each).
  std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> off_cpu_cctx(ZSTD_createCCtx(), ZSTD_freeCCtx);
  std::vector<Record> batch;  // [0, count) hold this batch; the rest are kept for their memory
  size_t count = 0, batch_bytes = 0;
  bool at_end = false;
  std::vector<uint8_t> tail;  // an unfinished record at the end, copied as it is
  auto flush = [&]() -> bool {
    repacker.compress(batch, count);
    for (size_t i = 0; i < count; ++i) {
      const Record& r = batch[i];
      const Bytes& bytes = r.packed.size ? r.packed : r.bytes;
      if (r.packed.size) ++(r.raw_block ? result.blocks : result.off_cpu_records);
      if (!write_full(out.fd, bytes.begin(), bytes.size)) return false;
      written += bytes.size;
    }
    count = batch_bytes = 0;
    return true;
  };
  while (!at_end) {
    RecordHeader rh;
    const ssize_t got = read_full(in.fd, &rh, sizeof rh);
    if (got < 0) return fail(std::string("cannot read it: ") + std::strerror(errno));
    if (got == 0) break;
    if (count == batch.size()) batch.emplace_back();
    Record& r = batch[count];
    r.packed.size = 0;
    if (size_t(got) < sizeof rh || rh.size < sizeof rh ||
        rh.size > static_cast<uint64_t>(st.st_size)) {
      // The end of a cut trace, or bytes no reader takes for a record: copied as they are.
      tail.assign(reinterpret_cast<uint8_t*>(&rh), reinterpret_cast<uint8_t*>(&rh) + got);
      std::vector<uint8_t> rest(64 * 1024);
      for (ssize_t n; (n = read_full(in.fd, rest.data(), rest.size())) > 0;)
        tail.insert(tail.end(), rest.begin(), rest.begin() + n);
      at_end = true;
      break;
    }
    r.bytes.resize(rh.size);
    std::memcpy(r.bytes.begin(), &rh, sizeof rh);
    const ssize_t body = read_full(in.fd, r.bytes.begin() + sizeof rh, rh.size - sizeof rh);
    if (body < 0) return fail(std::string("cannot read it: ") + std::strerror(errno));
    if (size_t(body) < rh.size - sizeof rh) {
      tail.assign(r.bytes.begin(), r.bytes.begin() + sizeof rh + size_t(body));
      at_end = true;
      break;
    }
    r.raw_block = is_raw_block(r.bytes);
    if (!r.raw_block && off_cpu_cctx && is_off_cpu_record(r.bytes))
      pack_off_cpu_record(r, zstd_level, off_cpu_cctx.get());
    batch_bytes += r.bytes.size;
    ++count;
    if (batch_bytes >= kBatchBytes && !flush())
      return fail(std::string("cannot write: ") + std::strerror(errno));
  }
  if (!flush() || !write_full(out.fd, tail.data(), tail.size()))
    return fail(std::string("cannot write: ") + std::strerror(errno));
  written += tail.size();
  if (result.blocks == 0 && result.off_cpu_records == 0)
    return fail("");  // nothing to compress: the file stays
  if (::close(out.fd) != 0) {
    out.fd = -1;
    return fail(std::string("cannot write: ") + std::strerror(errno));
  }
  out.fd = -1;
  const uint64_t blocks = result.blocks, off_cpu_records = result.off_cpu_records;
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    return fail(std::string("cannot replace it: ") + std::strerror(errno));
  result.blocks = blocks;
  result.off_cpu_records = off_cpu_records;
  result.rewritten = true;
  result.bytes_out = written;
  return result;
}

}  // namespace tasklens::trace
