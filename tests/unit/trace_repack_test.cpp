// trace/repack: the raw event blocks of a trace compressed after the run, everything else kept.
#include <gtest/gtest.h>
#include <lz4.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
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
