// Events as the program's threads record them, and their encoding into the trace's form by the
// writer threads.
//
// Why two forms: the trace stores events as varints, with ids and addresses as deltas
// (trace/format.hpp), a few bytes a field. Encoding that on the program's thread took a loop per
// field and the previous values loaded and stored, about a third of an event's instructions
// there (docs/benchmarks.md, the recorder's instructions per task). The program's thread now stores
// each field as it is, 8 bytes, and the writer thread that takes the chunk encodes it, with the
// same schema, into the very bytes the thread would have written: readers and old traces see no
// change.
//
// A raw event is 8-byte words:
//   head     (TSC << 8) | kind; or kind | kSameTime, the time of the thread's previous event
//            (the TSC's top 8 bits are restored from the previous event's time, below);
//   counters one delta per perf counter (Config::counters), when the recording has them;
//   fields   the schema's fixed fields of the kind, then its repeated groups, as plain values
//            (the writer takes the deltas of ids, code and data addresses).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "trace/format.hpp"

namespace tasklens::recorder {

// Kinds fit in 7 bits; the eighth says "the same time as the previous event".
inline constexpr uint64_t kSameTime = 0x80;
static_assert(trace::kEventKindCount <= 0x80, "event kinds must leave bit 7 of the head free");

// Raw-only kinds: events whose fields the writer knows from the thread's previous events, so the
// program's thread stores the head alone (one word, no fields: the most frequent callbacks of a
// fine-grained program then store and check less). The writer encodes each as the trace's kind
// with its fields filled in: the trace does not change. Only the fast path writes them (no perf
// counters: the head is the whole event).
//   kRawSyncEndAsBegun   a SyncEnd right after its SyncBegin (a taskwait with no event inside):
//                        the begin's kind, task and code address.
//   kRawScheduleCreated  a TaskSchedule right after a TaskCreate, from the creating task to the
//                        created one; with kSameTime only, the status in the head's bits 8-15.
inline constexpr uint64_t kRawSyncEndAsBegun = 0x70;
inline constexpr uint64_t kRawScheduleCreated = 0x71;
static_assert(trace::kEventKindCount <= kRawSyncEndAsBegun, "raw-only kinds after the trace's");

// The longest raw event the recorder writes: the head, a delta per metric and 8 fields (a
// Dependences event: id, count, kDependenceChains x {address, type}); buffers keep this much
// room.
inline constexpr size_t kMaxRawEventBytes =
    8 * (1 + trace::kMaxMetrics + 2 + 2 * trace::kDependenceChains);

__attribute__((always_inline)) inline uint8_t* put_raw(uint8_t* p, uint64_t v) {
  std::memcpy(p, &v, sizeof v);
  return p + sizeof v;
}

__attribute__((always_inline)) inline uint64_t raw_head(trace::EventKind kind, uint64_t tsc) {
  return (tsc << 8) | static_cast<uint64_t>(kind);
}

// What the encoding of one thread's stream carries from event to event (the decoder's state):
// the time and the last id, code address and data address. Kept with the thread's buffer, used
// by whichever writer holds it (ThreadBuffer::claim).
struct RawStreamState {
  uint64_t time = 0;  // the thread's start (the trace header's start TSC), then its last event's
  uint64_t id = 0, ptr = 0, addr = 0;
  // The last TaskCreate's parent and task, the last SyncBegin's kind, task and code address:
  // the fields of the raw-only kinds.
  uint64_t created_parent = 0, created = 0;
  uint64_t sync_kind = 0, sync_task = 0, sync_ptr = 0;
  // The last DependencesDelta's address at each group position (trace::kDependenceChains).
  uint64_t dependence[trace::kDependenceChains] = {};
};

// Bytes `raw` bytes of raw events can take encoded at most (a varint holds 8 bytes in 10, a head
// becomes a kind byte and a 10-byte time delta).
inline constexpr size_t encoded_bound(size_t raw) { return raw / 8 * 11 + 16; }

// Encodes the whole raw events in [src, src + size) into `out` (room for encoded_bound(size)),
// each into the bytes trace::EventDecoder reads; returns the bytes written. `counters`: the
// deltas per event (Config::counter_count). An event of a kind outside the schema, or one that
// runs past `size`, ends the encoding (it cannot come from the recorder: what is left is
// dropped rather than misread).
size_t encode_raw_events(RawStreamState& state, const uint8_t* src, size_t size, uint8_t* out,
                         unsigned counters);

}  // namespace tasklens::recorder
