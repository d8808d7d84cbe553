// Events -> provisional strands, nodes and edges (see builder_state.hpp).
#include <algorithm>
#include <functional>
#include <tuple>

#include "model/builder_state.hpp"

namespace tasklens::model::detail {

void Builder::on_implicit_begin(const Event& e, uint32_t thread) {
  if ((e.f[4] & kTaskInitial) && root_task_ != kNone && thread_task_[thread] != kNone) {
    // A thread of the program's own enters OpenMP: its initial task is the thread's task.
    uint32_t& s = slot(e.f[1]);
    if (s == kNone) {
      s = thread_task_[thread];
      if (out_ && st_[s].initial_id == 0) {  // (one pass: forgotten when the thread's task is)
        st_[s].initial_id = e.f[1];
        ++id_pages_[e.f[1] >> 40].pages[(e.f[1] & ((uint64_t{1} << 40) - 1)) / kIdPage]->live;
      }
    }
    current_[thread] = s;
    return;
  }
  uint32_t t = task(e.f[1]);
  TaskState& ts = tasks_[t];
  ts.implicit = true;
  ts.started = true;
  current_[thread] = t;
  if (e.f[4] & kTaskInitial) {
    if (root_task_ == kNone) {
      root_task_ = t;
      root_start_ = e.time;
      ts.node = ts.scope = 0;
      open_strand(t, thread, e.time);
    } else if (t != root_task_) {
      ++other_initial_tasks_;  // a thread the program started itself entered OpenMP
    }
    return;
  }
  uint32_t ri = region(e.f[0]);
  Region& r = regions_[ri];
  if (r.node == kNone) {  // region began before the recording or on an unseen thread
    r.node = new_node(NodeKind::Parallel, 0);
    ++anomalies_;
  }
  r.implicit.push_back(t);
  r.team_size = static_cast<uint32_t>(e.f[2]);
  ts.team_size = r.team_size;
  ts.more().region = ri;
  ts.node = ts.scope = new_node(NodeKind::ImplicitTask, phase_node(r, ri, 0));
  cur_code_ = site_address(r.node);
  uint32_t s = open_strand(t, thread, e.time);
  edge(r.fork_strand, s);
}

void Builder::on_create(const Event& e, uint32_t thread) {
  uint32_t p = task(e.f[0]);
  uint32_t c = task(e.f[1]);
  if (c == p || tasks_[c].node != kNone) {  // created twice: a damaged trace (the second would
    ++anomalies_;                           // make its parent's list of children a cycle)
    return;
  }
  TaskState& ps = tasks_[p];
  if (ps.scope == kNone) {  // a parent we never saw start: hang it under the root
    ps.node = ps.scope = 0;
    ++anomalies_;
  }
  uint32_t creator = close_strand(p);
  ++explicit_tasks_;
  saw_constructs_ = true;
  TaskState& cs = tasks_[c];
  cs.parent = p;
  cs.flags = static_cast<uint32_t>(e.f[2]);
  cs.team_size = ps.team_size;
  cs.origin = kOriginOpenMP;
  // libomp flags every task of a one-thread team "undeferred", exactly like if(0) tasks, so
  // there the flag says nothing about the program: only a real team tells them apart.
  if ((cs.flags & kTaskUndeferred) && cs.team_size <= 1) {
    cs.flags &= ~kTaskUndeferred;
    ++serialized_undeferred_;
  }
  cs.creator_strand = creator;
  hold(creator);
  uint32_t scope = ps.scope;
  bool in_taskloop = nodes_[scope].kind == NodeKind::Taskloop;
  cs.node = cs.scope = new_node(NodeKind::Task, scope);
  if (!in_taskloop) {  // taskloop's tasks are parts of the taskloop instance
    nodes_[cs.node].site = site(e.f[3], SiteKind::Task, scope);
    keep_site_code(cs.node);
    nodes_[cs.node].instance = instance_count_++;
  } else if (out_) {
    stream_taskloop_task(scope, cs.node);
  }
  if (out_) {  // (its taskwaits join it through a join: no list of children)
    ++st_[p].children;
    if (st_[p].join == kNone) {
      const uint32_t j = stream_join();
      st_[p].join = j;
      hold(j);
    }
    st_[c].parent_join = st_[p].join;
    hold(st_[p].join);
    ++ss_[st_[p].join].undone;
  } else {
    cs.pending_next = ps.pending_head;
    ps.pending_head = c;
  }
  uint32_t s = open_strand(p, thread, e.time);
  edge(creator, s);
}

void Builder::on_schedule(const Event& e, uint32_t thread) {
  uint32_t prior = e.f[0] ? task(e.f[0]) : kNone;
  uint64_t status = e.f[1];
  if (status == kStatusEarlyFulfill || status == kStatusLateFulfill || status == kStatusDetach) {
    if (out_) stream_unsupported("detached tasks (detach clauses)");
  }
  if (status == kStatusEarlyFulfill || status == kStatusLateFulfill) {
    // Not a switch: the thread that called omp_fulfill_event goes on with its own task.
    if (prior != kNone) on_fulfill(prior, thread, e.time, status == kStatusLateFulfill);
    return;
  }
  uint32_t next = e.f[2] ? task(e.f[2]) : kNone;
  if (prior != kNone) {
    TaskState& ps = tasks_[prior];
    close_strand(prior);
    if (status == kStatusComplete || status == kStatusCancel || status == kStatusDetach) {
      ps.done = true;
      end_task_regions(prior);
      if (ps.extra && ps.extra->chunks) join_chunks(prior);
      if ((ps.flags & kTaskUndeferred) && ps.parent != kNone)
        add_next_pred(ps.parent, kTaskRef | prior);
      // Fulfilled while its body ran: it completes at the later of the two.
      if (status != kStatusDetach && ps.extra && ps.extra->fulfill_join != kNone) {
        edge(ps.prev, ps.extra->fulfill_join);
        ps.prev = ps.extra->fulfill_join;
      }
      if (out_) stream_task_ended(prior);  // (may retire it: `ps` is not used below)
    }
  }
  current_[thread] = next;
  if (next == kNone) return;
  TaskState& ns = tasks_[next];
  if (!ns.started) {
    ns.started = true;
    if (ns.scope == kNone) {  // created before recording started
      ns.node = ns.scope = 0;
      ++anomalies_;
    }
    cur_code_ = site_address(ns.node);  // a task's code starts at its creation site
    uint32_t s = open_strand(next, thread, e.time);
    edge(tasks_[next].creator_strand, s);
    if (out_) {
      drop(tasks_[next].creator_strand);
      tasks_[next].creator_strand = kNone;
    }
  } else if (!ns.waiting && !ns.done && ns.open == kNone) {
    continue_task(next, thread, e.time);  // resumed after a suspension (taskyield, untied)
  }
}

// A task with a detach clause completes once its body has ended AND its event is fulfilled
// (omp_fulfill_event), so what the fulfilling task did before that call comes before the
// detached task's end: before the tasks that depend on it, and before the taskwait, taskgroup
// or barrier that waits for it. The runtime reports the call as a switch from the detached
// task to no task (early: its body still runs; late: it has ended). The fulfilment becomes a
// strand of no work in the fulfilling task, after its strand up to the call, and that strand
// is the detached task's end: it follows the detached task's body at once if that has ended,
// else when it does. It lies in the fulfilling task, not the detached one, so that in the
// serial order it comes after the work it waits for (the fulfilling task is usually created
// after the detached one, and the tasks waiting for the detached one after both).
void Builder::on_fulfill(uint32_t detached, uint32_t thread, uint64_t time, bool late) {
  const uint32_t me = current_[thread];
  // A thread outside every task (one the program made), or the task fulfilling its own event:
  // no other strand comes before the end.
  if (me == kNone || me == detached || tasks_[me].scope == kNone || tasks_[detached].scope == kNone)
    return;
  const bool was_open = tasks_[me].open != kNone;
  const uint32_t before = close_strand(me);
  const uint32_t scope = tasks_[me].scope;
  const uint32_t join =
      add_strand(PStrand{0, time, time, thread, scope, code_id(cur_code_), code_id(cur_code_)});
  append_item(scope, join);
  fulfill_joins_.push_back(join);
  edge(before, join);
  if (was_open) edge(before, open_strand(me, thread, time));
  TaskState& ds = tasks_[detached];
  if (late && ds.done) {
    edge(ds.prev, join);
    ds.prev = join;
  } else {
    ds.more().fulfill_join = join;
  }
}

void Builder::on_sync_begin(const Event& e, uint32_t thread) {
  uint32_t t = task(e.f[1]);
  TaskState& ts = tasks_[t];
  uint64_t kind = e.f[0];
  if (ts.scope == kNone) return;
  if (kind == kSyncTaskgroup) {
    uint32_t prev = close_strand(t);
    uint32_t g = new_node(NodeKind::Taskgroup, ts.scope);
    nodes_[g].site = site(e.f[2], SiteKind::Taskgroup, ts.scope);
    keep_site_code(g);
    nodes_[g].instance = instance_count_++;
    ts.scope = g;
    edge(prev, open_strand(t, thread, e.time));
  } else if (kind == kSyncTaskwait) {
    ts.pre_wait = close_strand(t);
    hold(ts.pre_wait);
    ts.waiting = true;
  } else if (is_barrier(kind)) {
    uint32_t last = close_strand(t);
    ts.waiting = true;
    if (!ts.implicit || ts.peek().region == kNone) return;
    TaskExtra& x = ts.more();
    Region& r = regions_[x.region];
    if (r.ended) return;
    uint32_t ph = phase_node(r, x.region, x.phase);
    if (nodes_[ph].tail_strand == kNone) {
      uint32_t j = add_strand(PStrand{0, 0, 0, kNone, ph});
      nodes_[ph].tail_strand = nodes_[ph].join_strand = j;
      if (out_) stream_barrier_join(ph, j);
    }
    edge(last, nodes_[ph].join_strand);
    x.phase++;
  }
}

void Builder::on_sync_end(const Event& e, uint32_t thread) {
  uint32_t t = task(e.f[1]);
  TaskState& ts = tasks_[t];
  uint64_t kind = e.f[0];
  if (ts.scope == kNone) return;
  if (kind == kSyncTaskgroup) {
    ts.waiting = false;
    uint32_t g = ts.scope;
    if (nodes_[g].kind != NodeKind::Taskgroup) {  // unmatched end
      ++anomalies_;
      return;
    }
    uint32_t prev = close_strand(t);
    ts.scope = nodes_[g].parent;
    uint32_t s = open_strand(t, thread, e.time);
    edge(prev, s);
    nodes_[g].join_strand = s;
    if (out_) {  // the tasks that ended inside it (its join goes with its node), and itself
      if (sn_[g].join != kNone) edge(sn_[g].join, s);
      close_node(g);
    }
  } else if (kind == kSyncTaskwait) {
    ts.waiting = false;
    uint32_t s = open_strand(t, thread, e.time);
    edge(ts.pre_wait, s);
    if (out_) stream_taskwait_ended(t, s, e.time);
    for (uint32_t c = ts.pending_head; c != kNone; c = tasks_[c].pending_next) {
      edge_from_task_end(c, s);
      if (nodes_[tasks_[c].node].parent == ts.scope) tasks_[c].joined_in_scope = true;
      // libomp reports a task's end before its parent's count drops: one begun and not ended
      // here lost its end (close_unended).
      note_join(c, e.time);
    }
    ts.pending_head = kNone;
    if (out_) release_deps(t);
    if (ts.extra && ts.extra->deps) ts.extra->deps->clear();  // every earlier sibling has finished
  } else if (is_barrier(kind)) {
    if (!ts.implicit || ts.peek().region == kNone) {
      ts.waiting = false;
      return;
    }
    TaskExtra& x = ts.more();
    Region& r = regions_[x.region];
    if (r.ended) return;  // a worker's late end-of-region events
    ts.waiting = false;
    if (x.phase == 0) {  // no barrier began (a damaged trace)
      ++anomalies_;
      return;
    }
    uint32_t ph = phase_node(r, x.region, x.phase);
    if (out_) close_node(ts.node);
    ts.node = ts.scope = new_node(NodeKind::ImplicitTask, ph);
    uint32_t s = open_strand(t, thread, e.time);
    edge(nodes_[phase_node(r, x.region, x.phase - 1)].join_strand, s);
  }
}

void Builder::on_dependences(const Event& e) {
  uint32_t t = task(e.f[0]);
  TaskState& ts = tasks_[t];
  if (ts.parent == kNone) return;
  TaskState& ps = tasks_[ts.parent];
  TaskExtra& px = ps.more();
  if (!px.deps) px.deps = new DepTable();
  const std::vector<uint64_t>& g = *e.groups;
  for (size_t i = 0; i + 1 < g.size(); i += 2) {
    uint64_t address = g[i], type = g[i + 1];
    if (type == kDepSource || type == kDepSink) continue;  // doacross: not modelled
    DepEntry& d = (*px.deps)[address];
    if (d.last_out != kNone && d.last_out != t) add_next_pred(t, kTaskRef | d.last_out);
    if (type == kDepIn) {
      d.readers.push_back(t);
      dep_hold(t);
    } else {  // out, inout, mutexinoutset, inoutset: ordered after everything before
      for (uint32_t r : d.readers)
        if (r != t) add_next_pred(t, kTaskRef | r);
      const std::vector<uint32_t> readers = std::move(d.readers);
      d.readers.clear();
      const uint32_t last_out = d.last_out;
      d.last_out = t;
      dep_hold(t);
      // (The streaming mode: they may retire now, which touches no dependence.)
      for (uint32_t r : readers) dep_drop(r);
      if (last_out != kNone) dep_drop(last_out);
    }
  }
}

// The code address an event carries (its codeptr_ra), 0 if it has none.
uint64_t Builder::code_of(const Event& e) {
  switch (e.kind) {
    case EventKind::ParallelBegin:
      return e.f[4];
    case EventKind::ParallelEnd:
    case EventKind::TaskCreate:
    case EventKind::WorkBegin:
      return e.f[3];
    case EventKind::SyncBegin:
    case EventKind::SyncEnd:
    case EventKind::WorkEnd:
      return e.f[2];
    case EventKind::MaskedBegin:
    case EventKind::MaskedEnd:
      return e.f[1];
    case EventKind::TbbSpawn:
      return e.f[4];
    case EventKind::UserThreadCreate:
      return e.f[1];
    case EventKind::TbbWaitBegin:
    case EventKind::TbbWaitEnd:
      return e.f[2];
    default:
      return 0;
  }
}

void Builder::handle(const Event& e, uint32_t thread) {
  if (out_) [[unlikely]] {
    stream_check(e);
    ++stream_events_;
    if (!late_children_.empty()) stream_settle_late_children();
  }
  // The time since this thread's previous event belongs to the task it was running, unless
  // that task was waiting inside the runtime.
  last_before_ = last_metric_[thread];
  uint64_t delta = e.metric - last_metric_[thread];
  uint64_t* last_extra = extra_count_ ? &last_extra_[size_t(thread) * extra_count_] : nullptr;
  // TSC ticks the thread was not running the program since its previous event: preempted,
  // blocked, or waiting inside the recorder (a RecorderStall ends such a wait at its time).
  uint64_t off = 0, stalled = 0;
  OffCpuSplit split;
  if (__builtin_expect(e.kind == EventKind::RecorderStall, 0) && tsc_metric_ >= 0) {
    uint64_t span = tsc_metric_ == 0 ? delta : e.values[tsc_metric_] - last_extra[tsc_metric_ - 1];
    stalled = std::min<uint64_t>(e.f[0], span);
    off = stalled;
  }
  if (thread < off_cpu_.size()) {
    uint64_t from = tsc_metric_ == 0 ? last_metric_[thread] : last_extra[tsc_metric_ - 1];
    // Off-CPU time inside a stall is the stall's.
    off += preempted_between(thread, from, e.time - stalled, split);
  }
  // The recorder's own cost per event is in the measured intervals: one event's worth per
  // event. An event that took its predecessor's timestamp (one-thread teams) ends an empty
  // interval: its cost is in the next one, so what an interval cannot hold is carried on.
  uint64_t& debt = probe_debt_[thread];
  debt = std::min(debt + probe_ticks_, kProbeDebtEvents * probe_ticks_);
  uint64_t removed = 0, probe = 0;
  if (tsc_metric_ == 0) {
    removed = std::min(off, delta);
    delta -= removed;
    probe = std::min(delta, debt);
    delta -= probe;
    debt -= probe;
  }
  last_metric_[thread] = e.metric;
  const uint64_t interval_begin = last_time_[thread];
  last_time_[thread] = e.time;
  // The kind of interval this event ends (the runtime's own cost between the two events).
  uint16_t key_before = 0, key = 0;
  if (track_keys_) {
    key = interval_event_key(e);
    key_before = last_key_[thread];
    last_key_[thread] = key;
  }
  uint64_t extra_delta[trace::kMaxMetrics];
  for (uint32_t m = 0; m < extra_count_; ++m) {
    uint64_t v = e.values[m + 1], d = v - last_extra[m];
    if (int(m) + 1 == tsc_metric_) {
      d = off < d ? d - off : 0;
      probe = std::min(d, debt);
      d -= probe;
      debt -= probe;
    }
    extra_delta[m] = d;
    last_extra[m] = v;
  }
  cur_code_ = code_of(e);
  uint32_t cur = current_[thread];
  if (cur != kNone) {
    TaskState& ts = tasks_[cur];
    if (ts.open != kNone && !ts.waiting && mutex_wait_[thread]) {
      // Not work, but inside the strand's span once the strand goes on (below).
      if (wait_strand_[thread] != ts.open) wait_pending_[thread] = 0;
      wait_strand_[thread] = ts.open;
      wait_pending_[thread] += e.time > interval_begin ? e.time - interval_begin : 0;
    }
    if (ts.open != kNone && !ts.waiting && !mutex_wait_[thread]) {
      PStrand& s = strands_[ts.open];
      // (Before main() or the first parallel region: what is taken out of the program's first
      // strand below is given back if its start-up is cleared.)
      const bool start_up =
          __builtin_expect(first_parallel_ && !main_marked_, 0) && cur == root_task_;
      RemovedTotals before;
      if (start_up) {
        if (start_up_strand_ != ts.open) start_up_removed_ = {};
        start_up_strand_ = ts.open;
        before = removed_totals();
      }
      if (wait_pending_[thread] != 0) {
        if (wait_strand_[thread] == ts.open) waited_total_ += wait_pending_[thread];
        wait_pending_[thread] = 0;
      }
      if (key_before != 0) {
        const bool solo = ts.team_size <= 1;
        if (options_.interval_sink) {
          options_.interval_sink->push_back(IntervalSample{key_before, key, solo, delta});
        } else {
          const uint64_t runtime = runtime_costs_.take(key_before, key, solo, delta);
          delta -= runtime;
          runtime_total_ += runtime;
        }
      }
      s.work += delta;
      s.end = e.time;
      if (extra_count_) add_extra_work(ts.open, extra_delta);
      probe_total_ += probe;
      if (removed) {
        // What was taken out of this strand, by cause (the removal was clipped at its size).
        // Other metrics (counters) stop while the thread is off the CPU: nothing to take out.
        uint64_t s_part = std::min(stalled, removed);
        uint64_t b_part = std::min(split.blocked, removed - s_part);
        uint64_t f_part = std::min(split.faults, removed - s_part - b_part);
        stalled_total_ += s_part;
        blocked_total_ += b_part;
        faults_total_ += f_part;
        if (b_part && out_) {
          ss_[ts.open].blocked += b_part;
        } else if (b_part) {
          if (!blocked_work_.empty() && blocked_work_.back().strand == ts.open)
            blocked_work_.back().ticks += b_part;
          else
            blocked_work_.push_back(StrandBlocked{ts.open, b_part});
        }
        preempted_total_ += removed - s_part - b_part - f_part;
      }
      if (!open_regions_.empty()) {
        auto it = open_regions_.find(cur);
        if (it != open_regions_.end() && it->second.depth > 0) {
          OpenRegion& r = it->second;
          if (out_) {  // (the streaming mode: the strand's own list)
            if (stream_regions_) {
              auto& list = ss_[ts.open].regions;
              if (!list.empty() && list.back().first == r.region)
                list.back().second += delta;
              else
                list.emplace_back(r.region, delta);
            }
          } else if (r.entry != kNone && region_work_[r.entry].strand == ts.open &&
                     region_work_[r.entry].region == r.region) {
            region_work_[r.entry].work += delta;
          } else {
            r.entry = static_cast<uint32_t>(region_work_.size());
            region_work_.push_back(RegionWork{ts.open, r.region, delta});
          }
        }
      }
      if (start_up) start_up_removed_ += removed_totals() - before;
    }
  }
  switch (e.kind) {
    case EventKind::ThreadBegin:  // (the program's own threads meet OpenMP in their task)
      current_[thread] = thread_task_[thread];
      break;
    case EventKind::ThreadEnd:
      current_[thread] = kNone;
      break;
    case EventKind::ImplicitBegin:
      saw_openmp_ = true;
      on_implicit_begin(e, thread);
      break;
    case EventKind::ImplicitEnd: {
      uint32_t t = task(e.f[0]);
      TaskState& ts = tasks_[t];
      const uint32_t region = ts.peek().region;
      bool late = region != kNone && regions_[region].ended;
      if (!late) close_strand(t);
      ts.done = true;
      end_task_regions(t);
      if (current_[thread] == t) current_[thread] = kNone;
      // (The initial task of a thread of the program's own is the thread's task: it ends there.)
      if (out_ && ts.implicit) stream_implicit_ended(t);
      if (out_ && !ts.implicit && ts.joined_in_scope && ts.node != kNone) stream_task_ended(t);
      break;
    }
    case EventKind::ParallelBegin: {
      saw_openmp_ = saw_constructs_ = true;
      uint32_t enc = task(e.f[0]);
      uint32_t ri = region(e.f[1]);
      TaskState& es = tasks_[enc];
      if (es.scope == kNone) {
        es.node = es.scope = 0;
        if (root_task_ == kNone) root_task_ = enc;
      }
      Region& r = regions_[ri];
      r.encountering = enc;
      r.fork_strand = close_strand(enc);
      hold(r.fork_strand);
      if (first_parallel_ && !main_marked_ && enc == root_task_ && r.fork_strand != kNone &&
          strands_[r.fork_strand].start == root_start_) {
        // Without the recorder's main() marker the runtime started at the program's first
        // OpenMP construct, and this strand is the runtime's own initialization (thread pool,
        // affinity), not program work.
        clear_work(r.fork_strand);
        strands_[r.fork_strand].start = strands_[r.fork_strand].end;
      }
      first_parallel_ = false;
      r.node = new_node(NodeKind::Parallel, es.scope);
      nodes_[r.node].site = site(e.f[4], SiteKind::Parallel, es.scope);
      keep_site_code(r.node);
      nodes_[r.node].instance = instance_count_++;
      es.waiting = true;
      break;
    }
    case EventKind::ParallelEnd: {
      uint32_t ri = region(e.f[0]);
      Region& r = regions_[ri];
      r.ended = true;
      uint32_t enc = r.encountering != kNone ? r.encountering : task(e.f[1]);
      TaskState& es = tasks_[enc];
      es.waiting = false;
      current_[thread] = enc;
      if (es.scope == kNone) break;
      uint32_t s = open_strand(enc, thread, e.time);
      r.post_strand = s;
      edge(es.prev, s);  // keeps the encountering task's own order
      if (!r.phases.empty()) edge(nodes_[r.phases.back()].join_strand, s);
      for (uint32_t it : r.implicit) {
        TaskState& is = tasks_[it];
        edge(is.open != kNone ? is.open : is.prev, s);
        if (is.open != kNone) close_strand(it);
      }
      if (out_) stream_region_ended(r, s);
      break;
    }
    case EventKind::TaskCreate:
      on_create(e, thread);
      break;
    case EventKind::TaskSchedule:
      on_schedule(e, thread);
      break;
    case EventKind::SyncBegin:
      on_sync_begin(e, thread);
      break;
    case EventKind::SyncEnd:
      on_sync_end(e, thread);
      break;
    case EventKind::SyncWaitBegin: {
      uint32_t t = task(e.f[1]);
      close_strand(t);
      tasks_[t].waiting = true;
      break;
    }
    case EventKind::SyncWaitEnd:
      break;  // SyncEnd follows and opens the next strand
    case EventKind::MutexWaitBegin:
      mutex_wait_[thread] = 1;
      break;
    case EventKind::MutexWaitEnd:
      mutex_wait_[thread] = 0;
      if (e.f[0] == kMutexOrdered) on_ordered(e, thread, true);
      break;
    case EventKind::MutexReleased:
      if (e.f[0] == kMutexOrdered) on_ordered(e, thread, false);
      break;
    case EventKind::RecorderStall:  // its time was taken out of the strand above
      break;
    case EventKind::Mark:
      if (e.f[0] == static_cast<uint64_t>(trace::MarkKind::MainStart) && root_task_ != kNone &&
          tasks_[root_task_].open != kNone) {
        // The recorder started the runtime just before main(): what came before is the
        // runtime's initialization; the program's serial code starts now.
        clear_work(tasks_[root_task_].open);
        PStrand& s = strands_[tasks_[root_task_].open];
        s.start = s.end = e.time;
        main_marked_ = true;
      } else if (e.f[0] == static_cast<uint64_t>(trace::MarkKind::RuntimeInitBegin)) {
        mutex_wait_[thread] = 1;  // like a wait for a lock: the time until the end is not work
      } else if (e.f[0] == static_cast<uint64_t>(trace::MarkKind::RuntimeInitEnd)) {
        mutex_wait_[thread] = 0;
      } else if (e.f[0] == static_cast<uint64_t>(trace::MarkKind::MainReturn)) {
        mutex_wait_[thread] = 1;  // until the end: no event can clear it
      }
      break;
    case EventKind::WorkBegin:
      on_work_begin(e, thread);
      break;
    case EventKind::WorkEnd:
      on_work_end(e, thread);
      break;
    case EventKind::Dispatch:
      on_dispatch(e, thread);
      break;
    case EventKind::Dependences:
      on_dependences(e);
      break;
    case EventKind::RegionBegin:
    case EventKind::RegionEnd:
      on_region(e, thread);
      break;
    case EventKind::TbbSpawn:
      on_tbb_spawn(e, thread);
      break;
    case EventKind::TbbWaitBegin:
    case EventKind::TbbWaitEnd:
      on_tbb_wait(e, thread);
      break;
    case EventKind::TbbNodeBody:
      on_tbb_node_body(e);
      break;
    case EventKind::TbbPipeline:
      on_tbb_pipeline(e);
      break;
    case EventKind::TbbFilterBegin:
    case EventKind::TbbFilterEnd:
      on_tbb_filter(e, thread);
      break;
    case EventKind::ChunkBegin:
    case EventKind::ChunkEnd:
      on_chunk(e, thread);
      break;
    case EventKind::UserThreadCreate:
    case EventKind::UserThreadStart:
    case EventKind::UserThreadEnd:
    case EventKind::UserThreadJoinBegin:
    case EventKind::UserThreadJoinEnd:
      on_user_thread(e, thread);
      break;
    case EventKind::TbbWaitDone:  // the EventDecoder hands these out in their full forms
    case EventKind::TbbRunBegin:
    case EventKind::TbbRunEnd:
    case EventKind::TbbSpawnIn:
    case EventKind::TbbWaitBeginIn:
    case EventKind::TbbRunBeginIn:
    case EventKind::DependencesDelta:  // (handed out as Dependences)
      break;
    case EventKind::MaskedBegin:
    case EventKind::MaskedEnd: {
      uint32_t t = task(e.f[0]);
      TaskState& ts = tasks_[t];
      if (ts.scope == kNone) break;
      uint32_t prev = close_strand(t);
      if (e.kind == EventKind::MaskedBegin) {
        uint32_t n = new_node(NodeKind::Masked, ts.scope);
        nodes_[n].site = site(e.f[1], SiteKind::Masked, ts.scope);
        keep_site_code(n);
        nodes_[n].instance = instance_count_++;
        ts.scope = n;
      } else if (nodes_[ts.scope].kind == NodeKind::Masked) {
        const uint32_t masked = ts.scope;
        ts.scope = nodes_[masked].parent;
        if (out_) close_node(masked);
      }
      edge(prev, open_strand(t, thread, e.time));
      break;
    }
  }
}

// User regions: nested ones count for the outermost; a region belongs to the task that began
// it, so its work follows the task across strands (and threads, for untied tasks).
void Builder::on_region(const Event& e, uint32_t thread) {
  uint32_t t = current_[thread];
  if (t == kNone) {  // outside every task (a runtime thread between tasks)
    ++region_unmatched_;
    return;
  }
  // The recorder numbers at most kMaxRegionNames names; a larger id (a damaged trace) would
  // size the model's table of names.
  if (e.f[0] >= trace::kMaxRegionNames)
    throw trace::TraceError(trace_.path() + ": corrupted event stream: region id " +
                            std::to_string(e.f[0]) + " is out of range");
  const uint32_t name = static_cast<uint32_t>(e.f[0]);
  if (e.kind == EventKind::RegionBegin) {
    OpenRegion& r = open_regions_[t];
    if (r.depth++ == 0) {
      r.region = name;
      r.entry = kNone;
    }
    return;
  }
  auto it = open_regions_.find(t);
  if (it == open_regions_.end() || it->second.depth == 0) {
    ++region_unmatched_;
    return;
  }
  if (--it->second.depth == 0) {
    if (it->second.region != name) ++region_unmatched_;
    open_regions_.erase(it);
  }
}

}  // namespace tasklens::model::detail
