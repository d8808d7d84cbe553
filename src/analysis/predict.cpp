// Predicted time on P cores (analysis/predict.hpp): measured overheads, a work-stealing
// simulation of the recorded DAG, and Hoffmann and Rauber's extrapolation.
#include "analysis/predict.hpp"

#include <algorithm>
#include <cmath>
#include <queue>
#include <stdexcept>

#include "analysis/radix_sort.hpp"
#include "analysis/sched.hpp"

namespace tasklens::analysis {
namespace {

using model::kNone;

using model::is_timed;

bool is_task_node(model::NodeKind k) {
  return k == model::NodeKind::Task || k == model::NodeKind::ImplicitTask ||
         k == model::NodeKind::Chunk || k == model::NodeKind::Program;
}

// Each strand's task (innermost Task, ImplicitTask, Chunk or Program node).
std::vector<uint32_t> tasks_of(const model::Model& m) {
  std::vector<uint32_t> node_task(m.nodes.size(), 0);
  for (uint32_t v = 0; v < m.nodes.size(); ++v) {
    const model::Node& n = m.nodes[v];
    node_task[v] = is_task_node(n.kind) || n.parent == kNone ? v : node_task[n.parent];
  }
  std::vector<uint32_t> out(m.strands.size());
  for (uint32_t s = 0; s < m.strands.size(); ++s) out[s] = node_task[m.strands[s].node];
  return out;
}

std::vector<StartClass> start_classes(const model::Model& m, const std::vector<uint32_t>& task) {
  const uint32_t n = static_cast<uint32_t>(m.strands.size());
  std::vector<StartClass> out(n, StartClass::First);
  for (uint32_t u = 0; u < n; ++u) {
    const uint32_t np = m.pred_begin[u + 1] - m.pred_begin[u];
    if (np == 0) continue;
    bool through_join = false;
    for (uint32_t p : m.preds_of(u))
      if (!is_timed(m.strands[p])) through_join = true;
    if (np >= 2 || through_join)
      out[u] = StartClass::Sync;
    else
      out[u] = task[*m.preds_of(u).begin()] == task[u] ? StartClass::Continue : StartClass::Spawn;
  }
  return out;
}

// A worker's deque: pushes and its own pops at the back (the bottom), steals at the front (the
// top). A vector with a moving head: cheaper than std::deque for these sizes.
class WorkDeque {
 public:
  bool empty() const { return head_ == items_.size(); }
  void push_back(uint32_t u) { items_.push_back(u); }
  uint32_t pop_back() {
    const uint32_t u = items_.back();
    items_.pop_back();
    if (empty()) reset();
    return u;
  }
  uint32_t pop_front() {
    const uint32_t u = items_[head_++];
    if (empty()) {
      reset();
    } else if (head_ >= 1024 && 2 * head_ >= items_.size()) {
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
    return u;
  }

 private:
  void reset() {
    items_.clear();
    head_ = 0;
  }
  std::vector<uint32_t> items_;
  size_t head_ = 0;
};

}  // namespace

OverheadCost trimmed_mean(std::vector<uint64_t>& gaps) {
  OverheadCost c;
  c.samples = gaps.size();
  if (gaps.empty()) return c;
  std::sort(gaps.begin(), gaps.end());
  size_t keep = gaps.size() - gaps.size() / 100;
  const uint64_t median = gaps[gaps.size() / 2];
  if (median > 0)
    keep = std::min<size_t>(
        keep, std::upper_bound(gaps.begin(), gaps.end(), kGapOutlier * median) - gaps.begin());
  double sum = 0;
  for (size_t i = 0; i < keep; ++i) sum += static_cast<double>(gaps[i]);
  c.ticks = sum / static_cast<double>(keep);
  return c;
}

std::vector<uint64_t> strand_durations(const model::Model& m) {
  std::vector<uint64_t> d(m.strands.size(), 0);
  const bool tsc = m.metric == "tsc";
  for (size_t s = 0; s < m.strands.size(); ++s) {
    const model::Strand& st = m.strands[s];
    if (!is_timed(st)) continue;
    d[s] = tsc ? st.work : (st.end > st.start ? st.end - st.start : 0);
  }
  return d;
}

void finish_overheads(Overheads& o, const model::Model& m, uint64_t timed_strands,
                      uint32_t threads) {
  if (o.steal.samples == 0) {
    o.steal.ticks = o.spawn.ticks;
    o.steal.measured = false;
  }
  // What the model took out of the strands as the runtime's cost is paid again at every strand.
  if (m.runtime_removed > 0 && timed_strands > 0) {
    o.inside = double(m.runtime_removed) / double(timed_strands);
    for (OverheadCost* c : {&o.spawn, &o.steal, &o.sync, &o.cont}) c->ticks += o.inside;
  }
  if (o.spawn.samples == 0) o.spawn.measured = false;
  if (o.sync.samples == 0) o.sync.measured = false;
  if (o.cont.samples == 0) o.cont.measured = false;
  // (task_cost is in the metric's ticks: TSC ticks when the metric is the TSC.)
  if (threads > 1 && m.task_cost > 0 && m.task_count > 0 && m.metric == "tsc")
    o.one_worker_task = double(m.task_cost);
}

Overheads without_contention(const Overheads& measured) {
  if (!(measured.one_worker_task > 0)) return measured;
  Overheads o = measured;
  const double task = measured.one_worker_task;
  const double ratio = measured.steal.measured && measured.spawn.measured &&
                               measured.spawn.ticks > 0 && measured.steal.ticks > 0
                           ? measured.steal.ticks / measured.spawn.ticks
                           : 1.0;
  o.spawn.ticks = task;
  // (Never above the steal as measured: a spawn measured near 0 would make the ratio huge.)
  o.steal.ticks = std::max(task, std::min(ratio * task, measured.steal.ticks));
  o.sync.ticks = 0;
  o.cont.ticks = 0;
  o.inside = 0;  // (inside the task cost)
  o.contention_removed = true;
  return o;
}

Overheads measure_overheads(const model::Model& m) {
  const uint32_t n = static_cast<uint32_t>(m.strands.size());
  const std::vector<uint32_t> task = tasks_of(m);
  const std::vector<StartClass> cls = start_classes(m, task);
  // Ready times and the timed strand that made each strand ready (sched.hpp's definition).
  const ReadyTimes rt = ready_times(m);
  const std::vector<uint64_t>& ready = rt.ready;
  const std::vector<uint32_t>& ready_src = rt.source;
  // Timed strands by (thread, start, id): grouped by thread with a counting pass, then each
  // thread's (start, id) pairs sorted in place (contiguous keys: no indirect compares).
  uint32_t threads = 0;
  for (uint32_t s = 0; s < n; ++s)
    if (is_timed(m.strands[s])) threads = std::max(threads, m.strands[s].thread + 1);
  std::vector<size_t> first(threads + 1, 0);
  for (uint32_t s = 0; s < n; ++s)
    if (is_timed(m.strands[s])) ++first[m.strands[s].thread + 1];
  for (uint32_t t = 0; t < threads; ++t) first[t + 1] += first[t];
  std::vector<std::pair<uint64_t, uint32_t>> by_start(first[threads]);
  {
    std::vector<size_t> fill(first.begin(), first.end() - 1);
    for (uint32_t s = 0; s < n; ++s)
      if (is_timed(m.strands[s])) by_start[fill[m.strands[s].thread]++] = {m.strands[s].start, s};
  }
  // Each thread's range sorted by start, stably (ties stay in id order), on keys read from the
  // pairs themselves.
  uint64_t min_start = ~uint64_t{0};
  for (const auto& [start, s] : by_start) min_start = std::min(min_start, start);
  for (uint32_t t = 0; t < threads; ++t)
    radix_sort(by_start.data() + first[t], by_start.data() + first[t + 1],
               [min_start](const std::pair<uint64_t, uint32_t>& x) { return x.first - min_start; });
  std::vector<uint32_t> order(by_start.size());
  for (size_t i = 0; i < by_start.size(); ++i) order[i] = by_start[i].second;
  std::vector<uint64_t> spawn, steal, sync, cont;
  // The worker is free when every strand it started before has ended: the latest end so far, not
  // the previous strand's (a zero-length strand can start with a long one, as when a one-thread
  // team runs a task the moment it is created).
  uint64_t busy_until = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    const uint32_t u = order[i];
    const model::Strand& st = m.strands[u];
    if (i == 0 || m.strands[order[i - 1]].thread != st.thread) {
      busy_until = st.end;
      continue;
    }
    const uint64_t worker_free = busy_until;
    busy_until = std::max(busy_until, st.end);
    if (ready_src[u] == kNone) continue;
    const uint64_t free = std::max(ready[u], worker_free);
    const uint64_t gap = st.start > free ? st.start - free : 0;
    if (m.strands[ready_src[u]].thread != st.thread)
      steal.push_back(gap);
    else if (cls[u] == StartClass::Sync)
      sync.push_back(gap);
    else if (cls[u] == StartClass::Spawn)
      spawn.push_back(gap);
    else
      cont.push_back(gap);
  }
  Overheads o;
  o.spawn = trimmed_mean(spawn);
  o.steal = trimmed_mean(steal);
  o.sync = trimmed_mean(sync);
  o.cont = trimmed_mean(cont);
  finish_overheads(o, m, order.size(), threads);
  return o;
}

namespace {

// The model's strands as the simulator's graph: a node per strand, in the model's numbering.
SimGraph graph_of(const model::Model& m, const std::vector<uint64_t>& durations) {
  const uint32_t n = static_cast<uint32_t>(m.strands.size());
  const std::vector<uint32_t> task = tasks_of(m);
  const std::vector<StartClass> cls = start_classes(m, task);
  SimGraph g;
  g.nodes.resize(n);
  g.pred_begin.assign(m.pred_begin.begin(), m.pred_begin.begin() + n + 1);
  g.preds.resize(m.preds.size());
  for (uint32_t u = 0; u < n; ++u) {
    SimGraph::Node& x = g.nodes[u];
    x.duration = durations[u];
    x.start_class = static_cast<uint8_t>(cls[u]);
    x.timed = is_timed(m.strands[u]);
    x.order = m.strand_order.size() == n ? m.strand_order[u] : u;
    for (uint32_t i = m.pred_begin[u]; i < m.pred_begin[u + 1]; ++i)
      g.preds[i] = m.preds[i] | (task[m.preds[i]] == task[u] ? SimGraph::kSameTask : 0);
  }
  for (const model::DivisibleStrand& d : m.divisible)
    if (d.strand < n) g.nodes[d.strand].iterations = std::max<uint32_t>(d.iterations, 1);
  return g;
}

}  // namespace

Simulator::Simulator(const model::Model& m, std::vector<uint64_t> durations)
    : Simulator(graph_of(m, durations)) {}

Simulator::Simulator(const SimGraph& g) {
  const uint32_t n = static_cast<uint32_t>(g.nodes.size());
  if (g.nodes.size() > kSuccStrand)
    throw std::length_error(
        "predict: more than 2^30 strands or nodes; the simulator cannot number them");
  strands_.resize(size_t{n} + 1);
  for (uint32_t p : g.preds) ++strands_[(p & ~SimGraph::kSameTask) + 1].succ_begin;
  if (g.collapsed()) inner_.resize(n);
  for (uint32_t v = 0; v < n; ++v) {
    const SimGraph::Node& x = g.nodes[v];
    SimStrand& y = strands_[v];
    strands_[v + 1].succ_begin += y.succ_begin;
    y.duration = x.duration;
    y.start_class = y.one_worker_start = x.start_class;
    y.timed = x.timed;
    y.iterations = std::max<uint32_t>(x.iterations, 1);
    y.model_id = x.order;
    if (!inner_.empty()) {
      inner_[v] = {x.inner[0], x.inner[1], x.inner[2]};
      one_worker_starts_[uint8_t(StartClass::Continue)] += x.inner[0];
      one_worker_starts_[uint8_t(StartClass::Spawn)] += x.inner[1];
      one_worker_starts_[uint8_t(StartClass::Sync)] += x.inner[2];
      one_worker_strands_ += x.inner[0] + x.inner[1] + x.inner[2];
    }
  }
  succ_.resize(g.preds.size());
  std::vector<uint32_t> fill(n);
  for (uint32_t v = 0; v < n; ++v) fill[v] = strands_[v].succ_begin;
  preds_.resize(n);
  for (uint32_t u = 0; u < n; ++u) {
    preds_[u] = g.pred_begin[u + 1] - g.pred_begin[u];
    for (uint32_t i = g.pred_begin[u]; i < g.pred_begin[u + 1]; ++i) {
      const uint32_t p = g.preds[i] & ~SimGraph::kSameTask;
      const bool same_task = (g.preds[i] & SimGraph::kSameTask) && strands_[p].timed;
      succ_[fill[p]++] = u | (strands_[u].timed ? kSuccTimed : 0) | (same_task ? kSuccSameTask : 0);
    }
    if (preds_[u] == 0) roots_.push_back(u);
  }
  std::sort(roots_.begin(), roots_.end(),
            [&](uint32_t a, uint32_t b) { return strands_[a].model_id < strands_[b].model_id; });
  number_in_one_worker_order();
}

template <class OnUntimed>
uint32_t Simulator::complete_strand(uint32_t s, uint32_t* remaining, std::vector<uint32_t>& stack,
                                    std::vector<uint32_t>& ready, OnUntimed&& on_untimed) const {
  const SimStrand* const strand = strands_.data();
  const uint32_t* const succ = succ_.data();
  uint32_t continuation = kNone;
  ready.clear();
  stack.clear();
  // s's own successors first (the common case: no synthetic strand in between), then those
  // reached through synthetic join strands, which complete at once.
  for (uint32_t x = s;;) {
    const uint32_t* const end = succ + strand[x + 1].succ_begin;
    for (const uint32_t* i = succ + strand[x].succ_begin; i != end; ++i) {
      const uint32_t u = *i & kSuccStrand;
      if (--remaining[u] != 0) continue;
      if (!(*i & kSuccTimed)) {
        stack.push_back(u);
      } else if (x == s && continuation == kNone && (*i & kSuccSameTask)) {
        continuation = u;
      } else {
        ready.push_back(u);
      }
    }
    if (stack.empty()) break;
    x = stack.back();
    stack.pop_back();
    on_untimed(x);
  }
  if (ready.size() > 1)
    std::sort(ready.begin(), ready.end(),
              [&](uint32_t a, uint32_t b) { return strand[a].model_id < strand[b].model_id; });
  return continuation;
}

void Simulator::number_in_one_worker_order() {
  const uint32_t n = static_cast<uint32_t>(preds_.size());
  std::vector<uint32_t> remaining = preds_;
  std::vector<uint32_t> order;  // new id -> old id: the order strands complete in
  order.reserve(n);
  std::vector<uint32_t> deque, stack, ready_list;
  const auto complete = [&](uint32_t s) -> uint32_t {
    const uint32_t continuation = complete_strand(s, remaining.data(), stack, ready_list,
                                                  [&](uint32_t u) { order.push_back(u); });
    deque.insert(deque.end(), ready_list.begin(), ready_list.end());
    return continuation;
  };
  for (uint32_t u : roots_)
    if (!strands_[u].timed) {
      order.push_back(u);
      complete(u);
    }
  for (auto it = roots_.rbegin(); it != roots_.rend(); ++it)
    if (strands_[*it].timed) deque.push_back(*it);
  for (uint32_t next = kNone;;) {
    if (next == kNone) {
      if (deque.empty()) break;
      next = deque.back();
      deque.pop_back();
      strands_[next].one_worker_start = strands_[next].start_class;
    } else {
      strands_[next].one_worker_start = 4;
    }
    ++one_worker_starts_[strands_[next].one_worker_start];
    order.push_back(next);
    one_worker_busy_ += strands_[next].duration;
    ++one_worker_strands_;
    next = complete(next);
  }
  if (order.size() != n) return;  // not a DAG of the model's kind: keep the model's numbering

  std::vector<uint32_t> new_id(n);
  for (uint32_t k = 0; k < n; ++k) new_id[order[k]] = k;
  std::vector<SimStrand> strands(size_t{n} + 1);
  std::vector<uint32_t> succ(succ_.size()), preds(n);
  uint32_t at = 0;
  for (uint32_t k = 0; k < n; ++k) {
    const SimStrand& old = strands_[order[k]];
    strands[k] = old;
    strands[k].succ_begin = at;
    for (uint32_t i = old.succ_begin; i < strands_[order[k] + 1].succ_begin; ++i)
      succ[at++] = new_id[succ_[i] & kSuccStrand] | (succ_[i] & ~kSuccStrand);
    preds[k] = preds_[order[k]];
  }
  strands[n].succ_begin = at;
  if (!inner_.empty()) {
    std::vector<std::array<uint32_t, 3>> inner(n);
    for (uint32_t k = 0; k < n; ++k) inner[k] = inner_[order[k]];
    inner_ = std::move(inner);
  }
  for (uint32_t& u : roots_) u = new_id[u];
  strands_ = std::move(strands);
  succ_ = std::move(succ);
  preds_ = std::move(preds);
}

SimulationResult simulate(const model::Model& m, const std::vector<uint64_t>& dur,
                          const Overheads& o, uint32_t P) {
  return Simulator(m, dur).run(P, o);
}

SimulationResult Simulator::run(uint32_t P, const Overheads& o) const {
  if (P != 1) return run_events(P, o);
  const auto cost = [&](double ticks) { return static_cast<uint64_t>(std::llround(ticks)); };
  const uint64_t* starts = one_worker_starts_;
  SimulationResult r;
  r.workers = 1;
  r.busy = one_worker_busy_;
  r.strands_run = one_worker_strands_;
  if (o.one_worker_task > 0)
    r.overhead = cost(o.one_worker_task) * starts[uint8_t(StartClass::Spawn)];
  else
    r.overhead = cost(o.sync.ticks) * starts[uint8_t(StartClass::Sync)] +
                 cost(o.spawn.ticks) * starts[uint8_t(StartClass::Spawn)] +
                 cost(o.cont.ticks) * (starts[uint8_t(StartClass::Continue)] + starts[4]);
  r.time = r.busy + r.overhead;
  return r;
}

SimulationResult Simulator::run_events(uint32_t P, const Overheads& o) const {
  SimulationResult r;
  r.workers = P;
  if (P == 0) return r;
  const SimStrand* const strand = strands_.data();
  std::vector<uint32_t> remaining = preds_;

  const auto cost = [&](double ticks) { return static_cast<uint64_t>(std::llround(ticks)); };
  const uint64_t c_spawn = cost(o.spawn.ticks), c_steal = cost(o.steal.ticks),
                 c_sync = cost(o.sync.ticks), c_cont = cost(o.cont.ticks);
  const auto class_cost = [&](uint8_t start) {
    switch (start) {
      case uint8_t(StartClass::Sync):
        return c_sync;
      case uint8_t(StartClass::Spawn):
        return c_spawn;
      case uint8_t(StartClass::Continue):
      case 4:  // run as its predecessor's continuation
        return c_cont;
      default:  // StartClass::First
        return uint64_t{0};
    }
  };
  // What a strand pays on one worker (Overheads::one_worker_task: a spawned strand the measured
  // task cost, any other nothing; else its class's cost).
  const uint64_t c_task = cost(o.one_worker_task);
  const auto one_worker_cost = [&](uint8_t start) {
    if (o.one_worker_task <= 0) return class_cost(start);
    return start == uint8_t(StartClass::Spawn) ? c_task : uint64_t{0};
  };
  // What a strand pays to start: by how it starts in this schedule, but never less than it paid
  // on one worker (predict.hpp: no schedule does less of the runtime's work for a strand). One
  // worker pays its one-worker cost.
  const auto charge = [&](uint32_t u, uint64_t by_schedule) {
    const uint64_t floor = one_worker_cost(strand[u].one_worker_start);
    return P == 1 ? floor : std::max(by_schedule, floor);
  };
  const auto own_cost = [&](uint32_t u) { return charge(u, class_cost(strand[u].start_class)); };
  // A collapsed node's strands after its first start as the full simulation mostly starts them
  // on their worker: popped or continued, not stolen (their class's cost, never less than on one
  // worker). A class measured on few gaps does not set what thousands of collapsed strands pay
  // (one gap of a sleeping worker woken would): they pay what they pay on one worker then.
  const auto inner_start = [&](uint8_t start, const OverheadCost& by_class, uint64_t ticks) {
    return P == 1 || by_class.samples < kInnerClassSamples
               ? one_worker_cost(start)
               : std::max(ticks, one_worker_cost(start));
  };
  const uint64_t in_cont = inner_start(4, o.cont, c_cont),
                 in_spawn = inner_start(uint8_t(StartClass::Spawn), o.spawn, c_spawn),
                 in_sync = inner_start(uint8_t(StartClass::Sync), o.sync, c_sync);
  std::vector<WorkDeque> deques(P);
  size_t queued = 0;
  // Idle workers as a bit set, so that handing out queued strands costs O(P / 64) per event, not
  // O(P).
  std::vector<uint64_t> idle((P + 63) / 64, 0);
  for (uint32_t w = 0; w < P; ++w) idle[w / 64] |= uint64_t{1} << (w % 64);
  std::vector<uint32_t> running(P, kNone);
  using Ev = std::pair<uint64_t, uint32_t>;  // (finish time, worker)
  std::priority_queue<Ev, std::vector<Ev>, std::greater<Ev>> heap;

  // Shares of split strands (SimStrand::iterations): ids kShare | index in deques and
  // running[]; shares_left[s]: the shares of strand s not yet finished.
  struct Share {
    uint32_t strand;
    uint64_t duration;
  };
  std::vector<Share> shares;
  std::vector<uint32_t> shares_left;
  constexpr uint32_t kShare = 0x80000000u;
  const auto start = [&](uint32_t w, uint32_t u, uint64_t at, uint64_t overhead) {
    idle[w / 64] &= ~(uint64_t{1} << (w % 64));
    running[w] = u;
    r.overhead += overhead;
    uint64_t duration;
    if (!(u & kShare)) ++r.strands_run;
    if (u & kShare) {
      duration = shares[u & ~kShare].duration;
    } else if (strand[u].iterations > 1 && P > 1) {
      // Split into k even shares of the iterations: this worker runs the first, the others
      // wait on its deque (the last pushed, share 1, is popped first).
      const uint64_t c = strand[u].iterations, k = std::min<uint64_t>(c, P);
      const uint64_t d = strand[u].duration;
      if (shares_left.empty()) shares_left.assign(strands_.size(), 0);
      shares_left[u] = static_cast<uint32_t>(k);
      // Share i: iterations c/k, the first c%k one more; its duration their part of d, cut at
      // whole ticks from the iterations before it, so that the shares add up to d exactly.
      const auto through = [&](uint64_t i) {  // the iterations of shares 0 .. i-1
        return i * (c / k) + std::min(i, c % k);
      };
      const auto ticks_through = [&](uint64_t i) -> uint64_t {
        if (through(i) >= c) return d;
        return static_cast<uint64_t>(static_cast<long double>(d) *
                                     static_cast<long double>(through(i)) /
                                     static_cast<long double>(c));
      };
      const auto share_of = [&](uint64_t i) { return ticks_through(i + 1) - ticks_through(i); };
      for (uint64_t i = k; i-- > 1;) {
        shares.push_back({u, share_of(i)});
        deques[w].push_back(kShare | static_cast<uint32_t>(shares.size() - 1));
        ++queued;
      }
      running[w] = kShare | static_cast<uint32_t>(shares.size());
      shares.push_back({u, share_of(0)});
      duration = shares.back().duration;
    } else {
      duration = strand[u].duration;
      if (!inner_.empty()) {
        const uint64_t inner = inner_cost(u, in_cont, in_spawn, in_sync);
        overhead += inner;
        r.overhead += inner;
        r.strands_run += inner_[u][0] + inner_[u][1] + inner_[u][2];
      }
    }
    r.busy += duration;
    heap.push({at + overhead + duration, w});
  };

  // Completes strand s on worker w (timed or not): readies successors; untimed ones complete at
  // once. Returns the continuation of s, if it became ready and is timed.
  std::vector<uint32_t> stack, ready_list;
  const auto complete = [&](uint32_t s, uint32_t w) -> uint32_t {
    const uint32_t continuation =
        complete_strand(s, remaining.data(), stack, ready_list, [](uint32_t) {});
    for (uint32_t u : ready_list) deques[w].push_back(u);
    queued += ready_list.size();
    return continuation;
  };

  // Gives idle worker w something to run at time t: its own deque's bottom, else a steal.
  const auto feed = [&](uint32_t w, uint64_t t) {
    if (!deques[w].empty()) {
      const uint32_t u = deques[w].pop_back();
      --queued;
      start(w, u, t, (u & kShare) ? c_spawn : own_cost(u));
      return;
    }
    if (queued == 0) return;
    for (uint32_t k = 1; k < P; ++k) {
      const uint32_t v = (w + k) % P;
      if (deques[v].empty()) continue;
      const uint32_t u = deques[v].pop_front();
      --queued;
      ++r.steals;
      start(w, u, t, (u & kShare) ? c_steal : charge(u, c_steal));
      return;
    }
  };

  // Strands without predecessors: ready at 0 on worker 0 (untimed ones complete at once).
  for (uint32_t u : roots_)
    if (!strand[u].timed) complete(u, 0);
  for (auto it = roots_.rbegin(); it != roots_.rend(); ++it) {
    if (!strand[*it].timed) continue;
    deques[0].push_back(*it);  // the bottom (back) gets the lowest id: it runs first
    ++queued;
  }
  for (uint32_t w = 0; w < P; ++w) feed(w, 0);

  uint64_t now = 0;
  while (!heap.empty()) {
    const auto [t, w] = heap.top();
    heap.pop();
    now = t;
    uint32_t s = running[w];
    idle[w / 64] |= uint64_t{1} << (w % 64);
    running[w] = kNone;
    if (s & kShare) {
      s = shares[s & ~kShare].strand;
      if (--shares_left[s] != 0) {  // other shares of the strand still run or wait
        feed(w, t);
        for (size_t k = 0; k < idle.size() && queued != 0; ++k)
          for (uint64_t bits = idle[k]; bits != 0 && queued != 0; bits &= bits - 1)
            feed(static_cast<uint32_t>(k * 64 + __builtin_ctzll(bits)), t);
        continue;
      }
    }
    const uint32_t cont = complete(s, w);
    if (cont != kNone)
      start(w, cont, t, charge(cont, c_cont));
    else
      feed(w, t);
    for (size_t k = 0; k < idle.size() && queued != 0; ++k)
      for (uint64_t bits = idle[k]; bits != 0 && queued != 0; bits &= bits - 1)
        feed(static_cast<uint32_t>(k * 64 + __builtin_ctzll(bits)), t);
  }
  r.time = now;
  return r;
}

double extrapolate_value(const std::vector<double>& xs, const std::vector<double>& ys, double x) {
  double sum = 0, weights = 0;
  for (size_t i = 0; i + 1 < xs.size(); ++i) {
    const double slope = (ys[i + 1] - ys[i]) / (xs[i + 1] - xs[i]);
    const double y = ys[i] + slope * (x - xs[i]);
    const double weight = 1.0 / (1.0 + std::fabs(x - 0.5 * (xs[i] + xs[i + 1])));
    sum += weight * y;
    weights += weight;
  }
  return weights > 0 ? sum / weights : (ys.empty() ? 0.0 : ys[0]);
}

ExtrapolationPoint extrapolate(const std::vector<ExtrapolationInput>& runs, uint32_t threads) {
  ExtrapolationPoint out;
  out.threads = threads;
  std::vector<double> xs;
  for (const ExtrapolationInput& r : runs) xs.push_back(r.threads);
  const double x = threads;
  const auto at = [&](const std::vector<double>& ys) {
    return std::max(0.0, extrapolate_value(xs, ys, x));
  };
  std::vector<double> serial;
  for (const ExtrapolationInput& r : runs) serial.push_back(static_cast<double>(r.serial));
  out.serial = at(serial);
  // Every type key of every run, in first-seen order.
  std::vector<std::string> keys;
  for (const ExtrapolationInput& r : runs)
    for (const ExtrapolationInput::Type& t : r.types)
      if (std::find(keys.begin(), keys.end(), t.key) == keys.end()) keys.push_back(t.key);
  for (const std::string& key : keys) {
    std::vector<double> count, size, idle;
    for (const ExtrapolationInput& r : runs) {
      const auto it = std::find_if(r.types.begin(), r.types.end(),
                                   [&](const ExtrapolationInput::Type& t) { return t.key == key; });
      count.push_back(it == r.types.end() ? 0.0 : it->count);
      size.push_back(it == r.types.end() ? 0.0 : it->mean_size);
      idle.push_back(it == r.types.end() ? 0.0 : it->mean_idle);
    }
    out.task_time += at(count) * (at(size) + at(idle));
  }
  out.time = out.serial + (threads ? out.task_time / threads : 0.0);
  return out;
}

}  // namespace tasklens::analysis
