// `sched` in one pass (stream_sched.hpp).
#include "analysis/stream_sched.hpp"

#include <algorithm>
#include <utility>

#include "analysis/radix_sort.hpp"

namespace tasklens::analysis {

// ---- SchedEventSort

SchedEventSort::SchedEventSort(size_t run_events, size_t block_events)
    : run_events_(std::max<size_t>(run_events, 1)),
      block_events_(std::max<size_t>(block_events, 1)) {}

SchedEventSort::~SchedEventSort() {
  if (spiller_.joinable()) spiller_.join();
}

void SchedEventSort::sort_run(std::vector<SchedEvent>& run) {
  if (run.empty()) return;
  uint64_t least = run[0].time, most = run[0].time;
  for (const SchedEvent& e : run) {
    least = std::min(least, e.time);
    most = std::max(most, e.time);
  }
  if (most - least < (uint64_t{1} << 61))
    radix_sort(
        run, [least](const SchedEvent& e) { return ((e.time - least) << 2) | e.kind; }, &scratch_);
  else  // (times further apart than a TSC counts in decades: a damaged clock)
    std::stable_sort(run.begin(), run.end(), before);
}

void SchedEventSort::write_run(std::vector<SchedEvent>& events) {
  sort_run(events);
  Run run;
  run.first_block = blocks_.blocks();
  for (size_t i = 0; i < events.size(); i += block_events_) {
    const size_t n = std::min(block_events_, events.size() - i);
    bytes_.resize(n * 16);  // (at most 10 bytes for the time and 5 for the argument)
    uint8_t* p = bytes_.data();
    uint64_t previous = 0;
    for (size_t k = 0; k < n; ++k) {
      const SchedEvent& e = events[i + k];
      const uint64_t delta = e.time - previous;
      previous = e.time;
      if (delta >> 61) {  // too far for the kind's two bits: a marker, then the time alone
        p = trace::put_varint(p, 0);
        p = trace::put_varint(p, delta);
        *p++ = e.kind;
      } else {
        p = trace::put_varint(p, (delta << 2 | e.kind) << 1 | 1);
      }
      p = trace::put_varint(p, e.arg);
    }
    blocks_.put(bytes_.data(), static_cast<size_t>(p - bytes_.data()));
    ++run.blocks;
  }
  runs_.push_back(std::move(run));
  events.clear();
}

void SchedEventSort::spill_in_background() {
  wait_for_spill();
  spilling_.swap(run_);  // (run_ takes the written run's room)
  run_.clear();
  spilled_ = true;
  spiller_ = std::thread([this] {
    try {
      write_run(spilling_);
    } catch (...) {
      spill_error_ = std::current_exception();
    }
  });
}

void SchedEventSort::wait_for_spill() {
  if (spiller_.joinable()) spiller_.join();
  if (spill_error_) std::rethrow_exception(std::exchange(spill_error_, nullptr));
}

bool SchedEventSort::load(Run& r) {
  if (r.block == r.blocks) return false;
  const size_t index = r.first_block + r.block++;
  bytes_.resize(blocks_.raw_bytes(index));
  blocks_.get(index, bytes_.data());
  r.loaded.clear();
  const uint8_t *p = bytes_.data(), *end = p + bytes_.size();
  uint64_t time = 0;
  while (p < end) {
    SchedEvent e;
    uint64_t head;
    p = get_temp_varint(p, head);
    if (head & 1) {
      time += head >> 3;
      e.kind = static_cast<uint8_t>(head >> 1 & 3);
    } else {
      uint64_t delta;
      p = get_temp_varint(p, delta);
      time += delta;
      e.kind = *p++;
    }
    uint64_t arg;
    p = get_temp_varint(p, arg);
    e.time = time;
    e.arg = static_cast<uint32_t>(arg);
    r.loaded.push_back(e);
  }
  r.pos = 0;
  return !r.loaded.empty();
}

void SchedEventSort::start_merge() {
  wait_for_spill();
  if (!spilled_) {
    sort_run(run_);
    in_memory_ = 0;
    return;
  }
  if (!run_.empty()) write_run(run_);
  std::vector<SchedEvent>().swap(run_);  // (the merge holds blocks only)
  std::vector<SchedEvent>().swap(spilling_);
  std::vector<SchedEvent>().swap(scratch_);
  heap_.clear();
  for (uint32_t r = 0; r < runs_.size(); ++r)
    if (load(runs_[r])) heap_.push_back(head_of(r));
  // A min-heap: the least next event on top.
  std::make_heap(heap_.begin(), heap_.end(), [](const Head& a, const Head& b) { return b < a; });
}

// Puts h at the top and moves it down to its place. The runs cover nearly consecutive spans of
// time (the pass hands strands over near their start), so the run just read from usually stays
// on top: two comparisons, where a pop and a push take two walks of the heap's height.
void SchedEventSort::sift_down(Head h) {
  const size_t n = heap_.size();
  size_t hole = 0;
  for (;;) {
    size_t child = 2 * hole + 1;
    if (child >= n) break;
    if (child + 1 < n && heap_[child + 1] < heap_[child]) ++child;
    if (!(heap_[child] < h)) break;
    heap_[hole] = heap_[child];
    hole = child;
  }
  heap_[hole] = h;
}

bool SchedEventSort::next(SchedEvent& e) {
  if (!spilled_) {
    if (in_memory_ == run_.size()) return false;
    e = run_[in_memory_++];
    return true;
  }
  if (heap_.empty()) return false;
  const uint32_t top = static_cast<uint32_t>(heap_[0].kind_run);
  Run& r = runs_[top];
  e = r.loaded[r.pos++];
  if (r.pos < r.loaded.size() || load(r)) {
    sift_down(head_of(top));
  } else {
    const Head last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(last);
  }
  return true;
}

// ---- StreamSchedule

StreamSchedule::StreamSchedule(uint64_t log_block_entries, size_t run_events, size_t block_events)
    : profile_(StreamProfile::kSitesAsTheyCome, log_block_entries),
      links_("the ready path", log_block_entries),
      events_(run_events, block_events) {}

void StreamSchedule::times(uint64_t start, uint64_t end, uint32_t thread) {
  start_ = start;
  end_ = end;
  thread_ = thread;
}

StreamSchedule::Strand StreamSchedule::strand(uint64_t work, uint64_t span_weight, uint32_t site,
                                              const Strand* preds, uint32_t pred_count,
                                              const Instance* instances, uint32_t instance_count,
                                              uint64_t iterations, uint32_t fragment,
                                              uint64_t order) {
  Effective ready;  // the latest of the predecessors' effective ends
  for (uint32_t k = 0; k < pred_count; ++k)
    if (later(effective_[preds[k]], ready)) ready = effective_[preds[k]];
  const Strand s = profile_.strand(work, span_weight, site, preds, pred_count, instances,
                                   instance_count, iterations, fragment, order);
  const bool timed = thread_ != model::kNone && (start_ != 0 || end_ != 0);
  if (!timed) {
    effective(s) = ready;
    return s;
  }
  const uint64_t index = timed_++;
  const bool had_ready = ready.source != kNoSource && ready.end < start_;
  events_.push({start_, thread_ | (had_ready ? SchedEvent::kHadReady : 0u), SchedEvent::kStart});
  events_.push({std::max(start_, end_), thread_, SchedEvent::kEnd});
  if (had_ready) events_.push({ready.end, 0, SchedEvent::kReady});  // (the sweep clips it)
  links_.push({ready.source == kNoSource ? 0 : index - ready.source, start_, end_});
  if (thread_ >= strands_by_thread_.size()) strands_by_thread_.resize(thread_ + 1, 0);
  ++strands_by_thread_[thread_];
  if (index == 0) {
    first_ = start_;
    last_ = end_;
  }
  first_ = std::min(first_, start_);
  last_ = std::max(last_, std::max(start_, end_));
  const Effective mine{end_, index, order};
  if (later(mine, last_end_)) last_end_ = mine;
  effective(s) = mine;
  return s;
}

StreamSchedule::Strand StreamSchedule::open_join() {
  const Strand j = profile_.open_join();
  effective(j) = Effective{};
  return j;
}

void StreamSchedule::fold(Strand join, Strand pred) {
  profile_.fold(join, pred);
  if (later(effective_[pred], effective_[join])) effective_[join] = effective_[pred];
}

StreamSchedule::Result StreamSchedule::finish(const std::vector<size_t>& point_counts) {
  Result r;
  r.profile = profile_.finish(false);
  Schedule& out = r.schedule;
  out.timed_strands = timed_;
  out.first = first_;
  out.last = last_;
  for (uint32_t t = 0; t < strands_by_thread_.size(); ++t)
    if (strands_by_thread_[t]) {
      out.per_worker.emplace_back();
      out.per_worker.back().thread = t;
    }
  out.workers = static_cast<uint32_t>(out.per_worker.size());
  if (timed_ == 0 || last_ <= first_) return r;
  for (SchedWorker& w : out.per_worker) w.strands = strands_by_thread_[w.thread];
  out.timestamps = true;
  out.elapsed = last_ - first_;
  out.cumulative = uint64_t{out.workers} * out.elapsed;

  // The ready path, walked back from the strand ending last (compute_schedule's walk).
  uint64_t cursor = last_;
  for (uint64_t cur = last_end_.source;;) {
    ++out.path.length;
    const PathLink link = links_.at(cur);
    const uint64_t run_begin = std::min(link.start, cursor);
    if (run_begin < cursor)
      events_.push({run_begin, uint32_t(PathState::Running), SchedEvent::kPath});
    cursor = run_begin;
    if (link.back == 0) break;
    cur -= link.back;
    const uint64_t wait_begin = std::min(std::max(links_.at(cur).end, first_), cursor);
    if (wait_begin < cursor)
      events_.push({wait_begin, uint32_t(PathState::Waiting), SchedEvent::kPath});
    cursor = wait_begin;
  }

  std::vector<Downsampler> sampled;
  for (size_t n : point_counts) sampled.emplace_back(first_, last_, n);
  ScheduleSweep sweep(out, [&sampled](const SchedStep& step) {
    for (Downsampler& d : sampled) d.step(step);
  });
  events_.drain([&sweep](const SchedEvent& e) { sweep.add(e); });
  sweep.finish();
  for (size_t i = 0; i < point_counts.size(); ++i)
    out.sampled.emplace_back(point_counts[i], sampled[i].finish());
  r.disk_bytes = events_.file_bytes() + links_.file_bytes() + profile_.file_bytes();
  return r;
}

}  // namespace tasklens::analysis
