// Scheduling delays (analysis/sched.hpp): one sweep over the strands' start, end and ready times.
#include "analysis/sched.hpp"

#include <algorithm>

#include "analysis/radix_sort.hpp"

namespace tasklens::analysis {
namespace {

using model::kNone;

using model::is_timed;

// Sorts events by (time, kind), keeping the order of equal ones. Every event's time is >= first.
void sort_events(std::vector<SchedEvent>& events, uint64_t first) {
  radix_sort(events, [first](const SchedEvent& e) { return ((e.time - first) << 2) | e.kind; });
}

// The order strands were met in (ties, above).
uint32_t order_of(const model::Model& m, uint32_t s) {
  return m.strand_order.size() == m.strands.size() ? m.strand_order[s] : s;
}

}  // namespace

ReadyTimes ready_times(const model::Model& m) {
  const uint32_t n = static_cast<uint32_t>(m.strands.size());
  ReadyTimes out;
  out.ready.assign(n, 0);
  out.source.assign(n, kNone);
  // Effective ends: a synthetic strand ends when its latest predecessor does.
  std::vector<uint64_t> eff_end(n, 0);
  std::vector<uint32_t> eff_src(n, kNone);
  for (uint32_t s = 0; s < n; ++s) {
    uint64_t r = 0;
    uint32_t src = kNone;
    for (uint32_t p : m.preds_of(s)) {
      if (eff_src[p] == kNone) continue;
      if (src == kNone || eff_end[p] > r ||
          (eff_end[p] == r && order_of(m, eff_src[p]) > order_of(m, src))) {
        r = eff_end[p];
        src = eff_src[p];
      }
    }
    out.ready[s] = r;
    out.source[s] = src;
    if (is_timed(m.strands[s])) {
      eff_end[s] = m.strands[s].end;
      eff_src[s] = s;
    } else {
      eff_end[s] = r;
      eff_src[s] = src;
    }
  }
  return out;
}

Timeline timeline_of(const model::Model& m) {
  Timeline out;
  std::vector<uint8_t> seen;  // by thread: a bitmap, not a sort of every strand's thread
  bool any = false;
  for (const model::Strand& st : m.strands) {
    if (!is_timed(st)) continue;
    if (st.thread >= seen.size()) seen.resize(st.thread + 1, 0);
    if (!seen[st.thread]) out.threads.push_back(st.thread);
    seen[st.thread] = 1;
    ++out.timed_strands;
    if (!any) {
      out.first = st.start;
      out.last = st.end;
      any = true;
    }
    out.first = std::min(out.first, st.start);
    out.last = std::max(out.last, std::max(st.start, st.end));
  }
  std::sort(out.threads.begin(), out.threads.end());
  return out;
}

Schedule compute_schedule(const model::Model& m) {
  Schedule out;
  const uint32_t n = static_cast<uint32_t>(m.strands.size());

  // Workers and the timeline.
  const Timeline tl = timeline_of(m);
  const std::vector<uint32_t>& threads = tl.threads;
  out.timed_strands = tl.timed_strands;
  out.first = tl.first;
  out.last = tl.last;
  const bool any = tl.timed_strands > 0;
  out.workers = static_cast<uint32_t>(threads.size());
  out.per_worker.resize(threads.size());
  for (size_t w = 0; w < threads.size(); ++w) out.per_worker[w].thread = threads[w];
  if (!any || out.last <= out.first) return out;
  out.timestamps = true;
  out.elapsed = out.last - out.first;
  out.cumulative = uint64_t{out.workers} * out.elapsed;
  auto worker_of = [&](uint32_t thread) {
    return static_cast<uint32_t>(std::lower_bound(threads.begin(), threads.end(), thread) -
                                 threads.begin());
  };

  // Ready times, with the timed strand that made each ready (the ready path's previous strand).
  const ReadyTimes rt = ready_times(m);
  const std::vector<uint64_t>& ready = rt.ready;
  const std::vector<uint32_t>& ready_src = rt.source;

  std::vector<SchedEvent> events;
  events.reserve(size_t{3} * out.timed_strands + 16);
  for (uint32_t s = 0; s < n; ++s) {
    const model::Strand& st = m.strands[s];
    if (!is_timed(st)) continue;
    ++out.per_worker[worker_of(st.thread)].strands;
    const bool had_ready = ready_src[s] != kNone && ready[s] < st.start;
    events.push_back(
        {st.start, st.thread | (had_ready ? SchedEvent::kHadReady : 0u), SchedEvent::kStart});
    events.push_back({std::max(st.start, st.end), st.thread, SchedEvent::kEnd});
    if (had_ready) events.push_back({std::max(ready[s], out.first), 0, SchedEvent::kReady});
  }

  // The ready path, walked back from the strand ending last, as intervals clipped so that they
  // tile [path start, last) (a predecessor ending after its successor started, clock skew, is cut).
  {
    uint32_t cur = kNone;
    for (uint32_t s = 0; s < n; ++s)
      if (is_timed(m.strands[s]) &&
          (cur == kNone || m.strands[s].end > m.strands[cur].end ||
           (m.strands[s].end == m.strands[cur].end && order_of(m, s) > order_of(m, cur))))
        cur = s;
    uint64_t cursor = out.last;
    std::vector<uint32_t> path;
    while (cur != kNone) {
      path.push_back(cur);
      const model::Strand& st = m.strands[cur];
      const uint64_t run_begin = std::min(st.start, cursor);
      if (run_begin < cursor)
        events.push_back({run_begin, uint32_t(PathState::Running), SchedEvent::kPath});
      cursor = run_begin;
      if (ready_src[cur] == kNone) break;
      const uint64_t wait_begin = std::min(std::max(ready[cur], out.first), cursor);
      if (wait_begin < cursor)
        events.push_back({wait_begin, uint32_t(PathState::Waiting), SchedEvent::kPath});
      cursor = wait_begin;
      cur = ready_src[cur];
    }
    std::reverse(path.begin(), path.end());
    out.path.length = path.size();
    out.path.strands = std::move(path);
  }

  sort_events(events, out.first);
  ScheduleSweep sweep(out, [&out](const SchedStep& step) { out.steps.push_back(step); });
  for (const SchedEvent& e : events) sweep.add(e);
  sweep.finish();
  return out;
}

// ---- The sweep

ScheduleSweep::ScheduleSweep(Schedule& out, std::function<void(const SchedStep&)> on_step)
    : out_(out), on_step_(std::move(on_step)) {
  const uint32_t P = static_cast<uint32_t>(out.per_worker.size());
  for (uint32_t w = 0; w < P; ++w) {
    const uint32_t thread = out.per_worker[w].thread;
    if (thread >= worker_of_.size()) worker_of_.resize(thread + 1, kNone);
    worker_of_[thread] = w;
  }
  busy_.assign(P, 0);
  idle_since_.assign(P, out.first);
}

void ScheduleSweep::add(const SchedEvent& e) {
  const uint64_t t = std::max(e.time, out_.first);
  if (open_ && t != t_) close_time(t);
  open_ = true;
  t_ = t;
  switch (e.kind) {
    case SchedEvent::kStart: {
      const uint32_t w = worker_of_[e.arg & ~SchedEvent::kHadReady];
      if (busy_[w]++ == 0) ++busy_workers_;
      ++running_;
      if (e.arg & SchedEvent::kHadReady) --ready_;
      touched_.push_back(w);
      break;
    }
    case SchedEvent::kEnd: {
      const uint32_t w = worker_of_[e.arg];
      if (--busy_[w] == 0) --busy_workers_;
      --running_;
      touched_.push_back(w);
      break;
    }
    case SchedEvent::kReady:
      ++ready_;
      break;
    case SchedEvent::kPath:
      path_state_ = PathState(e.arg);
      break;
  }
}

void ScheduleSweep::finish() {
  if (open_) close_time(out_.last);
  if (step_held_) on_step_(step_);
  step_held_ = false;
  for (const SchedWorker& w : out_.per_worker) {
    out_.total.work += w.time.work;
    out_.total.delay += w.time.delay;
    out_.total.no_work_sched += w.time.no_work_sched;
    out_.total.no_work_app += w.time.no_work_app;
  }
}

// The events at t_ are all in: which workers went idle, the step, then the time from t_ to
// `next` (the next event's, `last` at the end) split into work, delay and no-work.
void ScheduleSweep::close_time(uint64_t next) {
  const uint64_t t = t_;
  open_ = false;
  for (uint32_t w : touched_)
    if (busy_[w] == 0) idle_since_[w] = t;  // (a worker that ended and restarted at t is busy)
  touched_.clear();
  if (!step_held_ || step_.running != running_ || step_.ready != ready_) {
    if (step_held_ && step_.time != t) on_step_(step_);
    step_ = {t, running_, ready_};
    step_held_ = true;
  }
  out_.max_running = std::max(out_.max_running, running_);
  out_.max_ready = std::max(out_.max_ready, ready_);

  next = std::min(next, out_.last);
  if (next <= t) return;
  const uint64_t dt = next - t;
  const uint32_t P = static_cast<uint32_t>(busy_.size());
  const uint32_t idle_workers = P - busy_workers_;
  const uint32_t delayed = std::min(idle_workers, ready_);
  switch (path_state_) {
    case PathState::None:
      out_.path.before += dt;
      break;
    case PathState::Running:
      out_.path.work += dt;
      break;
    case PathState::Waiting:
      (idle_workers ? out_.path.scheduler_delay : out_.path.busy_delay) += dt;
      break;
  }
  out_.running_ticks += uint64_t{running_} * dt;
  out_.ready_ticks += uint64_t{ready_} * dt;
  idle_.clear();
  for (uint32_t w = 0; w < P; ++w) {
    if (busy_[w]) {
      out_.per_worker[w].time.work += dt;
    } else {
      idle_.push_back(w);
    }
  }
  if (delayed > 0 && delayed < idle_.size()) {
    std::partial_sort(
        idle_.begin(), idle_.begin() + delayed, idle_.end(), [&](uint32_t a, uint32_t b) {
          return idle_since_[a] != idle_since_[b] ? idle_since_[a] < idle_since_[b] : a < b;
        });
  }
  for (size_t k = 0; k < idle_.size(); ++k) {
    SchedComponents& c = out_.per_worker[idle_[k]].time;
    if (k < delayed)
      c.delay += dt;
    else if (path_state_ == PathState::Waiting)
      c.no_work_sched += dt;
    else
      c.no_work_app += dt;
  }
}

// ---- The step function sampled

Downsampler::Downsampler(uint64_t first, uint64_t last, size_t points) {
  if (points == 0 || last <= first) return;
  const uint64_t elapsed = last - first;
  const uint64_t n = std::min<uint64_t>(points, elapsed);
  out_.resize(n);
  for (uint64_t k = 0; k < n; ++k) {
    out_[k].begin = first + uint64_t((unsigned __int128)elapsed * k / n);
    out_[k].end = first + uint64_t((unsigned __int128)elapsed * (k + 1) / n);
  }
}

void Downsampler::segment(const SchedStep& s, uint64_t begin, uint64_t end) {
  while (next_ < out_.size() && out_[next_].end <= begin) ++next_;
  for (size_t k = next_; k < out_.size() && out_[k].begin < end; ++k) {
    SchedPoint& p = out_[k];
    const uint64_t a = std::max(begin, p.begin), b = std::min(end, p.end);
    if (b <= a) continue;
    p.running_ticks += uint64_t{s.running} * (b - a);
    p.ready_ticks += uint64_t{s.ready} * (b - a);
    p.running_max = std::max(p.running_max, s.running);
    p.ready_max = std::max(p.ready_max, s.ready);
  }
}

void Downsampler::step(const SchedStep& s) {
  if (any_) segment(held_, held_.time, s.time);
  held_ = s;
  any_ = true;
}

std::vector<SchedPoint> Downsampler::finish() {
  if (any_ && !out_.empty()) segment(held_, held_.time, out_.back().end);
  any_ = false;
  for (SchedPoint& p : out_) {
    const double len = double(p.end - p.begin);
    p.running = double(p.running_ticks) / len;
    p.ready = double(p.ready_ticks) / len;
  }
  return std::move(out_);
}

std::vector<SchedPoint> downsample(const std::vector<SchedStep>& steps, uint64_t first,
                                   uint64_t last, size_t points) {
  Downsampler d(first, last, points);
  for (const SchedStep& s : steps) d.step(s);
  return d.finish();
}

std::vector<SchedPoint> points(const Schedule& schedule, size_t points) {
  for (const auto& [n, sampled] : schedule.sampled)
    if (n == points) return sampled;
  return downsample(schedule.steps, schedule.first, schedule.last, points);
}

}  // namespace tasklens::analysis
