// Scheduling delays (analysis/sched.hpp): one sweep over the strands' start, end and ready times.
#include "analysis/sched.hpp"

#include <algorithm>

#include "analysis/radix_sort.hpp"

namespace tasklens::analysis {
namespace {

using model::kNone;

using model::is_timed;

enum class PathState : uint8_t { None, Running, Waiting };

enum EventKind : uint8_t { kEnd, kStart, kReady, kPath };
struct Event {
  uint64_t time;
  EventKind kind;
  uint8_t path_state;  // kPath only
  uint32_t arg;        // strand (kEnd, kStart, kReady)
};

// Sorts events by (time, kind), keeping the order of equal ones. Every event's time is >= first.
void sort_events(std::vector<Event>& events, uint64_t first) {
  radix_sort(events, [first](const Event& e) { return ((e.time - first) << 2) | e.kind; });
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
      if (src == kNone || eff_end[p] > r || (eff_end[p] == r && eff_src[p] > src)) {
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
  const uint32_t P = out.workers;
  out.cumulative = uint64_t{P} * out.elapsed;
  auto worker_of = [&](uint32_t thread) {
    return static_cast<uint32_t>(std::lower_bound(threads.begin(), threads.end(), thread) -
                                 threads.begin());
  };

  // Ready times, with the timed strand that made each ready (the ready path's previous strand).
  const ReadyTimes rt = ready_times(m);
  const std::vector<uint64_t>& ready = rt.ready;
  const std::vector<uint32_t>& ready_src = rt.source;

  std::vector<Event> events;
  events.reserve(size_t{3} * out.timed_strands + 16);
  for (uint32_t s = 0; s < n; ++s) {
    const model::Strand& st = m.strands[s];
    if (!is_timed(st)) continue;
    const uint64_t end = std::max(st.start, st.end);
    ++out.per_worker[worker_of(st.thread)].strands;
    events.push_back({st.start, kStart, 0, s});
    events.push_back({end, kEnd, 0, s});
    if (ready_src[s] != kNone && ready[s] < st.start) {
      events.push_back({std::max(ready[s], out.first), kReady, 0, s});
      out.ready_ticks += st.start - std::max(ready[s], out.first);
    }
    out.running_ticks += end - st.start;
  }

  // The ready path, walked back from the strand ending last, as intervals clipped so that they
  // tile [path start, last) (a predecessor ending after its successor started, clock skew, is cut).
  {
    uint32_t cur = kNone;
    for (uint32_t s = 0; s < n; ++s)
      if (is_timed(m.strands[s]) && (cur == kNone || m.strands[s].end >= m.strands[cur].end))
        cur = s;
    uint64_t cursor = out.last;
    std::vector<uint32_t> path;
    while (cur != kNone) {
      path.push_back(cur);
      const model::Strand& st = m.strands[cur];
      const uint64_t run_begin = std::min(st.start, cursor);
      if (run_begin < cursor) events.push_back({run_begin, kPath, uint8_t(PathState::Running), 0});
      cursor = run_begin;
      if (ready_src[cur] == kNone) break;
      const uint64_t wait_begin = std::min(std::max(ready[cur], out.first), cursor);
      if (wait_begin < cursor)
        events.push_back({wait_begin, kPath, uint8_t(PathState::Waiting), 0});
      cursor = wait_begin;
      cur = ready_src[cur];
    }
    std::reverse(path.begin(), path.end());
    out.path.strands = std::move(path);
  }

  sort_events(events, out.first);

  std::vector<uint32_t> busy(P, 0);  // running strands per worker
  std::vector<uint64_t> idle_since(P, out.first);
  std::vector<uint32_t> touched, idle;
  uint32_t running = 0, ready_count = 0, busy_workers = 0;
  PathState path_state = PathState::None;
  size_t i = 0;
  while (i < events.size()) {
    const uint64_t t = events[i].time;
    touched.clear();
    for (; i < events.size() && events[i].time == t; ++i) {
      const Event& e = events[i];
      switch (e.kind) {
        case kStart: {
          const uint32_t w = worker_of(m.strands[e.arg].thread);
          if (busy[w]++ == 0) ++busy_workers;
          ++running;
          if (ready_src[e.arg] != kNone && ready[e.arg] < m.strands[e.arg].start) --ready_count;
          touched.push_back(w);
          break;
        }
        case kEnd: {
          const uint32_t w = worker_of(m.strands[e.arg].thread);
          if (--busy[w] == 0) --busy_workers;
          --running;
          touched.push_back(w);
          break;
        }
        case kReady:
          ++ready_count;
          break;
        case kPath:
          path_state = PathState(e.path_state);
          break;
      }
    }
    for (uint32_t w : touched)
      if (busy[w] == 0) idle_since[w] = t;  // (a worker that ended and restarted at t is busy)
    if (out.steps.empty() || out.steps.back().running != running ||
        out.steps.back().ready != ready_count) {
      if (!out.steps.empty() && out.steps.back().time == t)
        out.steps.back() = {t, running, ready_count};
      else
        out.steps.push_back({t, running, ready_count});
    }
    out.max_running = std::max(out.max_running, running);
    out.max_ready = std::max(out.max_ready, ready_count);

    const uint64_t next = i < events.size() ? std::min(events[i].time, out.last) : out.last;
    if (next <= t) continue;
    const uint64_t dt = next - t;
    const uint32_t idle_workers = P - busy_workers;
    const uint32_t delayed = std::min(idle_workers, ready_count);
    switch (path_state) {
      case PathState::None:
        out.path.before += dt;
        break;
      case PathState::Running:
        out.path.work += dt;
        break;
      case PathState::Waiting:
        (idle_workers ? out.path.scheduler_delay : out.path.busy_delay) += dt;
        break;
    }
    idle.clear();
    for (uint32_t w = 0; w < P; ++w) {
      if (busy[w]) {
        out.per_worker[w].time.work += dt;
      } else {
        idle.push_back(w);
      }
    }
    if (delayed > 0 && delayed < idle.size()) {
      std::partial_sort(
          idle.begin(), idle.begin() + delayed, idle.end(), [&](uint32_t a, uint32_t b) {
            return idle_since[a] != idle_since[b] ? idle_since[a] < idle_since[b] : a < b;
          });
    }
    for (size_t k = 0; k < idle.size(); ++k) {
      SchedComponents& c = out.per_worker[idle[k]].time;
      if (k < delayed)
        c.delay += dt;
      else if (path_state == PathState::Waiting)
        c.no_work_sched += dt;
      else
        c.no_work_app += dt;
    }
  }
  for (const SchedWorker& w : out.per_worker) {
    out.total.work += w.time.work;
    out.total.delay += w.time.delay;
    out.total.no_work_sched += w.time.no_work_sched;
    out.total.no_work_app += w.time.no_work_app;
  }
  return out;
}

std::vector<SchedPoint> downsample(const std::vector<SchedStep>& steps, uint64_t first,
                                   uint64_t last, size_t points) {
  std::vector<SchedPoint> out;
  if (points == 0 || last <= first) return out;
  const uint64_t elapsed = last - first;
  const uint64_t n = std::min<uint64_t>(points, elapsed);
  out.resize(n);
  for (uint64_t k = 0; k < n; ++k) {
    out[k].begin = first + uint64_t((unsigned __int128)elapsed * k / n);
    out[k].end = first + uint64_t((unsigned __int128)elapsed * (k + 1) / n);
  }
  // Walk the steps and the intervals together.
  size_t s = 0;
  for (uint64_t k = 0; k < n; ++k) {
    SchedPoint& p = out[k];
    // The step in effect at p.begin: the last one with time <= begin.
    while (s + 1 < steps.size() && steps[s + 1].time <= p.begin) ++s;
    for (size_t j = s; j < steps.size() && steps[j].time < p.end; ++j) {
      const uint64_t a = std::max(steps[j].time, p.begin);
      const uint64_t b = j + 1 < steps.size() ? std::min(steps[j + 1].time, p.end) : p.end;
      if (b <= a) continue;
      p.running_ticks += uint64_t{steps[j].running} * (b - a);
      p.ready_ticks += uint64_t{steps[j].ready} * (b - a);
      p.running_max = std::max(p.running_max, steps[j].running);
      p.ready_max = std::max(p.ready_max, steps[j].ready);
    }
    const double len = double(p.end - p.begin);
    p.running = double(p.running_ticks) / len;
    p.ready = double(p.ready_ticks) / len;
  }
  return out;
}

}  // namespace tasklens::analysis
