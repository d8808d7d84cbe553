// The writer's side of raw events (raw_events.hpp): one pass over a chunk, no allocation.
//
// Each kind has its own encoder, generated from the schema at compile time (encode_kind<K>): the
// number of fields and how each is coded are constants there, so a field costs a load, its
// delta if it has one, and a varint, with no branch on its class: about a fifth faster than one
// loop over the schema's masks (docs/benchmarks.md, the event path's capacity).
#include "recorder/raw_events.hpp"

#include <array>
#include <utility>

namespace tasklens::recorder {
namespace {

constexpr uint64_t kLow56 = (uint64_t{1} << 56) - 1;

inline uint64_t load(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline uint8_t* delta(uint8_t* out, uint64_t& last, uint64_t v) {
  out = trace::put_varint(out, trace::zigzag(static_cast<int64_t>(v - last)));
  last = v;
  return out;
}

// Field i of kind K, coded as the schema says (the classes of trace::EventShape).
template <int K, int I>
__attribute__((always_inline)) inline uint8_t* field(RawStreamState& s, const uint8_t* f,
                                                     uint8_t* out) {
  constexpr trace::EventShape shape = trace::kEventShapes[K];
  const uint64_t v = load(f + 8 * I);
  if constexpr (shape.id_mask & (1u << I))
    return delta(out, s.id, v);
  else if constexpr (shape.ptr_mask & (1u << I))
    return delta(out, s.ptr, v);
  else if constexpr (shape.addr_mask & (1u << I))
    return delta(out, s.addr, v);
  else
    return trace::put_varint(out, v);
}

template <int K, size_t... I>
__attribute__((always_inline)) inline uint8_t* fields(RawStreamState& s,
                                                      [[maybe_unused]] const uint8_t* f,
                                                      uint8_t* out, std::index_sequence<I...>) {
  ((out = field<K, static_cast<int>(I)>(s, f, out)), ...);
  return out;
}

// Encodes the event of kind K at p (its head already read) when it lies whole before `end`:
// returns the next event's start, or null (the event runs past `end`, or its groups do).
template <int K>
const uint8_t* encode_kind(RawStreamState& s, uint64_t head, const uint8_t* p, const uint8_t* end,
                           uint8_t*& out, unsigned counters) {
  constexpr trace::EventShape shape = trace::kEventShapes[K];
  size_t words = 1 + counters + shape.fixed;
  if (static_cast<size_t>(end - p) < words * 8) return nullptr;
  uint64_t groups = 0;
  if constexpr (shape.repeated != 0) {
    groups = load(p + (words - 1) * 8);
    if (groups > static_cast<uint64_t>(end - p) / 8 / shape.repeated) return nullptr;
    words += groups * shape.repeated;
    if (static_cast<size_t>(end - p) < words * 8) return nullptr;
  }
  // The time: the TSC's low 56 bits, after the previous event's. A TSC that stepped back (a
  // thread moved to a CPU whose clock is a little behind) gives a delta of 0, never negative.
  uint64_t dt = 0;
  if (!(head & kSameTime)) {
    const uint64_t step = ((head >> 8) - s.time) & kLow56;
    if (step < (uint64_t{1} << 55)) dt = step;
  }
  s.time += dt;
  const uint8_t* fixed = p + 8 * (1 + counters);
  if constexpr (K == static_cast<int>(trace::EventKind::TaskCreate)) {
    s.created_parent = load(fixed);
    s.created = load(fixed + 8);
  } else if constexpr (K == static_cast<int>(trace::EventKind::SyncBegin)) {
    s.sync_kind = load(fixed);
    s.sync_task = load(fixed + 8);
    s.sync_ptr = load(fixed + 16);
  }
  // Dependences go out as DependencesDelta: each group's address against the one at its
  // position in the thread's previous such event (the recorder writes at most that many groups).
  constexpr bool kDependences = K == static_cast<int>(trace::EventKind::Dependences);
  const bool chained = kDependences && groups <= trace::kDependenceChains;
  uint8_t* o = out;
  *o++ =
      chained ? static_cast<uint8_t>(trace::EventKind::DependencesDelta) : static_cast<uint8_t>(K);
  o = trace::put_varint(o, dt);
  const uint8_t* f = p + 8;
  for (unsigned i = 0; i < counters; ++i, f += 8) o = trace::put_varint(o, load(f));
  o = fields<K>(s, f, o, std::make_index_sequence<shape.fixed>());
  f += 8 * shape.fixed;
  if (chained) {
    for (uint64_t g = 0; g < groups; ++g, f += 16) {
      o = delta(o, s.dependence[g], load(f));
      o = trace::put_varint(o, load(f + 8));
    }
  } else {
    for (const uint8_t* group_end = p + words * 8; f < group_end; f += 8)
      o = trace::put_varint(o, load(f));
  }
  out = o;
  return p + words * 8;
}

using KindEncoder = const uint8_t* (*)(RawStreamState&, uint64_t, const uint8_t*, const uint8_t*,
                                       uint8_t*&, unsigned);

// Kind 0, kinds with more fields than the recorder writes and DependencesDelta (the encoding of
// its Dependences) are not raw events it makes.
constexpr bool raw_kind(size_t k) {
  return k != 0 && trace::kEventShapes[k].fixed <= 8 &&
         k != static_cast<size_t>(trace::EventKind::DependencesDelta);
}
template <size_t... K>
constexpr std::array<KindEncoder, trace::kEventKindCount> make_encoders(std::index_sequence<K...>) {
  return {{(raw_kind(K) ? &encode_kind<static_cast<int>(K)> : nullptr)...}};
}
constexpr std::array<KindEncoder, trace::kEventKindCount> kEncoders =
    make_encoders(std::make_index_sequence<trace::kEventKindCount>());

// A raw-only kind (raw_events.hpp) as the event of the trace's kind it stands for: its fields
// from the stream state, then encoded as any event of that kind. Returns the next event's start.
const uint8_t* encode_raw_only(RawStreamState& s, uint64_t head, const uint8_t* p, uint8_t*& out) {
  const uint64_t kind = head & 0x7f;
  const uint64_t time = head & ~uint64_t{0xff};  // the TSC, or the status with kSameTime
  uint8_t event[4 * 8];
  if (kind == kRawSyncEndAsBegun) {
    const uint64_t as = static_cast<uint64_t>(trace::EventKind::SyncEnd);
    put_raw(put_raw(put_raw(put_raw(event, (head & kSameTime) ? as | kSameTime : time | as),
                            s.sync_kind),
                    s.sync_task),
            s.sync_ptr);
    encode_kind<static_cast<int>(trace::EventKind::SyncEnd)>(s, load(event), event, event + 32, out,
                                                             0);
  } else {
    const uint64_t as = static_cast<uint64_t>(trace::EventKind::TaskSchedule);
    put_raw(put_raw(put_raw(put_raw(event, as | kSameTime), s.created_parent), (head >> 8) & 0xff),
            s.created);
    encode_kind<static_cast<int>(trace::EventKind::TaskSchedule)>(s, load(event), event, event + 32,
                                                                  out, 0);
  }
  return p + 8;
}

}  // namespace

size_t encode_raw_events(RawStreamState& s, const uint8_t* src, size_t size, uint8_t* out,
                         unsigned counters) {
  const uint8_t* p = src;
  const uint8_t* const end = src + size;
  uint8_t* o = out;
  while (end - p >= 8) {
    const uint64_t head = load(p);
    const unsigned kind = static_cast<unsigned>(head & 0x7f);
    if (kind == kRawSyncEndAsBegun || (kind == kRawScheduleCreated && (head & kSameTime))) {
      if (counters != 0) break;  // only the fast path writes them, and never with counters
      p = encode_raw_only(s, head, p, o);
      continue;
    }
    if (kind >= static_cast<unsigned>(trace::kEventKindCount) || !kEncoders[kind]) break;
    p = kEncoders[kind](s, head, p, end, o, counters);
    if (!p) break;
  }
  return static_cast<size_t>(o - out);
}

}  // namespace tasklens::recorder
