// The trace's event encoding as the reader decodes it: the schema's unknown kinds and fields,
// the delta chains (ids, code and data addresses, depend addresses by position) and oneTBB's
// compact forms (src/trace/event_decoder.cpp). The container and bad input: trace_test.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "trace/format.hpp"
#include "trace/reader.hpp"
#include "trace_builder.hpp"
#include "trace_stream_writer.hpp"

namespace tasklens::trace {
namespace {

TEST(TraceEvents, UnknownEventKindInTheSchemaIsSkipped) {
  // A writer from the future adds kind 77 with two fields and tells us so in its schema.
  StreamWriter w;
  w.bytes.push_back(77);
  w.varint(10);
  w.put_id(123456);  // the reader must follow the id chain through the unknown event
  w.varint(1);
  // The first delta assumed a start of 1000; the extra event advanced time by 10.
  w.begin(EventKind::TaskCreate, 1500);
  w.put_id((1ull << 40) + 5);
  w.put_id((1ull << 40) + 6);
  w.varint(4);
  w.put_ptr(0x55550000abcdull);
  // (Kind 77's field 0 is an id: id mask 0x1.)
  const std::vector<Event> events = read_with_schema_extras({{77, 2, 0, 0x1, 0, 0}}, w.bytes);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, EventKind::TaskCreate);
  EXPECT_EQ(events[0].time, 1520u);
  EXPECT_EQ(events[0].f[0], (1ull << 40) + 5);
}

// An event's fields past its kind's are zero, also after an event with more fields: here an
// unknown kind with five, then a TaskCreate (four) and a TaskSchedule (three).
TEST(TraceEvents, FieldsPastAnEventsOwnAreZero) {
  StreamWriter w;
  w.bytes.push_back(78);
  w.varint(10);
  for (int i = 0; i < 5; ++i) w.varint(100 + i);
  w.begin(EventKind::TaskCreate, 1020);
  w.put_id((1ull << 40) + 5);
  w.put_id((1ull << 40) + 6);
  w.varint(4);
  w.put_ptr(0x55550000abcdull);
  w.begin(EventKind::TaskSchedule, 1030);
  w.put_id((1ull << 40) + 5);
  w.varint(2);
  w.put_id((1ull << 40) + 6);
  const std::vector<Event> events = read_with_schema_extras({{78, 5, 0, 0, 0, 0}}, w.bytes);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, EventKind::TaskCreate);
  EXPECT_EQ(events[0].f[2], 4u);
  EXPECT_EQ(events[0].f[3], 0x55550000abcdull);
  EXPECT_EQ(events[0].f[4], 0u) << "the unknown event's fifth field came through";
  EXPECT_EQ(events[1].kind, EventKind::TaskSchedule);
  EXPECT_EQ(events[1].f[0], (1ull << 40) + 5);
  EXPECT_EQ(events[1].f[1], 2u);
  EXPECT_EQ(events[1].f[2], (1ull << 40) + 6);
  EXPECT_EQ(events[1].f[3], 0u) << "the TaskCreate's code address came through";
  EXPECT_EQ(events[1].f[4], 0u);
}

// A damaged schema may give a known kind more fields than an event holds: it is read, its first
// five fields kept, after an event with even more (nothing is cleared past the five).
TEST(TraceEvents, AKnownKindWithMoreFieldsThanAnEventHoldsIsRead) {
  StreamWriter w;
  w.bytes.push_back(78);
  w.varint(10);
  for (int i = 0; i < 9; ++i) w.varint(100 + i);
  for (int k = 0; k < 2; ++k) {
    w.bytes.push_back(static_cast<uint8_t>(EventKind::SyncBegin));
    w.varint(10);
    for (int i = 0; i < 7; ++i) w.varint(200 + 10 * k + i);
  }
  const std::vector<Event> events = read_with_schema_extras(
      {{78, 9, 0, 0, 0, 0}, {static_cast<uint8_t>(EventKind::SyncBegin), 7, 0, 0, 0, 0}}, w.bytes);
  ASSERT_EQ(events.size(), 2u);
  for (uint64_t k = 0; k < 2; ++k) {
    EXPECT_EQ(events[k].kind, EventKind::SyncBegin);
    for (uint64_t i = 0; i < 5; ++i) EXPECT_EQ(events[k].f[i], 200 + 10 * k + i);
  }
}

// oneTBB events carry the group (a data address) and the code address in separate delta chains,
// so that stack addresses between code addresses do not make every delta long.
TEST(TraceEvents, DataAndCodeAddressesKeepTheirOwnDeltaChains) {
  StreamWriter w;
  const uint64_t group = 0x7ffe12345678ull, code = 0x5555000012ull;
  for (int i = 0; i < 3; ++i) {
    w.begin(EventKind::TbbSpawn, 1010 + i);
    w.put_id((1ull << 40) + 1);
    w.put_id((1ull << 40) + 2 + i);
    w.put_addr(group - 64 * i);
    w.varint(1);
    w.put_ptr(code + i);
  }
  std::string p = write_temp(file_with({w.bytes}, true, Compression::None));
  TraceFile t = TraceFile::open(p);
  std::vector<uint8_t> bytes = t.stream(0);
  EventDecoder d = t.decoder(bytes);
  Event e;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(d.next(e));
    EXPECT_EQ(e.kind, EventKind::TbbSpawn);
    EXPECT_EQ(e.f[2], group - 64 * i);
    EXPECT_EQ(e.f[4], code + i);
  }
  // After the first event each spawn takes a few bytes: both deltas are short.
  EXPECT_LT(w.bytes.size(), 40u);
  unlink(p.c_str());
}

// Version 4's compact oneTBB events: an end names nothing its begin gave, events inside a task's
// run leave that task out, and the decoder hands out the full forms (TaskSchedule with OMPT
// statuses, TbbSpawn, TbbWaitBegin, TbbWaitEnd), nested runs and waits too.
TEST(TraceEvents, CompactTbbEventsExpandToTheirFullForms) {
  StreamWriter w;
  const uint64_t root = 1, outer = 2, inner = 3, other = 9, group = 0x7ffe0000ull,
                 group2 = 0x7ffe0100ull, code = 0x5555ull, code2 = 0x5600ull;
  w.begin(EventKind::TbbRunBegin, 1001);  // root runs outer
  w.put_id(root);
  w.put_id(outer);
  w.begin(EventKind::TbbSpawnIn, 1002);  // outer spawns inner into group
  w.put_id(inner);
  w.put_addr(group);
  w.varint(1);
  w.put_ptr(code);
  w.begin(EventKind::TbbWaitBeginIn, 1003);  // outer waits for group...
  w.put_addr(group);
  w.put_ptr(code);
  w.begin(EventKind::TbbRunBeginIn, 1004);  // ...and runs inner meanwhile
  w.put_id(inner);
  w.begin(EventKind::TbbWaitBegin, 1005);  // a full form inside a run names its task
  w.put_id(other);
  w.put_addr(group2);
  w.put_ptr(code2);
  w.begin(EventKind::TbbWaitDone, 1006);
  w.begin(EventKind::TbbRunEnd, 1007);  // inner cancelled
  w.varint(kTaskStatusCancel);
  w.begin(EventKind::TbbWaitDone, 1008);
  w.begin(EventKind::TbbRunEnd, 1009);  // outer complete
  w.varint(kTaskStatusComplete);
  std::string p = write_temp(file_with({w.bytes}, true, Compression::Lz4));
  TraceFile t = TraceFile::open(p);
  std::vector<uint8_t> bytes = t.stream(0);
  EventDecoder d = t.decoder(bytes);
  struct Want {
    EventKind kind;
    uint64_t time, f0, f1, f2, f3 = 0, f4 = 0;
  };
  const Want want[] = {
      {EventKind::TaskSchedule, 1001, root, kTaskStatusSwitch, outer},
      {EventKind::TbbSpawn, 1002, outer, inner, group, 1, code},
      {EventKind::TbbWaitBegin, 1003, outer, group, code},
      {EventKind::TaskSchedule, 1004, outer, kTaskStatusSwitch, inner},
      {EventKind::TbbWaitBegin, 1005, other, group2, code2},
      {EventKind::TbbWaitEnd, 1006, other, group2, code2},
      {EventKind::TaskSchedule, 1007, inner, kTaskStatusCancel, outer},
      {EventKind::TbbWaitEnd, 1008, outer, group, code},
      {EventKind::TaskSchedule, 1009, outer, kTaskStatusComplete, root},
  };
  Event e;
  for (const Want& x : want) {
    ASSERT_TRUE(d.next(e));
    EXPECT_EQ(e.kind, x.kind) << x.time;
    EXPECT_EQ(e.time, x.time);
    EXPECT_EQ(e.f[0], x.f0) << x.time;
    EXPECT_EQ(e.f[1], x.f1) << x.time;
    EXPECT_EQ(e.f[2], x.f2) << x.time;
    EXPECT_EQ(e.f[3], x.f3) << x.time;
    EXPECT_EQ(e.f[4], x.f4) << x.time;
  }
  EXPECT_FALSE(d.next(e));
  unlink(p.c_str());
  // An end without its begin, or an event that leaves out its task outside of any task, is a
  // malformed stream, not a silently wrong tree.
  for (EventKind end : {EventKind::TbbRunEnd, EventKind::TbbWaitDone, EventKind::TbbSpawnIn,
                        EventKind::TbbWaitBeginIn, EventKind::TbbRunBeginIn}) {
    StreamWriter b;
    b.begin(end, 1001);
    for (uint8_t i = 0; i < kEventShapes[static_cast<int>(end)].fixed; ++i) b.varint(1);
    std::string q = write_temp(file_with({b.bytes}, true, Compression::None));
    TraceFile bad = TraceFile::open(q);
    std::vector<uint8_t> s = bad.stream(0);
    EventDecoder bd = bad.decoder(s);
    try {
      bd.next(e);
      ADD_FAILURE() << to_string(end) << " without its begin was accepted";
    } catch (const TraceError& err) {
      const std::string what = err.what();
      EXPECT_EQ(what.rfind(q + ": malformed event stream", 0), 0u) << what;  // names the file
    }
    unlink(q.c_str());
  }
}

// DependencesDelta (4.12): each group's address is a delta from the address at its position in
// the stream's previous such event; it reads as Dependences, beside the plain form (older
// traces) whose addresses do not move the chains. More than kDependenceChains groups is
// malformed.
TEST(TraceEvents, DependencesDeltaChainsTheAddressesByPosition) {
  StreamWriter w;
  auto deps = [&w](EventKind kind, uint64_t at, std::vector<std::pair<uint64_t, uint64_t>> groups) {
    w.begin(kind, at);
    w.put_id((1ull << 40) + 6);
    w.varint(groups.size());
    for (const auto& [address, type] : groups) {
      w.varint(address);
      w.varint(type);
    }
  };
  const auto z = [](int64_t d) { return zigzag(d); };
  deps(EventKind::DependencesDelta, 1100, {{z(0x7f00), 3}, {z(0x9000), 1}});
  deps(EventKind::Dependences, 1200, {{0x1234, 1}});  // plain: the chains stay
  deps(EventKind::DependencesDelta, 1300, {{z(8), 3}, {z(-0x100), 1}, {z(0x5000), 2}});
  deps(EventKind::DependencesDelta, 1400, {{z(-8), 4}});
  const std::vector<std::vector<uint64_t>> expected = {
      {0x7f00, 3, 0x9000, 1}, {0x1234, 1}, {0x7f08, 3, 0x8f00, 1, 0x5000, 2}, {0x7f00, 4}};
  std::string p = write_temp(file_with({w.bytes}, true, Compression::None));
  {
    TraceFile t = TraceFile::open(p);
    std::vector<uint8_t> s = t.stream(0);
    EventDecoder d = t.decoder(s);
    Event e;
    for (const std::vector<uint64_t>& groups : expected) {
      ASSERT_TRUE(d.next(e));
      EXPECT_EQ(e.kind, EventKind::Dependences);
      EXPECT_EQ(e.f[0], (1ull << 40) + 6);
      EXPECT_EQ(*e.groups, groups) << e.time;
    }
    EXPECT_FALSE(d.next(e));
  }
  unlink(p.c_str());

  StreamWriter bad;
  w = bad;
  deps(EventKind::DependencesDelta, 1100, {{2, 1}, {2, 1}, {2, 1}, {2, 1}});
  p = write_temp(file_with({w.bytes}, true, Compression::None));
  TraceFile t = TraceFile::open(p);
  std::vector<uint8_t> s = t.stream(0);
  EventDecoder d = t.decoder(s);
  Event e;
  try {
    d.next(e);
    ADD_FAILURE() << "a dependences_delta of 4 groups was accepted";
  } catch (const TraceError& err) {
    EXPECT_NE(std::string(err.what()).find("malformed event stream: a dependences_delta"),
              std::string::npos)
        << err.what();
  }
  unlink(p.c_str());

  // A schema that gives the kind no groups is refused too, not read as a task without
  // dependences.
  StreamWriter none;
  none.begin(EventKind::DependencesDelta, 1100);
  none.put_id((1ull << 40) + 6);
  none.varint(0);
  try {
    read_with_schema_extras({{46, 2, 0, 0x1, 0, 0}}, none.bytes);
    ADD_FAILURE() << "a dependences_delta without groups in the schema was accepted";
  } catch (const TraceError& err) {
    EXPECT_NE(std::string(err.what()).find("a dependences_delta event with 0 groups of 0"),
              std::string::npos)
        << err.what();
  }
}

}  // namespace
}  // namespace tasklens::trace
