// Trace container: writer/reader round trips and every kind of bad input (the event encoding:
// trace_events_test).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "trace/format.hpp"
#include "trace/reader.hpp"
#include "trace_builder.hpp"
#include "trace_stream_writer.hpp"

namespace tasklens::trace {
namespace {

std::vector<uint8_t> sample_stream() {
  StreamWriter w;
  w.begin(EventKind::TaskCreate, 1500);
  w.put_id((1ull << 40) + 5);
  w.put_id((1ull << 40) + 6);
  w.varint(4);
  w.put_ptr(0x55550000abcdull);
  w.begin(EventKind::TaskSchedule, 1600);
  w.put_id((2ull << 40) + 1);  // an id of another thread: a large negative/positive delta
  w.varint(7);
  w.put_id((1ull << 40) + 6);
  w.begin(EventKind::Dependences, 1700);
  w.put_id((1ull << 40) + 6);
  w.varint(2);
  w.varint(0x7fff0000);
  w.varint(3);
  w.varint(0x7fff0008);
  w.varint(1);
  w.begin(EventKind::SyncEnd, 1800);
  w.varint(5);
  w.put_id((1ull << 40) + 5);
  w.put_ptr(0x55550000ab00ull);  // a smaller address: negative delta
  return w.bytes;
}

void expect_sample(const TraceFile& t) {
  std::vector<uint8_t> s = t.stream(0);
  EventDecoder d = t.decoder(s);
  Event e;
  ASSERT_TRUE(d.next(e));
  EXPECT_EQ(e.kind, EventKind::TaskCreate);
  EXPECT_EQ(e.time, 1500u);
  EXPECT_EQ(e.f[0], (1ull << 40) + 5);
  EXPECT_EQ(e.f[1], (1ull << 40) + 6);
  EXPECT_EQ(e.f[2], 4u);
  EXPECT_EQ(e.f[3], 0x55550000abcdull);
  ASSERT_TRUE(d.next(e));
  EXPECT_EQ(e.kind, EventKind::TaskSchedule);
  EXPECT_EQ(e.f[0], (2ull << 40) + 1);
  EXPECT_EQ(e.f[1], 7u);
  EXPECT_EQ(e.f[2], (1ull << 40) + 6);
  ASSERT_TRUE(d.next(e));
  EXPECT_EQ(e.kind, EventKind::Dependences);
  ASSERT_EQ(e.groups->size(), 4u);
  EXPECT_EQ((*e.groups)[0], 0x7fff0000u);
  EXPECT_EQ((*e.groups)[3], 1u);
  ASSERT_TRUE(d.next(e));
  EXPECT_EQ(e.kind, EventKind::SyncEnd);
  EXPECT_EQ(e.time, 1800u);
  EXPECT_EQ(e.f[2], 0x55550000ab00ull);
  EXPECT_FALSE(d.next(e));
  EXPECT_FALSE(d.truncated());
}

TEST(Trace, RoundTripUncompressed) {
  std::string p = write_temp(file_with({sample_stream()}, true, Compression::None));
  TraceFile t = TraceFile::open(p);
  EXPECT_TRUE(t.complete());
  TraceFile::Scan scan = TraceFile::scan(p);
  EXPECT_TRUE(scan.has_finish);
  EXPECT_EQ(scan.tasks_created, 1u);
  EXPECT_EQ(scan.whole_bytes, scan.file_bytes);
  EXPECT_DOUBLE_EQ(scan.run_seconds(), 2.0) << "from the start to the end at the syncs' rate";
  EXPECT_EQ(t.header().pid, 42u);
  EXPECT_EQ(t.runtime_version(), "LLVM test");
  EXPECT_TRUE(t.runtime_flags() & kRuntimeHasDispatch);
  EXPECT_NEAR(t.tsc_hz(), 3e9, 1e6);
  expect_sample(t);
  unlink(p.c_str());
}

TEST(Trace, RoundTripZstdAndMultipleStreams) {
  std::string p =
      write_temp(file_with({sample_stream(), sample_stream()}, true, Compression::Zstd));
  TraceFile t = TraceFile::open(p);
  EXPECT_EQ(t.stream_count(), 2u);
  expect_sample(t);
  // The scan of the record headers (what a reader checks the memory against before reading the
  // trace) sums the events' raw sizes as the read trace does.
  const TraceFile::Scan scan = TraceFile::scan(p);
  EXPECT_EQ(scan.streams, 2u);
  EXPECT_EQ(scan.event_bytes, t.stream_bytes(0) + t.stream_bytes(1));
  EXPECT_EQ(scan.event_bytes, 2 * sample_stream().size());
  unlink(p.c_str());
}

TEST(Trace, RoundTripLz4AndMultipleStreams) {
  std::string p = write_temp(file_with({sample_stream(), sample_stream()}, true, Compression::Lz4));
  TraceFile t = TraceFile::open(p);
  EXPECT_EQ(t.stream_count(), 2u);
  expect_sample(t);
  EXPECT_EQ(t.stream(1), sample_stream());
  unlink(p.c_str());
}

TEST(Trace, KilledProgramMeansIncomplete) {
  std::vector<uint8_t> bytes = file_with({sample_stream()}, false, Compression::Zstd);
  append_launch_status(bytes);  // no Finish record, but the launcher saw the program die
  std::string p = write_temp(bytes);
  TraceFile t = TraceFile::open(p);
  EXPECT_FALSE(t.complete());
  ASSERT_TRUE(t.has_launch_status());
  int signal = t.launch_status().signal;  // a packed field: no reference to it
  EXPECT_EQ(signal, 9);
  expect_sample(t);
  unlink(p.c_str());
}

// Neither the recorder's end nor the launcher's exit status: `tasklens record` was killed with
// its program (SIGKILL). What ends at a record boundary is whole: it is read, as incomplete.
TEST(Trace, CutAtARecordBoundaryWithoutAnEndIsReadAsIncomplete) {
  std::string p = write_temp(file_with({sample_stream()}, false, Compression::Zstd));
  TraceFile t = TraceFile::open(p);
  EXPECT_FALSE(t.complete());
  EXPECT_FALSE(t.has_finish());
  EXPECT_FALSE(t.has_launch_status());
  expect_sample(t);
  unlink(p.c_str());
}

TEST(Trace, FileCutInsideARecordIsRefusedButItsWholePrefixIsKnown) {
  std::vector<uint8_t> whole = file_with({sample_stream()}, true, Compression::None);
  std::vector<uint8_t> bytes = whole;
  bytes.resize(bytes.size() - 5);  // the Finish record loses its end
  std::string p = write_temp(bytes);
  try {
    TraceFile::open(p);
    ADD_FAILURE() << "a file cut inside a record was accepted";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
  // What the launcher cuts it back to: everything before the broken Finish record.
  TraceFile::Scan scan = TraceFile::scan(p);
  uint64_t prefix = scan.whole_bytes;
  EXPECT_EQ(prefix, whole.size() - sizeof(RecordHeader) - sizeof(Finish));
  EXPECT_EQ(scan.file_bytes, bytes.size());
  EXPECT_FALSE(scan.has_finish);  // it was the cut record
  EXPECT_EQ(scan.streams, 1u);
  bytes.resize(prefix);
  append_launch_status(bytes);  // what the launcher does after cutting
  unlink(p.c_str());
  p = write_temp(bytes);
  TraceFile t = TraceFile::open(p);
  EXPECT_FALSE(t.complete());
  expect_sample(t);
  unlink(p.c_str());
}

// A stream whose SyncEnd events come at the given times (ticks after the file's start).
std::vector<uint8_t> stream_at(const std::vector<uint64_t>& times) {
  StreamWriter w;
  for (uint64_t t : times) {
    w.begin(EventKind::SyncEnd, 1000 + t);
    w.varint(5);
    w.put_id(7);
    w.put_ptr(0x1000);
  }
  return w.bytes;
}

// Decodes every stream of `file` to its end; the message of the TraceError, or "" if none.
std::string decode_all(const std::vector<uint8_t>& file) {
  std::string p = write_temp(file);
  std::string error;
  try {
    TraceFile t = TraceFile::open(p);
    for (uint32_t i = 0; i < t.stream_count(); ++i) {
      EventDecoder d = t.decoder(i);
      Event e;
      while (d.next(e)) {
      }
    }
  } catch (const TraceError& e) {
    error = e.what();
  }
  unlink(p.c_str());
  return error;
}

// A damaged time delta must not wrap the clock, nor carry the work summed over every thread past
// 64 bits (the fuzzer found a strand that ended before it began, and a span larger than the
// work): 2^63 ticks are shared among the streams, beyond that the stream is corrupted.
TEST(Trace, ClockRunningPastWhatARecordingHoldsIsCorrupted) {
  const uint64_t quarter = uint64_t{1} << 61;
  // One stream: up to 2^63 ticks is fine, past it is not; nor is a wrap of the clock.
  EXPECT_EQ(decode_all(file_with({stream_at({10, 3 * quarter})}, true, Compression::None)), "");
  std::string error =
      decode_all(file_with({stream_at({10, 4 * quarter + 20})}, true, Compression::None));
  EXPECT_NE(error.find("corrupted event stream"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  error = decode_all(file_with({stream_at({10, ~uint64_t{0} - 2000})}, true, Compression::None));
  EXPECT_NE(error.find("corrupted event stream"), std::string::npos) << error;
  // Two streams share it: 2^62 each at most.
  EXPECT_EQ(decode_all(file_with({stream_at({10, quarter}), stream_at({10, quarter})}, true,
                                 Compression::Lz4)),
            "");
  error = decode_all(
      file_with({stream_at({10, quarter}), stream_at({10, 3 * quarter})}, true, Compression::Lz4));
  EXPECT_NE(error.find("corrupted event stream"), std::string::npos) << error;
}

TEST(Trace, StreamCutInsideAnEventEndsCleanly) {
  std::vector<uint8_t> s = sample_stream();
  s.resize(s.size() - 1);  // the last event loses its last byte
  std::vector<uint8_t> file = file_with({s}, false, Compression::None);
  append_launch_status(file);
  std::string p = write_temp(file);
  TraceFile t = TraceFile::open(p);
  std::vector<uint8_t> bytes = t.stream(0);
  EventDecoder d = t.decoder(bytes);
  Event e;
  int n = 0;
  while (d.next(e)) ++n;
  EXPECT_EQ(n, 3);
  EXPECT_TRUE(d.truncated());
  unlink(p.c_str());
}

// Decoding block by block (TraceFile::decoder(thread)) gives exactly the events of the whole
// stream, wherever the blocks cut the events, also for an event longer than the decoder's window
// and for a stream cut inside its last event.
void expect_same_events_both_ways(const std::vector<uint8_t>& stream, size_t block_bytes,
                                  Compression compress, bool cut_last) {
  std::vector<uint8_t> s = stream;
  if (cut_last) s.resize(s.size() - 1);
  std::vector<uint8_t> file = file_with({s}, !cut_last, compress, block_bytes);
  if (cut_last) append_launch_status(file);
  std::string p = write_temp(file);
  TraceFile t = TraceFile::open(p);
  // And with the event blocks left in the file, read back as they are decoded (a one-pass
  // reading): the same blocks, the same events.
  TraceFile f = TraceFile::open(p, /*events_in_memory=*/false);
  EXPECT_EQ(f.file_size(), file.size());
  std::vector<uint8_t> whole = t.stream(0);
  ASSERT_EQ(whole, s);
  ASSERT_EQ(f.stream(0), s);
  EventDecoder a = t.decoder(whole), b = t.decoder(0), c = f.decoder(0);
  Event x, y, z;
  size_t n = 0;
  for (;; ++n) {
    const bool got_a = a.next(x), got_b = b.next(y), got_c = c.next(z);
    ASSERT_EQ(got_a, got_b) << "event " << n << ", blocks of " << block_bytes;
    ASSERT_EQ(got_b, got_c) << "event " << n << ", blocks of " << block_bytes;
    if (!got_a) break;
    for (const Event* e : {&y, &z}) {
      ASSERT_EQ(x.kind, e->kind) << "event " << n;
      ASSERT_EQ(x.time, e->time) << "event " << n;
      ASSERT_EQ(x.metric, e->metric) << "event " << n;
      for (int i = 0; i < 5; ++i) ASSERT_EQ(x.f[i], e->f[i]) << "event " << n << " field " << i;
      ASSERT_EQ(*x.groups, *e->groups) << "event " << n;
    }
  }
  EXPECT_EQ(a.truncated(), b.truncated());
  EXPECT_EQ(b.truncated(), cut_last);
  EXPECT_EQ(c.truncated(), cut_last);
  EXPECT_GT(n, 0u);
  unlink(p.c_str());
}

TEST(Trace, BlockByBlockDecodingGivesTheWholeStreamsEvents) {
  StreamWriter w;
  uint64_t at = 1000;
  for (int i = 0; i < 20000; ++i) {  // about 270 KiB: several windows
    w.begin(EventKind::TaskCreate, at += 7 + i % 300);
    w.put_id((1ull << 40) + i);
    w.put_id((1ull << 40) + i + 1);
    w.varint(4);
    w.put_ptr(0x55550000abcdull + (i % 5) * 0x1000);
    if (i == 9000) {  // one event of 40000 groups, about 200 KiB: longer than the window
      w.begin(EventKind::Dependences, at += 3);
      w.put_id((1ull << 40) + i + 1);
      w.varint(20000);
      for (int g = 0; g < 20000; ++g) {
        w.varint(0x7fff0000ull + 8 * g);
        w.varint(g % 3 + 1);
      }
    }
  }
  const std::vector<uint8_t> stream = w.bytes;
  ASSERT_GT(stream.size(), 4 * 65536u);
  for (size_t block : {size_t{1} << 20, size_t{65536}, size_t{4093}, size_t{97}})
    for (Compression c : {Compression::None, Compression::Lz4, Compression::Zstd})
      for (bool cut : {false, true}) expect_same_events_both_ways(stream, block, c, cut);
  // Tiny blocks and streams: a block of one byte, a stream of one event.
  expect_same_events_both_ways(sample_stream(), 1, Compression::None, false);
  expect_same_events_both_ways(sample_stream(), 1, Compression::Lz4, true);
  expect_same_events_both_ways(sample_stream(), 3, Compression::Zstd, true);
}

// A trace whose event blocks are left in the file and read back as they are decoded: a file cut
// or shortened after it was opened is an error that says so, not a crash.
TEST(Trace, AFileCutAfterItWasOpenedIsAnErrorWhenItsBlocksAreReadBack) {
  StreamWriter w;
  uint64_t at = 1000;
  for (int i = 0; i < 5000; ++i) {
    w.begin(EventKind::TaskCreate, at += 7 + i % 300);
    w.put_id((1ull << 40) + i);
    w.put_id((1ull << 40) + i + 1);
    w.varint(4);
    w.put_ptr(0x55550000abcdull);
  }
  const std::vector<uint8_t> file = file_with({w.bytes}, true, Compression::Zstd, 4096);
  const std::string p = write_temp(file);
  TraceFile f = TraceFile::open(p, /*events_in_memory=*/false);
  ASSERT_EQ(truncate(p.c_str(), static_cast<off_t>(file.size() / 2)), 0);
  try {
    f.stream(0);
    ADD_FAILURE() << "the cut file's blocks were read back";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("the file changed while it was read"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
  unlink(p.c_str());
}

TEST(Trace, BadInputGetsOneLineErrorsNamingTheFile) {
  expect_error({}, "empty");
  expect_error({1, 2, 3}, "too short");
  std::vector<uint8_t> good = file_with({sample_stream()}, true, Compression::Zstd);
  std::vector<uint8_t> bad_magic = good;
  bad_magic[0] = 'X';
  expect_error(bad_magic, "bad magic");
  std::vector<uint8_t> bad_version = good;
  bad_version[8] = 9;
  expect_error(bad_version, "version 9");
  std::vector<uint8_t> no_schema(good.begin(), good.begin() + sizeof(FileHeader));
  expect_error(no_schema, "schema");
  // Corrupt the compressed event data of the first event block, zstd and LZ4; then give it a
  // compression this reader does not know.
  auto first_block = [](std::vector<uint8_t>& bytes) {
    size_t pos = sizeof(FileHeader);
    for (;;) {
      RecordHeader rh;
      std::memcpy(&rh, bytes.data() + pos, sizeof rh);
      if (rh.type == static_cast<uint32_t>(RecordType::EventBlock)) return pos;
      pos += rh.size;
    }
  };
  for (Compression c : {Compression::Zstd, Compression::Lz4}) {
    std::vector<uint8_t> bad_block = file_with({sample_stream()}, true, c);
    size_t pos = first_block(bad_block);
    RecordHeader rh;
    std::memcpy(&rh, bad_block.data() + pos, sizeof rh);
    for (size_t i = pos + sizeof rh + sizeof(EventBlockHeader); i < pos + rh.size; ++i)
      bad_block[i] ^= 0x5a;
    expect_error(bad_block, "corrupted event block");
  }
  // A block size its data cannot hold is refused when the file is opened: decompressing into it
  // would first allocate and zero up to 4 GiB (the damaged-trace tests ran for minutes).
  for (Compression c : {Compression::None, Compression::Zstd, Compression::Lz4}) {
    std::vector<uint8_t> big = file_with({sample_stream()}, true, c);
    const uint32_t huge = 0xfffffff0u;
    std::memcpy(
        big.data() + first_block(big) + sizeof(RecordHeader) + offsetof(EventBlockHeader, raw_size),
        &huge, sizeof huge);
    const std::string p = write_temp(big);
    try {
      TraceFile::open(p);
      ADD_FAILURE() << "a block of 4 GiB opened, compression " << int(c);
    } catch (const TraceError& e) {
      EXPECT_NE(std::string(e.what()).find("corrupted event block"), std::string::npos) << e.what();
    }
    unlink(p.c_str());
  }
  std::vector<uint8_t> unknown = good;
  unknown[first_block(unknown) + sizeof(RecordHeader) + offsetof(EventBlockHeader, compression)] =
      7;
  expect_error(unknown, "unknown compression 7");
  // A record whose size is smaller than its header.
  std::vector<uint8_t> bad_record = good;
  RecordHeader tiny{1, 3};
  std::memcpy(bad_record.data() + sizeof(FileHeader), &tiny, sizeof tiny);
  expect_error(bad_record, "corrupted record");
}

TEST(Trace, MissingFileSaysHowToMakeOne) {
  try {
    TraceFile::open("/nonexistent/dir/x.tlens");
    ADD_FAILURE();
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/x.tlens"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("tasklens record"), std::string::npos);
  }
}

TEST(Trace, ADirectoryIsRefusedWithOneLine) {
  try {
    TraceFile::open("/tmp");
    ADD_FAILURE();
  } catch (const TraceError& e) {
    EXPECT_EQ(std::string(e.what()).find("/tmp: is a directory"), 0u) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

// A trace read through a pipe (its size is not known in advance) reads like the file.
TEST(Trace, ATraceThroughAPipeReadsLikeTheFile) {
  const std::vector<uint8_t> bytes =
      file_with({sample_stream(), sample_stream()}, true, Compression::Lz4);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::thread feeder([&] {
    size_t at = 0;
    while (at < bytes.size()) {  // in pieces, like a slow producer
      ssize_t n = write(fds[1], bytes.data() + at, std::min<size_t>(1000, bytes.size() - at));
      if (n <= 0) break;
      at += static_cast<size_t>(n);
    }
    close(fds[1]);
  });
  TraceFile t = TraceFile::open("/proc/self/fd/" + std::to_string(fds[0]));
  feeder.join();
  close(fds[0]);
  EXPECT_EQ(t.file_size(), bytes.size());
  EXPECT_EQ(t.stream_count(), 2u);
  expect_sample(t);
}

TEST(Trace, PreemptionIntervalsAreSortedAndMerged) {
  std::vector<uint8_t> bytes = file_with({sample_stream()}, true, Compression::None);
  uint32_t header[2] = {0, 4};
  uint64_t pairs[8] = {500, 600, 100, 200, 150, 250, 590, 700};  // unsorted, overlapping
  append_record(bytes, RecordType::Preemptions, header, sizeof header, pairs, sizeof pairs);
  std::string p = write_temp(bytes);
  TraceFile t = TraceFile::open(p);
  ASSERT_EQ(t.preemptions().size(), 1u);
  std::vector<std::pair<uint64_t, uint64_t>> expected = {{100, 250}, {500, 700}};
  EXPECT_EQ(t.preemptions()[0], expected);
  unlink(p.c_str());
}

// The recorder writes each thread's intervals a drain at a time, in time order: a cursor reads
// them one record at a time, from the file itself when the events are left there, merging what
// overlaps or touches across records, and skipping empty ones; the whole lists are the same.
TEST(Trace, OffCpuIntervalsAreReadARecordAtATime) {
  std::vector<uint8_t> bytes = file_with({sample_stream()}, true, Compression::None);
  auto add = [&](RecordType type, uint32_t thread, std::vector<uint64_t> pairs) {
    uint32_t header[2] = {thread, static_cast<uint32_t>(pairs.size() / 2)};
    append_record(bytes, type, header, sizeof header, pairs.data(), pairs.size() * 8);
  };
  add(RecordType::Preemptions, 1, {100, 200, 300, 400});
  add(RecordType::Blocked, 1, {150, 160});
  add(RecordType::Preemptions, 1, {400, 450, 460, 460, 500, 520});  // touches; empty
  add(RecordType::Preemptions, 1, {510, 600, 700, 800});            // overlaps across records
  add(RecordType::Preemptions, 0, {});
  std::string p = write_temp(bytes);
  using Pairs = std::vector<std::pair<uint64_t, uint64_t>>;
  const Pairs expected = {{100, 200}, {300, 450}, {500, 600}, {700, 800}};
  for (bool in_memory : {true, false}) {
    TraceFile t = TraceFile::open(p, in_memory);
    EXPECT_EQ(t.off_cpu_threads(trace::OffCpuKind::Preempted), 2u);
    EXPECT_EQ(t.off_cpu_threads(trace::OffCpuKind::SlowFault), 0u);
    trace::OffCpuCursor c = t.off_cpu(trace::OffCpuKind::Preempted, 1);
    Pairs read;
    uint64_t b, e;
    while (c.next(b, e)) read.emplace_back(b, e);
    EXPECT_EQ(read, expected) << in_memory;
    EXPECT_FALSE(c.next(b, e));
    EXPECT_EQ(t.preemptions(), (trace::Intervals{{}, expected})) << in_memory;
    EXPECT_EQ(t.blocked(), (trace::Intervals{{}, {{150, 160}}})) << in_memory;
    EXPECT_TRUE(t.slow_faults().empty());
    trace::OffCpuCursor none = t.off_cpu(trace::OffCpuKind::Preempted, 7);
    EXPECT_FALSE(none.next(b, e));
  }
  unlink(p.c_str());
}

// A RegionNames payload: u32 count, then count x {u32 id, u32 size, name bytes}.
std::vector<uint8_t> region_names_payload(
    const std::vector<std::pair<uint32_t, std::string>>& names) {
  std::vector<uint8_t> p(4);
  uint32_t count = static_cast<uint32_t>(names.size());
  std::memcpy(p.data(), &count, 4);
  for (const auto& [id, name] : names) {
    uint32_t head[2] = {id, static_cast<uint32_t>(name.size())};
    const auto* h = reinterpret_cast<const uint8_t*>(head);
    p.insert(p.end(), h, h + sizeof head);
    p.insert(p.end(), name.begin(), name.end());
  }
  return p;
}

TEST(Trace, RegionEventsAndNamesRoundTrip) {
  // Region events between other events: their name id is a plain varint that must not disturb
  // the id and ptr delta chains of the events around them.
  StreamWriter w;
  w.begin(EventKind::TaskCreate, 1500);
  w.put_id((1ull << 40) + 5);
  w.put_id((1ull << 40) + 6);
  w.varint(4);
  w.put_ptr(0x55550000abcdull);
  w.begin(EventKind::RegionBegin, 1550);
  w.varint(2);
  w.begin(EventKind::RegionBegin, 1560);
  w.varint(300);  // a two-byte varint
  w.begin(EventKind::RegionEnd, 1570);
  w.varint(300);
  w.begin(EventKind::TaskSchedule, 1600);
  w.put_id((1ull << 40) + 5);
  w.varint(7);
  w.put_id((1ull << 40) + 6);
  w.begin(EventKind::RegionEnd, 1700);
  w.varint(2);
  std::vector<uint8_t> bytes = file_with({w.bytes}, false, Compression::Zstd);
  // Names arrive in several records, in any order, some after the events that use them (the
  // recorder writes one per name as it first sees it); id 1 is named by none.
  std::vector<uint8_t> first = region_names_payload({{2, "solve"}, {0, ""}});
  std::vector<uint8_t> second = region_names_payload({{300, "inner \xc3\xa9 region"}});
  append_record(bytes, RecordType::RegionNames, first.data(), first.size());
  append_record(bytes, RecordType::RegionNames, second.data(), second.size());
  Finish f{};
  append_record(bytes, RecordType::Finish, &f, sizeof f);
  std::string p = write_temp(bytes);
  TraceFile t = TraceFile::open(p);
  const std::vector<std::string>& names = t.region_names();
  ASSERT_EQ(names.size(), 301u);
  EXPECT_EQ(names[0], "");
  EXPECT_EQ(names[1], "");
  EXPECT_EQ(names[2], "solve");
  EXPECT_EQ(names[300], "inner \xc3\xa9 region");
  std::vector<uint8_t> s = t.stream(0);
  EventDecoder d = t.decoder(s);
  Event e;
  ASSERT_TRUE(d.next(e));
  EXPECT_EQ(e.kind, EventKind::TaskCreate);
  struct Want {
    EventKind kind;
    uint64_t time, field;
  };
  for (const Want& want :
       {Want{EventKind::RegionBegin, 1550, 2}, Want{EventKind::RegionBegin, 1560, 300},
        Want{EventKind::RegionEnd, 1570, 300}}) {
    ASSERT_TRUE(d.next(e));
    EXPECT_EQ(e.kind, want.kind);
    EXPECT_EQ(e.time, want.time);
    EXPECT_EQ(e.f[0], want.field);
    EXPECT_EQ(e.f[1], 0u);
  }
  ASSERT_TRUE(d.next(e));
  EXPECT_EQ(e.kind, EventKind::TaskSchedule);
  EXPECT_EQ(e.f[0], (1ull << 40) + 5);
  EXPECT_EQ(e.f[2], (1ull << 40) + 6);
  ASSERT_TRUE(d.next(e));
  EXPECT_EQ(e.kind, EventKind::RegionEnd);
  EXPECT_EQ(e.f[0], 2u);
  EXPECT_FALSE(d.next(e));
  EXPECT_FALSE(d.truncated());
  EXPECT_STREQ(to_string(EventKind::RegionBegin), "region-begin");
  EXPECT_STREQ(to_string(EventKind::RegionEnd), "region-end");
  unlink(p.c_str());
}

TEST(Trace, TraceWithoutRegionsHasNoRegionNames) {
  std::string p = write_temp(file_with({sample_stream()}, true, Compression::None));
  EXPECT_TRUE(TraceFile::open(p).region_names().empty());
  unlink(p.c_str());
}

TEST(Trace, MalformedRegionNamesAreRefused) {
  auto with = [](const std::vector<uint8_t>& payload) {
    std::vector<uint8_t> bytes = file_with({sample_stream()}, true, Compression::None);
    append_record(bytes, RecordType::RegionNames, payload.data(), payload.size());
    return bytes;
  };
  const std::string what = "corrupted region names record";
  expect_error(with({1, 0}), what);  // shorter than its count
  std::vector<uint8_t> cut_name = region_names_payload({{0, "solve"}});
  cut_name.pop_back();
  expect_error(with(cut_name), what);
  std::vector<uint8_t> more = region_names_payload({{0, "a"}, {1, "b"}});
  uint32_t three = 3;  // claims one entry more than there is
  std::memcpy(more.data(), &three, 4);
  expect_error(with(more), what);
  std::vector<uint8_t> fewer = region_names_payload({{0, "a"}, {1, "b"}});
  uint32_t one = 1;  // leaves bytes after its entries
  std::memcpy(fewer.data(), &one, 4);
  expect_error(with(fewer), what);
  expect_error(with(region_names_payload({{kMaxRegionNames, "far"}})), "out of range");
  expect_error(with(region_names_payload({{4, "one"}, {4, "other"}})), "two different names");
  // The same name twice for one id is no contradiction.
  std::string p = write_temp(with(region_names_payload({{4, "one"}, {4, "one"}})));
  EXPECT_EQ(TraceFile::open(p).region_names().at(4), "one");
  unlink(p.c_str());
}

}  // namespace
}  // namespace tasklens::trace
