// The event decoder: turns one thread's stream of encoded events (trace/format.hpp) back into
// Event records, in a sliding window of decompressed blocks of the trace file (refill). Split
// from reader.cpp, which parses the file and its records.
#include <algorithm>
#include <cstring>

#include "trace/reader.hpp"

namespace tasklens::trace {

EventDecoder::EventDecoder(const std::vector<EventShape>& schema, bool has_metric,
                           const uint8_t* data, size_t size, uint64_t start_tsc)
    : EventDecoder(schema, std::vector<Metric>{has_metric ? Metric::Cycles : Metric::Tsc}, data,
                   size, start_tsc) {}

EventDecoder::EventDecoder(const std::vector<EventShape>& schema,
                           const std::vector<Metric>& metrics, const uint8_t* data, size_t size,
                           uint64_t start_tsc)
    : schema_(schema), p_(data), end_(data + size), time_(start_tsc), start_time_(start_tsc) {
  limit_advance(max_advance_);
  metric_count_ =
      static_cast<int>(std::min<size_t>(std::max<size_t>(metrics.size(), 1), kMaxMetrics));
  for (int i = 0; i < metric_count_; ++i)
    counter_of_[i] = i < int(metrics.size()) && metrics[i] != Metric::Tsc
                         ? static_cast<int8_t>(counter_count_++)
                         : int8_t{-1};
}

void EventDecoder::limit_advance(uint64_t ticks) {
  // Never past the end of the clock either: a damaged header can start it near 2^64.
  max_advance_ = std::min(ticks, ~uint64_t{0} - start_time_);
}

void EventDecoder::malformed(const std::string& what) const {
  throw TraceError(context_.empty() ? what : context_ + ": " + what);
}

bool EventDecoder::read_long_varint(uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p_ == end_) return false;
    uint8_t b = *p_++;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  malformed("malformed varint in event stream");
}

bool EventDecoder::next(Event& e) {
  for (;;) {
    if (more_blocks_ && static_cast<size_t>(end_ - p_) < kWindowBytes) [[unlikely]]
      refill(false);
    if (p_ == end_) return false;
    const uint8_t* const event_start = p_;
    uint8_t kind = *p_++;
    // The window ends inside this event: nothing of the decoder's state has changed yet, so it
    // is read again with one more block. The stream ends inside it: a program killed mid-write.
    // cut() says which: true to read the event again.
    auto cut = [&] {
      if (more_blocks_) {
        p_ = event_start;
        refill(true);
        return true;
      }
      p_ = end_;
      truncated_ = true;
      return false;
    };
    if (kind >= schema_.size() || schema_[kind].fixed == kAbsent)
      malformed("malformed event stream: event kind " + std::to_string(kind) +
                " is not in the file's schema");
    uint64_t dt, dm[kMaxMetrics];
    bool whole = read_varint(dt);
    for (int i = 0; whole && i < counter_count_; ++i) whole = read_varint(dm[i]);
    const EventShape shape = schema_[kind];
    scratch_filled_ = std::max<int>(scratch_filled_, shape.fixed);  // (whatever comes next)
    for (int i = 0; whole && i < shape.fixed; ++i) whole = read_varint(scratch_[i]);
    if (!groups_.empty()) groups_.clear();
    if (whole && shape.repeated) {
      uint64_t n = shape.fixed ? scratch_[shape.fixed - 1] : 0;
      whole = n <= static_cast<uint64_t>(end_ - p_);
      if (whole) groups_.resize(n * shape.repeated);
      for (size_t i = 0; whole && i < groups_.size(); ++i) whole = read_varint(groups_[i]);
    }
    if (!whole) {
      if (cut()) continue;
      return false;
    }
    if (dt > max_advance_ - (time_ - start_time_))
      malformed("corrupted event stream: a time delta of " + std::to_string(dt) +
                " ticks runs the clock past what a recording can hold");
    time_ += dt;
    for (int i = 0; i < counter_count_; ++i) {
      if (dm[i] > max_advance_ - counters_[i])
        malformed("corrupted event stream: a counter delta of " + std::to_string(dm[i]) +
                  " runs past what a recording can hold");
      counters_[i] += dm[i];
    }
    // Ids and code addresses are deltas: resolve them for every kind, known or not, so that the
    // chains stay right across events this reader skips.
    // (Only the fields that are deltas, in order: most fields of most kinds are not.)
    const uint32_t within = shape.fixed >= 32 ? ~0u : (1u << shape.fixed) - 1;
    for (uint32_t deltas = (shape.id_mask | shape.ptr_mask | shape.addr_mask) & within; deltas;
         deltas &= deltas - 1) {
      const int i = __builtin_ctz(deltas);
      if (shape.id_mask & (1u << i)) {
        last_id_ += static_cast<uint64_t>(unzigzag(scratch_[i]));
        scratch_[i] = last_id_;
      } else if (shape.ptr_mask & (1u << i)) {
        last_ptr_ += static_cast<uint64_t>(unzigzag(scratch_[i]));
        scratch_[i] = last_ptr_;
      } else if (shape.addr_mask & (1u << i)) {
        last_addr_ += static_cast<uint64_t>(unzigzag(scratch_[i]));
        scratch_[i] = last_addr_;
      }
    }
    if (kind >= kEventKindCount) continue;  // a kind this reader does not know: skip it

    e.kind = static_cast<EventKind>(kind);
    e.time = time_;
    for (int i = 0; i < metric_count_; ++i)
      values_[i] = counter_of_[i] < 0 ? time_ : counters_[counter_of_[i]];
    e.metric = values_[0];
    e.values = values_;
    e.groups = &groups_;
    // One copy of five fields: those past this kind's are zero in scratch_ (cleared only when
    // the event before had more).
    static_assert(sizeof scratch_ >= sizeof e.f);
    if (scratch_filled_ > shape.fixed &&
        shape.fixed < 5)  // (a schema may give a kind up to 32 fields)
      std::fill(scratch_ + shape.fixed, scratch_ + std::min<int>(scratch_filled_, 5), 0);
    scratch_filled_ = shape.fixed;
    std::memcpy(e.f, scratch_, sizeof e.f);
    // The kinds from TbbWaitBegin on become other kinds, out of line: a branch here for one of
    // them made every other event dearer (docs/benchmarks.md, "With `depend`").
    if (kind >= static_cast<uint8_t>(EventKind::TbbWaitBegin)) expand(e);
    return true;
  }
}

// A DependencesDelta's addresses: each group's against the one at its position before.
void EventDecoder::resolve_dependences(const EventShape& shape) {
  const size_t groups = shape.repeated ? groups_.size() / shape.repeated : 0;
  if (shape.fixed != 2 || shape.repeated != 2 || groups > kDependenceChains)
    malformed("malformed event stream: a dependences_delta event with " + std::to_string(groups) +
              " groups of " + std::to_string(shape.repeated) + " (at most " +
              std::to_string(kDependenceChains) + " of 2)");
  for (size_t g = 0; g < groups; ++g) {
    last_dependence_[g] += static_cast<uint64_t>(unzigzag(groups_[2 * g]));
    groups_[2 * g] = last_dependence_[g];
  }
}

// A DependencesDelta becomes the Dependences it codes. The compact oneTBB events become their
// full forms from the thread's nesting of runs and waits (format.hpp); full TbbWaitEnds
// (version 3) pop the waits too, so the stack stays bounded.
void EventDecoder::expand(Event& e) {
  if (e.kind == EventKind::DependencesDelta) {
    resolve_dependences(schema_[static_cast<uint8_t>(EventKind::DependencesDelta)]);
    e.kind = EventKind::Dependences;
    return;
  }
  // The task the thread runs, for the kinds that leave it out.
  auto running = [&]() {
    if (tbb_runs_.empty())
      malformed(std::string("malformed event stream: ") + to_string(e.kind) +
                " outside of any oneTBB task");
    return tbb_runs_.back().task;
  };
  // A run begins: TaskSchedule prior, switch, next.
  auto begin_run = [&](uint64_t prior, uint64_t next) {
    tbb_runs_.push_back({next, prior});
    e.kind = EventKind::TaskSchedule;
    e.f[0] = prior;
    e.f[1] = kTaskStatusSwitch;
    e.f[2] = next;
  };
  switch (e.kind) {
    case EventKind::TbbSpawnIn:
      for (int i = 4; i > 0; --i) e.f[i] = e.f[i - 1];
      e.f[0] = running();
      e.kind = EventKind::TbbSpawn;
      break;
    case EventKind::TbbWaitBeginIn:
      e.f[2] = e.f[1];
      e.f[1] = e.f[0];
      e.f[0] = running();
      e.kind = EventKind::TbbWaitBegin;
      [[fallthrough]];
    case EventKind::TbbWaitBegin:
      tbb_waits_.push_back({e.f[0], e.f[1], e.f[2]});
      break;
    case EventKind::TbbRunBeginIn:
      begin_run(running(), e.f[0]);
      break;
    case EventKind::TbbRunBegin:
      begin_run(e.f[0], e.f[1]);
      break;
    case EventKind::TbbWaitEnd:
      if (!tbb_waits_.empty()) tbb_waits_.pop_back();
      break;
    case EventKind::TbbWaitDone: {
      if (tbb_waits_.empty())
        malformed("malformed event stream: a oneTBB wait ends that did not begin");
      const TbbWait& w = tbb_waits_.back();
      e.kind = EventKind::TbbWaitEnd;
      e.f[0] = w.task;
      e.f[1] = w.group;
      e.f[2] = w.code;
      tbb_waits_.pop_back();
      break;
    }
    case EventKind::TbbRunEnd: {
      if (tbb_runs_.empty())
        malformed("malformed event stream: a oneTBB task ends that did not start");
      const TbbRun& r = tbb_runs_.back();
      const uint64_t status = e.f[0];
      e.kind = EventKind::TaskSchedule;
      e.f[0] = r.task;
      e.f[1] = status;
      e.f[2] = r.prior;
      tbb_runs_.pop_back();
      break;
    }
    default:
      break;
  }
}

void EventDecoder::refill(bool one_more) {
  const std::vector<TraceFile::Block>& blocks = file_->blocks_[thread_];
  size_t size = static_cast<size_t>(end_ - p_);
  if (size && p_ != window_.data()) std::memmove(window_.data(), p_, size);
  while (next_block_ < blocks.size() && (size < kWindowBytes || one_more)) {
    const TraceFile::Block& b = blocks[next_block_++];
    if (window_.size() < size + b.raw_size) window_.resize(std::max(size + b.raw_size, 2 * size));
    file_->decompress(b, window_.data() + size);
    size += b.raw_size;
    one_more = false;
  }
  p_ = window_.data();
  end_ = p_ + size;
  more_blocks_ = next_block_ < blocks.size();
}

}  // namespace tasklens::trace
