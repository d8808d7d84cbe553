// trace/repack: the raw event blocks of a trace compressed after the run, everything else kept.
#include <gtest/gtest.h>
#include <lz4.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "trace/format.hpp"
#include "trace/reader.hpp"
#include "trace/repack.hpp"
#include "trace_builder.hpp"

namespace tasklens::trace {
namespace {

// A stream of `tasks` task creations and completions, as compressible as a real one.
std::vector<uint8_t> task_stream(uint32_t thread, int tasks) {
  std::vector<uint8_t> s;
  uint8_t buf[10];
  auto varint = [&](uint64_t v) { s.insert(s.end(), buf, put_varint(buf, v)); };
  uint64_t last_id = 0;
  for (int i = 0; i < tasks; ++i) {
    const uint64_t id = (uint64_t(thread) + 1) << 40 | uint64_t(i + 1);
    s.push_back(static_cast<uint8_t>(EventKind::TaskCreate));
    varint(90 + i % 7);                                            // dtime
    varint(zigzag(static_cast<int64_t>((1ull << 40) - last_id)));  // the parent
    varint(zigzag(static_cast<int64_t>(id - (1ull << 40))));       // the child
    last_id = id;
    varint(4);  // flags
    varint(zigzag(i == 0 ? 0x4000 : 0));
    s.push_back(static_cast<uint8_t>(EventKind::TaskSchedule));
    varint(40 + i % 3);
    varint(zigzag(0));
    varint(2);  // complete
    varint(zigzag(static_cast<int64_t>((1ull << 40) - id)));
    last_id = 1ull << 40;
  }
  return s;
}

// A trace as the recorder writes it under deferred compression: each stream in raw blocks of
// `block` bytes (one already compressed by a writer that fell behind, when `one_lz4`), side
// records between them, and the recorder's and the launcher's end records.
std::vector<uint8_t> raw_trace(int streams, size_t block, bool one_lz4, bool finish = true) {
  std::vector<uint8_t> out = fixtures::test_trace_head();
  ClockSync b{3001000, 1000000};
  for (int t = 0; t < streams; ++t) {
    const std::vector<uint8_t> s = task_stream(uint32_t(t), 20000);
    for (size_t lo = 0; lo < s.size(); lo += block) {
      const size_t hi = std::min(s.size(), lo + block);
      EventBlockHeader bh{};
      bh.thread = uint32_t(t);
      bh.offset = uint32_t(lo);
      bh.raw_size = uint32_t(hi - lo);
      std::vector<uint8_t> data(s.begin() + long(lo), s.begin() + long(hi));
      if (one_lz4 && lo == 0) {
        std::vector<uint8_t> z(size_t(LZ4_compressBound(int(data.size()))));
        z.resize(size_t(LZ4_compress_default(reinterpret_cast<const char*>(data.data()),
                                             reinterpret_cast<char*>(z.data()), int(data.size()),
                                             int(z.size()))));
        data = z;
        bh.compression = static_cast<uint8_t>(Compression::Lz4);
      }
      append_record(out, RecordType::EventBlock, &bh, sizeof bh, data.data(), data.size());
    }
  }
  append_record(out, RecordType::ClockSync, &b, sizeof b);
  if (finish) {
    Finish f{};
    f.tasks_created = uint64_t(streams) * 20000;
    append_record(out, RecordType::Finish, &f, sizeof f);
    LaunchStatus ls{0, 0, 1000};
    append_record(out, RecordType::LaunchStatus, &ls, sizeof ls);
  }
  return out;
}

std::string write_temp(const std::vector<uint8_t>& bytes) {
  char path[] = "/tmp/tasklens_repack_testXXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  close(fd);
  return path;
}

uint64_t file_size(const std::string& p) {
  struct stat st {};
  stat(p.c_str(), &st);
  return uint64_t(st.st_size);
}

// Both files hold the same trace: the same streams, byte for byte, and the same end records.
void expect_same_trace(const std::string& a, const std::string& b) {
  TraceFile ta = TraceFile::open(a), tb = TraceFile::open(b);
  ASSERT_EQ(ta.stream_count(), tb.stream_count());
  for (uint32_t s = 0; s < ta.stream_count(); ++s) EXPECT_EQ(ta.stream(s), tb.stream(s));
  EXPECT_EQ(ta.complete(), tb.complete());
  EXPECT_EQ(ta.has_finish(), tb.has_finish());
  EXPECT_EQ(ta.has_launch_status(), tb.has_launch_status());
  EXPECT_DOUBLE_EQ(ta.tsc_hz(), tb.tsc_hz());
  EXPECT_EQ(ta.runtime_version(), tb.runtime_version());
}

class Repack : public ::testing::TestWithParam<Compression> {};

TEST_P(Repack, RawBlocksAreCompressedAndTheTraceReadsTheSame) {
  const std::vector<uint8_t> bytes = raw_trace(3, 64 * 1024, /*one_lz4=*/true);
  const std::string original = write_temp(bytes), packed = write_temp(bytes);
  chmod(packed.c_str(), 0640);
  const RepackResult r = compress_raw_blocks(packed, GetParam(), 1, 2);
  EXPECT_TRUE(r.rewritten) << r.error;
  EXPECT_TRUE(r.error.empty());
  EXPECT_EQ(r.bytes_in, bytes.size());
  EXPECT_EQ(r.bytes_out, file_size(packed));
  EXPECT_LT(r.bytes_out * 5, r.bytes_in * 4);  // these streams compress (LZ4 to 67%)
  // Every raw block of every stream but the first ones (already LZ4) was compressed.
  EXPECT_GT(r.blocks, 3u);
  struct stat st {};
  stat(packed.c_str(), &st);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  expect_same_trace(original, packed);
  // A second pass finds nothing left to compress and leaves the file alone.
  const RepackResult again = compress_raw_blocks(packed, GetParam(), 1, 2);
  EXPECT_FALSE(again.rewritten);
  EXPECT_TRUE(again.error.empty());
  EXPECT_EQ(file_size(packed), r.bytes_out);
  unlink(original.c_str());
  unlink(packed.c_str());
}

INSTANTIATE_TEST_SUITE_P(Codecs, Repack, ::testing::Values(Compression::Lz4, Compression::Zstd));

// A program killed while the recorder wrote leaves half a record at the end: it stays, so that
// the reader still says what it says of the uncompressed trace.
TEST(RepackCut, AnUnfinishedLastRecordIsCopiedAsItIs) {
  std::vector<uint8_t> bytes = raw_trace(2, 32 * 1024, false, /*finish=*/false);
  const size_t whole = bytes.size();
  bytes.resize(whole - 1000);  // inside the last event block
  const std::string original = write_temp(bytes), packed = write_temp(bytes);
  const RepackResult r = compress_raw_blocks(packed, Compression::Lz4, 1, 2);
  ASSERT_TRUE(r.rewritten) << r.error;
  const TraceFile::Scan a = TraceFile::scan(original), b = TraceFile::scan(packed);
  EXPECT_EQ(a.file_bytes - a.whole_bytes, b.file_bytes - b.whole_bytes);  // the same cut tail
  EXPECT_GT(b.file_bytes - b.whole_bytes, 0u);
  // Once the launcher cut that tail off (as `record` does), both read the same.
  ASSERT_EQ(truncate(original.c_str(), off_t(a.whole_bytes)), 0);
  ASSERT_EQ(truncate(packed.c_str(), off_t(b.whole_bytes)), 0);
  expect_same_trace(original, packed);
  unlink(original.c_str());
  unlink(packed.c_str());
}

// Off-CPU intervals as the recorder writes them (16 bytes each, a record per drain of about a
// thousand, the three types, in time order per thread and type, some overlapping, touching, empty
// or reversed), and one thread's Blocked records out of order (a damaged trace's: read whole).
std::vector<uint8_t> with_off_cpu_records(std::vector<uint8_t> bytes) {
  std::mt19937_64 rng(5);
  auto add = [&](RecordType type, uint32_t thread, const std::vector<uint64_t>& pairs) {
    uint32_t header[2] = {thread, static_cast<uint32_t>(pairs.size() / 2)};
    append_record(bytes, type, header, sizeof header, pairs.data(), pairs.size() * 8);
  };
  for (uint32_t thread : {0u, 1u}) {
    for (RecordType type : {RecordType::Preemptions, RecordType::Blocked, RecordType::SlowFaults}) {
      uint64_t at = 3000000 + thread;
      for (int record = 0; record < 6; ++record) {
        // Records of 0, 1, 7 (left raw: too few to gain) and hundreds of intervals.
        const size_t count =
            record < 3 ? size_t{0} + (record == 1) + 7 * (record == 2) : 200 + rng() % 900;
        std::vector<uint64_t> pairs;
        for (size_t i = 0; i < count; ++i) {
          const uint64_t begin = at, end = rng() % 10 == 0 ? begin : begin + 1 + rng() % 90000;
          pairs.insert(pairs.end(), {begin, end});
          at = end + (rng() % 3 == 0 ? 0 : rng() % 2000000) - (rng() % 5 == 0 && end > begin);
        }
        add(type, thread, pairs);
      }
    }
  }
  std::vector<uint64_t> late, early;
  for (uint64_t i = 0; i < 50; ++i) {
    late.insert(late.end(), {9000000 + i * 1000, 9000000 + i * 1000 + 600});
    early.insert(early.end(), {4000000 + i * 1000, 4000000 + i * 1000 + 700});
  }
  add(RecordType::Blocked, 2, late);
  add(RecordType::Blocked, 2, early);
  return bytes;
}

void expect_same_off_cpu(const std::string& a, const std::string& b) {
  for (bool in_memory : {true, false}) {
    TraceFile ta = TraceFile::open(a, in_memory), tb = TraceFile::open(b, in_memory);
    for (OffCpuKind kind : {OffCpuKind::Preempted, OffCpuKind::Blocked, OffCpuKind::SlowFault}) {
      EXPECT_EQ(ta.off_cpu_threads(kind), tb.off_cpu_threads(kind));
      EXPECT_EQ(ta.off_cpu_intervals(kind), tb.off_cpu_intervals(kind)) << int(kind);
      EXPECT_FALSE(tb.off_cpu_intervals(kind).empty());
    }
  }
}

// Where the first record of `type` begins in a trace file's bytes (0: none).
size_t first_record(const std::vector<uint8_t>& bytes, RecordType type) {
  uint32_t header_size;
  std::memcpy(&header_size, bytes.data() + 12, 4);
  for (size_t at = header_size; at + sizeof(RecordHeader) <= bytes.size();) {
    RecordHeader rh;
    std::memcpy(&rh, bytes.data() + at, sizeof rh);
    if (rh.type == static_cast<uint32_t>(type)) return at;
    at += rh.size;
  }
  return 0;
}

// The bytes the records of these types take in a trace file's bytes.
uint64_t record_bytes(const std::vector<uint8_t>& bytes, const std::vector<RecordType>& types) {
  uint32_t header_size;
  std::memcpy(&header_size, bytes.data() + 12, 4);
  uint64_t sum = 0;
  for (size_t at = header_size; at + sizeof(RecordHeader) <= bytes.size();) {
    RecordHeader rh;
    std::memcpy(&rh, bytes.data() + at, sizeof rh);
    for (RecordType type : types)
      if (rh.type == static_cast<uint32_t>(type)) sum += rh.size;
    at += rh.size;
  }
  return sum;
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::vector<uint8_t> bytes(file_size(path));
  FILE* f = fopen(path.c_str(), "rb");
  EXPECT_NE(f, nullptr);
  EXPECT_EQ(fread(bytes.data(), 1, bytes.size(), f), bytes.size());
  fclose(f);
  return bytes;
}

TEST(RepackOffCpu, IntervalsArePackedAndEveryReaderGetsTheSame) {
  const std::vector<uint8_t> bytes = with_off_cpu_records(raw_trace(2, 64 * 1024, false));
  const std::string original = write_temp(bytes), packed = write_temp(bytes);
  for (Compression codec : {Compression::Lz4, Compression::Zstd}) {
    const std::vector<uint8_t> copy = bytes;
    FILE* f = fopen(packed.c_str(), "wb");
    fwrite(copy.data(), 1, copy.size(), f);
    fclose(f);
    const RepackResult r = compress_raw_blocks(packed, codec, 3, 2);
    ASSERT_TRUE(r.rewritten) << r.error;
    // Those of 200 or more intervals: 2 threads x 3 types x 3, and thread 2's two.
    EXPECT_EQ(r.off_cpu_records, 20u);
    expect_same_trace(original, packed);
    expect_same_off_cpu(original, packed);
    // A second pass finds nothing left to pack (the records of 7 intervals or fewer stay).
    const RepackResult again = compress_raw_blocks(packed, codec, 3, 2);
    EXPECT_FALSE(again.rewritten);
    EXPECT_TRUE(again.error.empty()) << again.error;
  }
  // Packed, the intervals take a fraction of their 16 bytes each.
  const std::vector<RecordType> off_cpu = {RecordType::Preemptions, RecordType::Blocked,
                                           RecordType::SlowFaults, RecordType::OffCpuPacked};
  EXPECT_LT(record_bytes(read_bytes(packed), off_cpu) * 3, record_bytes(bytes, off_cpu));

  // A damaged packed record is refused in one line, whether at open (its header) or as it is
  // read (its bytes).
  std::vector<uint8_t> damaged = read_bytes(packed);
  const size_t at = first_record(damaged, RecordType::OffCpuPacked);
  ASSERT_GT(at, 0u);
  uint8_t count[4];
  std::memcpy(count, &damaged[at + sizeof(RecordHeader) + 8], 4);
  std::memset(&damaged[at + sizeof(RecordHeader) + 8], 0, 4);  // no intervals, yet bytes
  const std::string bad_header = write_temp(damaged);
  std::memcpy(&damaged[at + sizeof(RecordHeader) + 8], count, 4);
  damaged[at + sizeof(RecordHeader) + sizeof(OffCpuPackedHeader) + 5] ^= 0x5a;  // its bytes
  const std::string bad_bytes = write_temp(damaged);
  for (bool in_memory : {true, false}) {
    try {
      TraceFile::open(bad_header, in_memory);
      ADD_FAILURE() << "a damaged header was read";
    } catch (const TraceError& e) {
      EXPECT_NE(std::string(e.what()).find("corrupted off-CPU record"), std::string::npos)
          << e.what();
    }
    TraceFile t = TraceFile::open(bad_bytes, in_memory);
    try {
      (void)t.preemptions();
      (void)t.blocked();
      (void)t.slow_faults();
      ADD_FAILURE() << "damaged intervals were read";
    } catch (const TraceError& e) {
      EXPECT_NE(std::string(e.what()).find("corrupted off-CPU record"), std::string::npos)
          << e.what();
    }
  }
  for (const std::string& p : {original, packed, bad_header, bad_bytes}) unlink(p.c_str());
}

TEST(RepackRefuses, WhatIsNotATraceOrNotAFileIsLeftAlone) {
  const std::string text = write_temp(std::vector<uint8_t>(1000, 'x'));
  RepackResult r = compress_raw_blocks(text, Compression::Lz4);
  EXPECT_FALSE(r.rewritten);
  EXPECT_EQ(file_size(text), 1000u);
  unlink(text.c_str());

  r = compress_raw_blocks("/dev/null", Compression::Lz4);
  EXPECT_FALSE(r.rewritten);
  EXPECT_NE(r.error.find("not a regular file"), std::string::npos) << r.error;

  r = compress_raw_blocks("/nonexistent/dir/run.tlens", Compression::Lz4);
  EXPECT_FALSE(r.rewritten);
  EXPECT_NE(r.error.find("cannot read"), std::string::npos) << r.error;

  // `none` asks for no compression: nothing to do.
  const std::string raw = write_temp(raw_trace(1, 64 * 1024, false));
  r = compress_raw_blocks(raw, Compression::None);
  EXPECT_FALSE(r.rewritten);
  EXPECT_TRUE(r.error.empty());
  unlink(raw.c_str());
}

}  // namespace
}  // namespace tasklens::trace
