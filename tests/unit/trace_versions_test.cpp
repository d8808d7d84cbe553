// Trace files of earlier format versions, and files of several metrics (version 3): what they
// hold still reads, and their bad headers are refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "trace/format.hpp"
#include "trace/reader.hpp"
#include "trace_stream_writer.hpp"

namespace tasklens::trace {
namespace {

// Files of format version 1 (five-byte schema entries, no data addresses) still read.
TEST(Trace, Version1FilesStillRead) {
  std::vector<uint8_t> schema(4);
  uint32_t count = 0;
  for (int k = 1; k <= static_cast<int>(EventKind::RegionEnd); ++k, ++count)
    schema.insert(schema.end(),
                  {static_cast<uint8_t>(k), kEventShapes[k].fixed, kEventShapes[k].repeated,
                   kEventShapes[k].id_mask, kEventShapes[k].ptr_mask});
  std::memcpy(schema.data(), &count, 4);
  StreamWriter w;
  w.begin(EventKind::TaskCreate, 1500);
  w.put_id((1ull << 40) + 5);
  w.put_id((1ull << 40) + 6);
  w.varint(4);
  w.put_ptr(0x55550000abcdull);
  FileHeader h = make_file_header(1, 1000, 0, Metric::Tsc);
  h.version_major = 1;
  std::vector<uint8_t> out(reinterpret_cast<uint8_t*>(&h), reinterpret_cast<uint8_t*>(&h + 1));
  append_record(out, RecordType::EventSchema, schema.data(), schema.size());
  EventBlockHeader bh{};
  bh.raw_size = static_cast<uint32_t>(w.bytes.size());
  append_record(out, RecordType::EventBlock, &bh, sizeof bh, w.bytes.data(), w.bytes.size());
  append_launch_status(out);
  std::string p = write_temp(out);
  TraceFile t = TraceFile::open(p);
  std::vector<uint8_t> bytes = t.stream(0);
  EventDecoder d = t.decoder(bytes);
  Event e;
  ASSERT_TRUE(d.next(e));
  EXPECT_EQ(e.kind, EventKind::TaskCreate);
  EXPECT_EQ(e.f[1], (1ull << 40) + 6);
  EXPECT_EQ(e.f[3], 0x55550000abcdull);
  unlink(p.c_str());
}

// ------------------------------------------------------------------ several metrics (version 3)

// A file of `metrics` (version 3, or `version` 2 with a 48-byte header) holding one stream.
std::vector<uint8_t> metrics_file(const std::vector<Metric>& metrics,
                                  const std::vector<uint8_t>& stream, uint16_t version = 3,
                                  const std::vector<uint8_t>& schema = make_schema_payload()) {
  FileHeader h = make_file_header(1, 1000, 0, metrics);
  h.version_major = version;
  size_t size = sizeof h;
  if (version < 3) h.header_size = size = kFileHeaderV2Size;
  std::vector<uint8_t> out(reinterpret_cast<uint8_t*>(&h), reinterpret_cast<uint8_t*>(&h) + size);
  append_record(out, RecordType::EventSchema, schema.data(), schema.size());
  uint32_t unknown = 0xbeef;  // a record type from the future: skipped
  append_record(out, static_cast<RecordType>(77), &unknown, 4);
  EventBlockHeader bh{};
  bh.raw_size = static_cast<uint32_t>(stream.size());
  append_record(out, RecordType::EventBlock, &bh, sizeof bh, stream.data(), stream.size());
  append_launch_status(out);
  return out;
}

// An event with no fields (ThreadEnd) at `at`, carrying the given metric deltas.
void counted_event(StreamWriter& w, uint64_t at, std::initializer_list<uint64_t> deltas) {
  w.begin(EventKind::ThreadEnd, at);
  for (uint64_t d : deltas) w.varint(d);
}

TEST(Trace, MetricNamesArePerfsWithItsAliases) {
  for (int i = 0; i < kMetricCount; ++i) {
    Metric m = static_cast<Metric>(i), back;
    std::string name = to_string(m);
    ASSERT_TRUE(metric_from_name(name.data(), name.size(), back)) << name;
    EXPECT_EQ(back, m) << name;
  }
  const std::pair<const char*, Metric> aliases[] = {{"cpu-cycles", Metric::Cycles},
                                                    {"branch-instructions", Metric::Branches},
                                                    {"faults", Metric::PageFaults},
                                                    {"cs", Metric::ContextSwitches},
                                                    {"migrations", Metric::CpuMigrations}};
  for (auto [alias, metric] : aliases) {
    Metric m;
    ASSERT_TRUE(metric_from_name(alias, std::strlen(alias), m)) << alias;
    EXPECT_EQ(m, metric) << alias;
  }
  Metric m;
  EXPECT_FALSE(metric_from_name("task-clocks", 11, m));
  EXPECT_FALSE(metric_from_name("tsc", 2, m));  // a prefix is no name
  EXPECT_EQ(std::string(to_string(Metric::StalledCyclesBackend)), "stalled-cycles-backend");
}

// Version 3: a delta per metric other than the TSC, in the header's order; the TSC metric's
// value is the time. An unknown record and an unknown event kind are skipped with the deltas.
TEST(Trace, Version3EventsCarryADeltaPerNonTscMetric) {
  std::vector<uint8_t> schema = make_schema_payload();
  uint32_t count;
  std::memcpy(&count, schema.data(), 4);
  ++count;
  std::memcpy(schema.data(), &count, 4);
  schema.insert(schema.end(), {90, 1, 0, 0, 0, 0});  // kind 90: one plain field
  StreamWriter w;
  counted_event(w, 1100, {500, 2});
  w.bytes.push_back(90);  // the unknown kind: dtime, two metric deltas, its field
  w.varint(50);
  w.time = 1150;
  w.varint(70);
  w.varint(1);
  w.varint(12345);
  counted_event(w, 1400, {300, 0});
  const std::vector<Metric> metrics{Metric::TaskClock, Metric::Tsc, Metric::PageFaults};
  std::string p = write_temp(metrics_file(metrics, w.bytes, 3, schema));
  TraceFile t = TraceFile::open(p);
  EXPECT_EQ(t.metrics(), metrics);
  EXPECT_EQ(t.metric(), Metric::TaskClock);
  EXPECT_EQ(t.header().version_major, 3);  // version 4 streams read the same (plus kinds)
  std::vector<uint8_t> bytes = t.stream(0);
  EventDecoder d = t.decoder(bytes);
  Event e;
  ASSERT_TRUE(d.next(e));
  EXPECT_EQ(e.time, 1100u);
  EXPECT_EQ(e.metric, 500u);
  EXPECT_EQ(e.values[0], 500u);
  EXPECT_EQ(e.values[1], 1100u);
  EXPECT_EQ(e.values[2], 2u);
  ASSERT_TRUE(d.next(e));  // the unknown event's deltas count
  EXPECT_EQ(e.time, 1400u);
  EXPECT_EQ(e.values[0], 870u);
  EXPECT_EQ(e.values[1], 1400u);
  EXPECT_EQ(e.values[2], 3u);
  EXPECT_FALSE(d.next(e));
  EXPECT_FALSE(d.truncated());
  unlink(p.c_str());
}

// The TSC first: events carry only the others' deltas; an event cut inside its deltas (a
// killed program) ends the stream cleanly.
TEST(Trace, Version3WithTheTscPrimaryAndACutEvent) {
  StreamWriter w;
  counted_event(w, 1010, {7, 9});
  w.begin(EventKind::ThreadEnd, 1020);
  w.varint(1);  // the second delta is missing
  const std::vector<Metric> metrics{Metric::Tsc, Metric::Instructions, Metric::ContextSwitches};
  std::string p = write_temp(metrics_file(metrics, w.bytes));
  TraceFile t = TraceFile::open(p);
  std::vector<uint8_t> bytes = t.stream(0);
  EventDecoder d = t.decoder(bytes);
  Event e;
  ASSERT_TRUE(d.next(e));
  EXPECT_EQ(e.metric, 1010u);
  EXPECT_EQ(e.values[1], 7u);
  EXPECT_EQ(e.values[2], 9u);
  EXPECT_FALSE(d.next(e));
  EXPECT_TRUE(d.truncated());
  unlink(p.c_str());
}

// Version 2 (48-byte header, one metric, a delta only when it is not the TSC) still reads.
TEST(Trace, Version2FilesWithACounterMetricStillRead) {
  StreamWriter w;
  counted_event(w, 1100, {40});
  counted_event(w, 1300, {2});
  std::string p = write_temp(metrics_file({Metric::TaskClock}, w.bytes, 2));
  TraceFile t = TraceFile::open(p);
  EXPECT_EQ(t.metrics(), std::vector<Metric>{Metric::TaskClock});
  std::vector<uint8_t> bytes = t.stream(0);
  EventDecoder d = t.decoder(bytes);
  Event e;
  ASSERT_TRUE(d.next(e));
  ASSERT_TRUE(d.next(e));
  EXPECT_EQ(e.time, 1300u);
  EXPECT_EQ(e.metric, 42u);
  EXPECT_EQ(e.values[0], 42u);
  EXPECT_FALSE(d.next(e));
  EXPECT_FALSE(d.truncated());
  unlink(p.c_str());
}

TEST(Trace, BadMetricListsInTheHeaderAreRefused) {
  StreamWriter w;
  counted_event(w, 1100, {1});
  auto with_header = [&](auto edit) {
    std::vector<uint8_t> f = metrics_file({Metric::Tsc, Metric::TaskClock}, w.bytes);
    FileHeader h;
    std::memcpy(&h, f.data(), sizeof h);
    edit(h);
    std::memcpy(f.data(), &h, sizeof h);
    return f;
  };
  expect_error(with_header([](FileHeader& h) { h.metric_count = 0; }), "0 metrics");
  expect_error(with_header([](FileHeader& h) { h.metric_count = kMaxMetrics + 1; }), "metrics");
  expect_error(with_header([](FileHeader& h) { h.metrics[1] = kMetricCount; }), "unknown metric");
  expect_error(with_header([](FileHeader& h) { h.metrics[1] = 0; }), "tsc listed twice");
  expect_error(with_header([](FileHeader& h) { h.metric = 3; }), "primary metric");
  // Version 3 with a version 2 header: the metric list is missing.
  expect_error(with_header([](FileHeader& h) { h.header_size = kFileHeaderV2Size; }),
               "corrupted file header");
}

// ------------------------------------------------------------------ minor versions of 4

// A file of version 4.`minor` whose schema holds the kinds 1 to `last_kind`, and one stream.
std::vector<uint8_t> minor_file(uint16_t minor, int last_kind, const std::vector<uint8_t>& stream) {
  std::vector<uint8_t> schema = make_schema_payload();
  const uint32_t count = static_cast<uint32_t>(last_kind);
  std::memcpy(schema.data(), &count, 4);
  schema.resize(4 + 6 * count);  // six bytes per kind, in kind order
  FileHeader h = make_file_header(1, 1000, 0, Metric::Tsc);
  h.version_minor = minor;
  return one_stream_file(h, schema, stream);
}

// Version 4.8 added parallel_pipeline's events (tbb-pipeline, tbb-filter-begin/-end), each an
// addr field: a 4.7 file, whose schema ends at tbb-node-body, still reads, and the new events
// decode with their addresses, deltas against the previous data address (a spawn's group).
TEST(Trace, Version47FilesReadAndThePipelineEventsOf48DecodeWithTheirAddresses) {
  const uint64_t task = (1ull << 40) + 2, ctx = 0x7ffd00001000, filter = 0x55550002a000;
  for (uint16_t minor : {uint16_t{7}, uint16_t{8}}) {
    SCOPED_TRACE(minor);
    StreamWriter w;
    w.begin(EventKind::TbbSpawn, 1100);
    w.put_id((1ull << 40) + 1);
    w.put_id(task);
    w.put_addr(ctx);
    w.varint(7 | 0x80);
    w.put_ptr(0x555500001234);
    if (minor >= 8) {
      w.begin(EventKind::TbbPipeline, 1100);
      w.put_addr(ctx);
      w.begin(EventKind::TbbFilterBegin, 1200);
      w.put_addr(filter);
      w.begin(EventKind::TbbFilterEnd, 1300);
      w.put_addr(filter);
    }
    w.begin(EventKind::TbbNodeBody, 1400);
    w.put_id(task);
    w.put_addr(0x55550003b000);
    w.varint(1);
    const int last_kind =
        static_cast<int>(minor >= 8 ? EventKind::TbbFilterEnd : EventKind::TbbNodeBody);
    std::string p = write_temp(minor_file(minor, last_kind, w.bytes));
    TraceFile t = TraceFile::open(p);
    EXPECT_EQ(t.header().version_minor, minor);
    std::vector<uint8_t> bytes = t.stream(0);
    EventDecoder d = t.decoder(bytes);
    Event e;
    ASSERT_TRUE(d.next(e));
    EXPECT_EQ(e.kind, EventKind::TbbSpawn);
    EXPECT_EQ(e.f[2], ctx);
    if (minor >= 8) {
      const std::pair<EventKind, uint64_t> runs[] = {{EventKind::TbbPipeline, ctx},
                                                     {EventKind::TbbFilterBegin, filter},
                                                     {EventKind::TbbFilterEnd, filter}};
      for (auto [kind, address] : runs) {
        ASSERT_TRUE(d.next(e));
        EXPECT_EQ(e.kind, kind);
        EXPECT_EQ(e.f[0], address);
      }
      EXPECT_EQ(std::string(to_string(EventKind::TbbFilterBegin)), "tbb-filter-begin");
    }
    ASSERT_TRUE(d.next(e));
    EXPECT_EQ(e.kind, EventKind::TbbNodeBody);
    EXPECT_EQ(e.time, 1400u);
    EXPECT_EQ(e.f[1], 0x55550003b000u);
    EXPECT_FALSE(d.next(e));
    EXPECT_FALSE(d.truncated());
    unlink(p.c_str());
  }
}

TEST(Trace, VarintAndZigzag) {
  for (int64_t v :
       std::vector<int64_t>{0, 1, -1, 63, -64, 1LL << 40, -(1LL << 62), INT64_MAX, INT64_MIN})
    EXPECT_EQ(unzigzag(zigzag(v)), v);
  uint8_t buf[10];
  EXPECT_EQ(put_varint(buf, 127) - buf, 1);
  EXPECT_EQ(put_varint(buf, 128) - buf, 2);
  EXPECT_EQ(put_varint(buf, UINT64_MAX) - buf, 10);
}

}  // namespace
}  // namespace tasklens::trace
