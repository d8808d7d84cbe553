// Raw events (src/recorder/raw_events.hpp): what the program's threads store, encoded by the
// writer into the trace's varint form. The encoding must give, byte for byte, what the recorder
// wrote on the program's thread before (the reference below), whatever the kinds, values, clock
// steps and block boundaries, so that readers and old traces see no change.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "recorder/raw_events.hpp"
#include "trace/format.hpp"
#include "trace/reader.hpp"

namespace tasklens {
namespace {

using recorder::kSameTime;
using recorder::put_raw;
using recorder::raw_head;
using trace::EventKind;
using trace::EventShape;

// One event as a callback has it: absolute values.
struct Plain {
  EventKind kind;
  uint64_t tsc;
  bool same_time;
  std::vector<uint64_t> counters;
  std::vector<uint64_t> fields;  // fixed, then the repeated groups
};

// The encoding the program's threads did before raw events (recording.hpp until then): a time
// delta never negative, ids and addresses as zig-zag deltas, the rest plain; since 4.12,
// Dependences as DependencesDelta, each group's address a delta against its position's last.
struct Reference {
  uint64_t time, id = 0, ptr = 0, addr = 0;
  uint64_t dependence[trace::kDependenceChains] = {};
  explicit Reference(uint64_t start) : time(start) {}
  void encode(const Plain& e, std::vector<uint8_t>& out) {
    uint8_t buf[16];
    auto put = [&](uint64_t v) {
      uint8_t* end = trace::put_varint(buf, v);
      out.insert(out.end(), buf, end);
    };
    auto delta = [&](uint64_t& last, uint64_t v) {
      put(trace::zigzag(static_cast<int64_t>(v - last)));
      last = v;
    };
    const bool chained = e.kind == EventKind::Dependences;  // (at most 3 groups: random_events)
    out.push_back(static_cast<uint8_t>(chained ? EventKind::DependencesDelta : e.kind));
    uint64_t now = e.same_time ? time : e.tsc;
    if (now < time) now = time;
    put(now - time);
    time = now;
    for (uint64_t c : e.counters) put(c);
    const EventShape& s = trace::kEventShapes[static_cast<int>(e.kind)];
    for (size_t i = 0; i < e.fields.size(); ++i) {
      const uint64_t v = e.fields[i];
      if (i < s.fixed && (s.id_mask & (1u << i)))
        delta(id, v);
      else if (i < s.fixed && (s.ptr_mask & (1u << i)))
        delta(ptr, v);
      else if (i < s.fixed && (s.addr_mask & (1u << i)))
        delta(addr, v);
      else if (chained && i >= s.fixed && (i - s.fixed) % 2 == 0)
        delta(dependence[(i - s.fixed) / 2], v);
      else
        put(v);
    }
  }
};

void put_raw_event(const Plain& e, std::vector<uint8_t>& raw) {
  uint8_t buf[recorder::kMaxRawEventBytes];
  uint8_t* p = put_raw(
      buf, e.same_time ? static_cast<uint64_t>(e.kind) | kSameTime : raw_head(e.kind, e.tsc));
  for (uint64_t c : e.counters) p = put_raw(p, c);
  for (uint64_t f : e.fields) p = put_raw(p, f);
  raw.insert(raw.end(), buf, p);
}

// Values of every size: small deltas mostly, as in real streams, and now and then anything.
uint64_t value(std::mt19937_64& rng, uint64_t near) {
  switch (rng() % 6) {
    case 0:
      return rng();
    case 1:
      return rng() % 200;
    default:
      return near + rng() % 64 - 16;
  }
}

std::vector<Plain> random_events(std::mt19937_64& rng, size_t n, uint64_t start, int counters) {
  std::vector<Plain> events;
  uint64_t tsc = start, id = (uint64_t{1} << 40) + 5, ptr = 0x401000, addr = 0x7ffd0000;
  for (size_t i = 0; i < n; ++i) {
    Plain e;
    // (Not DependencesDelta: the encoding of the recorder's Dependences, never a raw event.)
    do e.kind = static_cast<EventKind>(1 + rng() % (trace::kEventKindCount - 1));
    while (e.kind == EventKind::DependencesDelta);
    const EventShape& s = trace::kEventShapes[static_cast<int>(e.kind)];
    // Forward mostly; sometimes a step back (another CPU's clock), sometimes a long pause.
    switch (rng() % 10) {
      case 0:
        tsc -= rng() % 100;
        break;
      case 1:
        tsc += rng() % (uint64_t{1} << 40);
        break;
      default:
        tsc += rng() % 500;
    }
    e.tsc = tsc;
    e.same_time = rng() % 5 == 0;
    for (int c = 0; c < counters; ++c) e.counters.push_back(rng() % 5 == 0 ? rng() : rng() % 300);
    for (int f = 0; f < s.fixed; ++f) {
      uint64_t v;
      if (s.id_mask & (1u << f))
        v = id = value(rng, id);
      else if (s.ptr_mask & (1u << f))
        v = ptr = value(rng, ptr);
      else if (s.addr_mask & (1u << f))
        v = addr = value(rng, addr);
      else
        v = value(rng, 3);
      e.fields.push_back(v);
    }
    if (s.repeated) {
      // The count of groups (the last fixed field): at most 3, as the recorder writes them.
      const uint64_t groups = rng() % 4;
      e.fields.back() = groups;
      for (uint64_t g = 0; g < groups * s.repeated; ++g) e.fields.push_back(value(rng, 2));
    }
    events.push_back(e);
  }
  return events;
}

std::vector<uint8_t> encode_all(recorder::RawStreamState& state, const std::vector<uint8_t>& raw,
                                unsigned counters) {
  std::vector<uint8_t> out(recorder::encoded_bound(raw.size()));
  out.resize(recorder::encode_raw_events(state, raw.data(), raw.size(), out.data(), counters));
  return out;
}

// The stream encoded block by block, as the writer does with what a flush finds committed: cut
// after events `ends` (where each event ends) a random 1 to `most` events apart.
std::vector<uint8_t> encode_in_blocks(uint64_t start, const std::vector<uint8_t>& raw,
                                      const std::vector<size_t>& ends, std::mt19937_64& rng,
                                      size_t most) {
  recorder::RawStreamState state{start};
  std::vector<uint8_t> blocks;
  size_t from = 0;
  auto add = [&](size_t to) {
    const std::vector<uint8_t> part(raw.begin() + from, raw.begin() + to);
    const std::vector<uint8_t> encoded = encode_all(state, part, 0);
    blocks.insert(blocks.end(), encoded.begin(), encoded.end());
    from = to;
  };
  for (size_t i = 0; i < ends.size(); i += 1 + rng() % most) add(ends[i]);
  add(raw.size());
  return blocks;
}

TEST(RecorderRawEvents, EncodeAsTheProgramThreadsDidBefore) {
  std::mt19937_64 rng(7);
  for (int counters : {0, 1, 3}) {
    for (int round = 0; round < 20; ++round) {
      // (A TSC never wraps: starts up to 2^62.)
      const uint64_t start = rng() % (uint64_t{1} << (rng() % 2 ? 50 : 62));
      const std::vector<Plain> events = random_events(rng, 400, start, counters);
      std::vector<uint8_t> raw, expected;
      Reference ref(start);
      for (const Plain& e : events) {
        put_raw_event(e, raw);
        ref.encode(e, expected);
      }
      recorder::RawStreamState state;
      state.time = start;
      EXPECT_EQ(encode_all(state, raw, counters), expected)
          << "counters " << counters << ", round " << round;
      EXPECT_EQ(state.time, ref.time);
    }
  }
}

// The writer encodes a thread's stream in blocks (a flush writes what is committed so far); the
// state carried from one block to the next makes the blocks' bytes the whole stream's.
TEST(RecorderRawEvents, BlocksCarryTheStreamState) {
  std::mt19937_64 rng(11);
  const std::vector<Plain> events = random_events(rng, 2000, 1000, 0);
  std::vector<uint8_t> raw;
  std::vector<size_t> ends;  // where each event ends
  for (const Plain& e : events) {
    put_raw_event(e, raw);
    ends.push_back(raw.size());
  }
  recorder::RawStreamState whole_state{1000};
  const std::vector<uint8_t> whole = encode_all(whole_state, raw, 0);
  EXPECT_EQ(encode_in_blocks(1000, raw, ends, rng, 50), whole);
}

// The raw-only kinds (raw_events.hpp): a switch right after a creation, from its parent to the
// created task, and a taskwait's end right after its begin are stored as a head alone; the
// writer fills their fields in from the events before them, so the trace holds the very bytes of
// the whole events, block boundaries anywhere.
TEST(RecorderRawEvents, HeadsAloneAreEncodedAsTheirWholeEvents) {
  std::mt19937_64 rng(13);
  std::vector<Plain> events = random_events(rng, 3000, 5000, 0);
  std::vector<uint8_t> raw, expected;
  std::vector<size_t> ends;
  Reference ref(5000);
  size_t compact = 0;
  for (const Plain& e : events) {
    put_raw_event(e, raw);
    ref.encode(e, expected);
    ends.push_back(raw.size());
    if (rng() % 3 == 0) continue;  // not every creation or begin is followed so
    Plain whole;
    if (e.kind == EventKind::TaskCreate) {
      const uint64_t status = 1 + rng() % 8;
      uint8_t head[8];
      recorder::put_raw(head, recorder::kRawScheduleCreated | kSameTime | status << 8);
      raw.insert(raw.end(), head, head + 8);
      whole = {EventKind::TaskSchedule, 0, true, {}, {e.fields[0], status, e.fields[1]}};
    } else if (e.kind == EventKind::SyncBegin) {
      const bool same_time = rng() % 2 == 0;
      const uint64_t tsc = e.tsc + rng() % 1000;
      uint8_t head[8];
      recorder::put_raw(head, same_time ? recorder::kRawSyncEndAsBegun | kSameTime
                                        : tsc << 8 | recorder::kRawSyncEndAsBegun);
      raw.insert(raw.end(), head, head + 8);
      whole = {EventKind::SyncEnd, tsc, same_time, {}, e.fields};
    } else {
      continue;
    }
    ref.encode(whole, expected);
    ends.push_back(raw.size());
    ++compact;
  }
  ASSERT_GT(compact, 50u);
  recorder::RawStreamState whole_state{5000};
  EXPECT_EQ(encode_all(whole_state, raw, 0), expected);
  // In blocks, cut between any two events.
  EXPECT_EQ(encode_in_blocks(5000, raw, ends, rng, 7), expected);
  // With perf counters every event carries its deltas: a head alone cannot come, and ends the
  // encoding where it stands.
  std::vector<uint8_t> with_counters;
  put_raw_event({EventKind::ThreadEnd, 5100, false, {7}, {}}, with_counters);
  const size_t first = with_counters.size();
  uint8_t head[8];
  recorder::put_raw(head, recorder::kRawSyncEndAsBegun | kSameTime);
  with_counters.insert(with_counters.end(), head, head + 8);
  put_raw_event({EventKind::ThreadEnd, 5200, false, {7}, {}}, with_counters);
  recorder::RawStreamState counted{5000};
  std::vector<uint8_t> only_first(with_counters.begin(), with_counters.begin() + first);
  recorder::RawStreamState reference_state{5000};
  EXPECT_EQ(encode_all(counted, with_counters, 1), encode_all(reference_state, only_first, 1));
}

// The head keeps the TSC's low 56 bits: the top ones come back from the previous event's time,
// across a carry into bit 56, and a step back stays a delta of 0.
TEST(RecorderRawEvents, TheClocksTopBitsComeBack) {
  const uint64_t start = (uint64_t{0xab} << 56) - 10;
  std::vector<uint8_t> raw;
  put_raw_event({EventKind::ThreadEnd, start + 4, false, {}, {}}, raw);
  put_raw_event({EventKind::ThreadEnd, start + 30, false, {}, {}}, raw);  // past 0xab << 56
  put_raw_event({EventKind::ThreadEnd, start + 25, false, {}, {}}, raw);  // back: 0
  put_raw_event({EventKind::ThreadEnd, 0, true, {}, {}}, raw);            // the same time
  recorder::RawStreamState state{start};
  const std::vector<uint8_t> out = encode_all(state, raw, 0);
  const std::vector<uint8_t> expected = {2, 4, 2, 26, 2, 0, 2, 0};
  EXPECT_EQ(out, expected);
  EXPECT_EQ(state.time, start + 30);

  // And the decoder reads the times back.
  const std::vector<EventShape> schema(trace::kEventShapes,
                                       trace::kEventShapes + trace::kEventKindCount);
  trace::EventDecoder d(schema, false, out.data(), out.size(), start);
  trace::Event e;
  std::vector<uint64_t> times;
  while (d.next(e)) times.push_back(e.time);
  EXPECT_EQ(times, (std::vector<uint64_t>{start + 4, start + 30, start + 30, start + 30}));
}

// What the recorder cannot have written ends the encoding there (the rest is dropped, never
// misread): an event cut short, a kind outside the schema, a group count past the data.
TEST(RecorderRawEvents, WhatCannotBeAnEventEndsTheEncoding) {
  std::vector<uint8_t> raw;
  put_raw_event({EventKind::TaskSchedule, 100, false, {}, {1, 2, 3}}, raw);
  const size_t one = raw.size();
  std::vector<uint8_t> cut = raw;
  put_raw_event({EventKind::TaskSchedule, 110, false, {}, {1, 2, 3}}, cut);
  cut.resize(cut.size() - 8);
  recorder::RawStreamState a;
  const std::vector<uint8_t> first = encode_all(a, std::vector<uint8_t>(raw.begin(), raw.end()), 0);
  recorder::RawStreamState b;
  EXPECT_EQ(encode_all(b, cut, 0), first);

  for (uint64_t kind : {uint64_t{0}, uint64_t{trace::kEventKindCount}, uint64_t{0x7f}}) {
    std::vector<uint8_t> unknown = raw;
    unknown.resize(one + 8);
    put_raw(unknown.data() + one, (uint64_t{120} << 8) | kind);
    recorder::RawStreamState c;
    EXPECT_EQ(encode_all(c, unknown, 0), first) << "kind " << kind;
  }

  std::vector<uint8_t> groups = raw;
  put_raw_event({EventKind::Dependences, 120, false, {}, {9, 1000}}, groups);  // 1000 groups
  recorder::RawStreamState d;
  EXPECT_EQ(encode_all(d, groups, 0), first);
}

// Kinds leave the head's eighth bit free, and the longest raw event fits its bound.
TEST(RecorderRawEvents, TheLongestEventFits) {
  std::mt19937_64 rng(3);
  const std::vector<Plain> events = random_events(rng, 3000, 0, trace::kMaxMetrics - 1);
  for (const Plain& e : events) {
    std::vector<uint8_t> raw;
    put_raw_event(e, raw);
    EXPECT_LE(raw.size(), recorder::kMaxRawEventBytes);
    recorder::RawStreamState s;
    EXPECT_LE(encode_all(s, raw, trace::kMaxMetrics - 1).size(),
              recorder::encoded_bound(raw.size()));
  }
}

}  // namespace
}  // namespace tasklens
