// The writer's side of raw events (raw_events.hpp): one pass over a chunk, no allocation.
#include "recorder/raw_events.hpp"

namespace tasklens::recorder {
namespace {

constexpr uint64_t kLow56 = (uint64_t{1} << 56) - 1;

// How each fixed field of a kind is encoded, from the schema's masks: plain, or a zig-zag delta
// against the stream's last id, code address or data address.
enum FieldClass : uint8_t { kPlain, kId, kPtr, kAddr };

struct KindPlan {
  uint8_t fixed = 0, repeated = 0;
  FieldClass field[8] = {};
  bool known = false;
};

struct Plans {
  KindPlan kind[trace::kEventKindCount];
  Plans() {
    for (int k = 0; k < trace::kEventKindCount; ++k) {
      const trace::EventShape& s = trace::kEventShapes[k];
      KindPlan& p = kind[k];
      p.known = k != 0 && s.fixed <= 8;
      p.fixed = s.fixed;
      p.repeated = s.repeated;
      for (int i = 0; i < s.fixed && i < 8; ++i)
        p.field[i] = s.id_mask & (1u << i)     ? kId
                     : s.ptr_mask & (1u << i)  ? kPtr
                     : s.addr_mask & (1u << i) ? kAddr
                                               : kPlain;
    }
  }
};
const Plans kPlans;

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

}  // namespace

size_t encode_raw_events(RawStreamState& s, const uint8_t* src, size_t size, uint8_t* out,
                         unsigned counters) {
  const uint8_t* p = src;
  const uint8_t* const end = src + size;
  uint8_t* const start = out;
  while (end - p >= 8) {
    const uint64_t head = load(p);
    const unsigned kind = static_cast<unsigned>(head & 0x7f);
    if (kind >= static_cast<unsigned>(trace::kEventKindCount) || !kPlans.kind[kind].known) break;
    const KindPlan& plan = kPlans.kind[kind];
    size_t words = 1 + counters + plan.fixed;
    if (static_cast<size_t>(end - p) < words * 8) break;
    if (plan.repeated) {
      const uint64_t groups = plan.fixed ? load(p + (words - 1) * 8) : 0;
      if (groups > static_cast<uint64_t>(end - p) / 8) break;
      words += groups * plan.repeated;
      if (static_cast<size_t>(end - p) < words * 8) break;
    }
    // The time: the TSC's low 56 bits, after the previous event's. A TSC that stepped back (a
    // thread moved to a CPU whose clock is a little behind) gives a delta of 0, never negative.
    uint64_t dt = 0;
    if (!(head & kSameTime)) {
      const uint64_t step = ((head >> 8) - s.time) & kLow56;
      if (step < (uint64_t{1} << 55)) dt = step;
    }
    s.time += dt;
    *out++ = static_cast<uint8_t>(kind);
    out = trace::put_varint(out, dt);
    const uint8_t* f = p + 8;
    for (unsigned i = 0; i < counters; ++i, f += 8) out = trace::put_varint(out, load(f));
    for (unsigned i = 0; i < plan.fixed; ++i, f += 8) {
      const uint64_t v = load(f);
      switch (plan.field[i]) {
        case kPlain:
          out = trace::put_varint(out, v);
          break;
        case kId:
          out = delta(out, s.id, v);
          break;
        case kPtr:
          out = delta(out, s.ptr, v);
          break;
        case kAddr:
          out = delta(out, s.addr, v);
          break;
      }
    }
    for (const uint8_t* group_end = p + words * 8; f < group_end; f += 8)
      out = trace::put_varint(out, load(f));
    p += words * 8;
  }
  return static_cast<size_t>(out - start);
}

}  // namespace tasklens::recorder
