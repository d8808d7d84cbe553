#include "model/builder.hpp"

#include <algorithm>
#include <cstring>
#include <queue>
#include <string>
#include <unordered_map>
#include <utility>

namespace tasklens::model {
namespace {

using trace::Event;
using trace::EventKind;

// OMPT values (omp-tools.h) the builder interprets.
constexpr uint64_t kTaskInitial = 0x1;
constexpr uint64_t kTaskUndeferred = 0x08000000;
constexpr uint64_t kStatusComplete = 1, kStatusCancel = 3, kStatusDetach = 4,
                   kStatusLateFulfill = 6;
constexpr uint64_t kSyncBarrier = 1, kSyncBarrierImplicit = 2, kSyncBarrierExplicit = 3,
                   kSyncBarrierImplementation = 4, kSyncTaskwait = 5, kSyncTaskgroup = 6,
                   kSyncBarrierImplicitWorkshare = 8, kSyncBarrierImplicitParallel = 9,
                   kSyncBarrierTeams = 10;
constexpr uint64_t kWorkLoop = 1, kWorkSections = 2, kWorkSingleExecutor = 3, kWorkSingleOther = 4,
                   kWorkTaskloop = 7, kWorkLoopStatic = 10, kWorkLoopDynamic = 11,
                   kWorkLoopGuided = 12, kWorkLoopOther = 13;
constexpr uint64_t kDispatchSection = 2, kDispatchWsLoopChunk = 3, kDispatchDistributeChunk = 5;
constexpr uint64_t kDepIn = 1, kDepSource = 5, kDepSink = 6;

bool is_barrier(uint64_t kind) {
  return kind == kSyncBarrier || kind == kSyncBarrierImplicit || kind == kSyncBarrierExplicit ||
         kind == kSyncBarrierImplementation || kind == kSyncBarrierImplicitWorkshare ||
         kind == kSyncBarrierImplicitParallel || kind == kSyncBarrierTeams;
}
bool is_loop(uint64_t w) { return w == kWorkLoop || (w >= kWorkLoopStatic && w <= kWorkLoopOther); }

constexpr uint32_t kNodeBit = 0x80000000u;  // item list entries: node vs strand
constexpr uint64_t kTaskRef = 1ull << 63;   // edge source: "the end of task i"

struct PStrand {
  uint64_t work = 0, start = 0, end = 0;
  uint32_t thread = kNone, node = 0, next = kNone;  // next: item-list link
};

struct PNode {
  NodeKind kind;
  uint32_t parent;
  uint32_t site = kNone;
  uint32_t instance = kNone;
  uint32_t first = kNone, last = kNone, next = kNone;  // item list (strands | kNodeBit nodes)
  uint32_t tail_strand = kNone;  // emitted after the items (a barrier's join strand)
  uint32_t join_strand = kNone;  // Taskgroup / Phase: where escaped descendants join
  uint32_t region = kNone;       // Phase: its parallel region
};

struct DepEntry {
  uint32_t last_out = kNone;
  std::vector<uint32_t> readers;
};

struct TaskState {
  uint32_t node = kNone;   // the task's own node
  uint32_t scope = kNone;  // innermost open construct node of this task
  uint32_t open = kNone;   // strand being executed
  uint32_t prev = kNone;   // last closed strand
  uint32_t parent = kNone;
  uint32_t creator_strand = kNone;
  uint32_t pending_head = kNone;  // children not yet joined by a taskwait (linked list)
  uint32_t pending_next = kNone;
  uint32_t region = kNone;     // implicit tasks: their parallel region
  uint32_t phase = 0;          // implicit tasks: barriers passed
  uint32_t ws_seq = 0;         // implicit tasks: worksharing constructs met (instance key)
  uint32_t loop_fork = kNone;  // strand before the current worksharing loop
  uint32_t pre_wait = kNone;
  uint32_t team_size = 1;  // size of the team the task belongs to
  uint64_t flags = 0;
  bool started = false, done = false, waiting = false, implicit = false;
  std::vector<uint64_t>* next_preds = nullptr;  // joins into the next strand this task opens
  std::vector<uint32_t>* loop_members = nullptr;
  std::unordered_map<uint64_t, DepEntry>* deps = nullptr;  // for its children's depend clauses
};

struct Region {
  uint32_t node = kNone;
  uint32_t encountering = kNone;
  uint32_t fork_strand = kNone;
  uint32_t post_strand = kNone;
  std::vector<uint32_t> phases;    // Phase node per barrier interval
  std::vector<uint32_t> implicit;  // implicit task indexes
  uint32_t team_size = 1;
  bool ended = false;
};

class Builder {
 public:
  explicit Builder(const trace::TraceFile& trace) : trace_(trace) {}
  Model run();

 private:
  // ---- id mapping: recorder ids are (thread+1) << 40 | counter, dense per thread
  uint32_t& slot(uint64_t id) {
    uint64_t t = (id >> 40);
    uint64_t c = id & ((1ull << 40) - 1);
    if (t >= ids_.size()) ids_.resize(t + 1);
    auto& v = ids_[t];
    if (c >= v.size()) v.resize(std::max<size_t>(c + 1, v.size() * 2), kNone);
    return v[c];
  }
  uint32_t task(uint64_t id) {
    uint32_t& s = slot(id);
    if (s == kNone) {
      s = static_cast<uint32_t>(tasks_.size());
      tasks_.emplace_back();
    }
    return s;
  }
  uint32_t region(uint64_t id) {
    uint32_t& s = slot(id);
    if (s == kNone) {
      s = static_cast<uint32_t>(regions_.size());
      regions_.emplace_back();
    }
    return s;
  }

  uint32_t new_node(NodeKind kind, uint32_t parent) {
    uint32_t n = static_cast<uint32_t>(nodes_.size());
    nodes_.push_back(PNode{kind, parent});
    if (parent != kNone) append_item(parent, n | kNodeBit);
    return n;
  }
  void append_item(uint32_t node, uint32_t item) {
    PNode& p = nodes_[node];
    if (p.last == kNone)
      p.first = item;
    else if (p.last & kNodeBit)
      nodes_[p.last & ~kNodeBit].next = item;
    else
      strands_[p.last].next = item;
    p.last = item;
  }
  uint32_t site(uint64_t address, SiteKind kind, uint32_t scope) {
    if (address == 0 || in_runtime(address)) address = enclosing_address(scope);
    uint64_t key = address * 16 + static_cast<uint64_t>(kind);
    auto [it, inserted] = site_ids_.try_emplace(key, static_cast<uint32_t>(sites_.size()));
    if (inserted) sites_.push_back(Site{address, kind, {}, 0, {}});
    return it->second;
  }
  uint64_t enclosing_address(uint32_t node) {
    for (; node != kNone; node = nodes_[node].parent)
      if (nodes_[node].site != kNone && sites_[nodes_[node].site].address)
        return sites_[nodes_[node].site].address;
    return 0;
  }
  bool in_runtime(uint64_t address) const {
    for (const auto& r : runtime_ranges_)
      if (address >= r.first && address < r.second) return true;
    return false;
  }

  // ---- strands
  uint32_t open_strand(uint32_t t, uint32_t thread, uint64_t time) {
    TaskState& ts = tasks_[t];
    uint32_t s = static_cast<uint32_t>(strands_.size());
    strands_.push_back(PStrand{0, time, time, thread, ts.scope});
    append_item(ts.scope, s);
    ts.open = s;
    if (ts.next_preds) {
      for (uint64_t ref : *ts.next_preds) edges_.emplace_back(ref, s);
      ts.next_preds->clear();
    }
    return s;
  }
  uint32_t close_strand(uint32_t t) {
    TaskState& ts = tasks_[t];
    if (ts.open != kNone) {
      ts.prev = ts.open;
      ts.open = kNone;
    }
    return ts.prev;
  }
  void edge(uint32_t from, uint32_t to) {
    if (from != kNone && to != kNone) edges_.emplace_back(from, to);
  }
  void edge_from_task_end(uint32_t task, uint32_t to) { edges_.emplace_back(kTaskRef | task, to); }
  void add_next_pred(uint32_t t, uint64_t ref) {
    if (!tasks_[t].next_preds) tasks_[t].next_preds = new std::vector<uint64_t>();
    tasks_[t].next_preds->push_back(ref);
  }
  // Continues task t with a new strand after its previous one.
  uint32_t continue_task(uint32_t t, uint32_t thread, uint64_t time) {
    uint32_t prev = close_strand(t);
    uint32_t s = open_strand(t, thread, time);
    edge(prev, s);
    return s;
  }

  uint32_t phase_node(Region& r, uint32_t region_index, uint32_t k) {
    while (r.phases.size() <= k) {
      uint32_t n = new_node(NodeKind::Phase, r.node);
      nodes_[n].region = region_index;
      r.phases.push_back(n);
    }
    return r.phases[k];
  }

  void handle(const Event& e, uint32_t thread);
  void load_preemptions();
  uint64_t preempted_between(uint32_t thread, uint64_t from, uint64_t to);
  void on_implicit_begin(const Event& e, uint32_t thread);
  void on_create(const Event& e, uint32_t thread);
  void on_schedule(const Event& e, uint32_t thread);
  void on_sync_begin(const Event& e, uint32_t thread);
  void on_sync_end(const Event& e, uint32_t thread);
  void on_work_begin(const Event& e, uint32_t thread);
  void on_work_end(const Event& e, uint32_t thread);
  void on_dispatch(const Event& e, uint32_t thread);
  void on_dependences(const Event& e);
  Model finalize();

  const trace::TraceFile& trace_;
  std::vector<std::vector<uint32_t>> ids_;
  std::vector<TaskState> tasks_;
  std::vector<Region> regions_;
  std::vector<PNode> nodes_;
  std::vector<PStrand> strands_;
  std::vector<std::pair<uint64_t, uint32_t>> edges_;
  std::vector<Site> sites_;
  std::unordered_map<uint64_t, uint32_t> site_ids_;
  std::unordered_map<uint64_t, uint32_t> ws_instances_;  // (region, ws_seq) -> instance
  uint32_t instance_count_ = 0;
  std::vector<std::pair<uint64_t, uint64_t>> runtime_ranges_;
  std::vector<uint32_t> current_;  // per thread: the task it runs (kNone: none)
  std::vector<uint64_t> last_metric_;
  // Per thread: preempted intervals in TSC ticks, and a cursor (events come in time order).
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> preempt_;
  std::vector<size_t> preempt_cursor_;
  uint64_t preempted_total_ = 0;
  uint64_t last_before_ = 0;
  uint32_t root_task_ = kNone;
  uint64_t root_start_ = 0;
  uint64_t explicit_tasks_ = 0;
  uint64_t anomalies_ = 0;
  uint64_t serialized_undeferred_ = 0;
  bool first_parallel_ = true;
  bool main_marked_ = false;
  bool saw_openmp_ = false;
};

void Builder::on_implicit_begin(const Event& e, uint32_t thread) {
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
  ts.region = ri;
  ts.node = ts.scope = new_node(NodeKind::ImplicitTask, phase_node(r, ri, 0));
  uint32_t s = open_strand(t, thread, e.time);
  edge(r.fork_strand, s);
}

void Builder::on_create(const Event& e, uint32_t thread) {
  uint32_t p = task(e.f[0]);
  uint32_t c = task(e.f[1]);
  TaskState& ps = tasks_[p];
  if (ps.scope == kNone) {  // a parent we never saw start: hang it under the root
    ps.node = ps.scope = 0;
    ++anomalies_;
  }
  uint32_t creator = close_strand(p);
  ++explicit_tasks_;
  TaskState& cs = tasks_[c];
  cs.parent = p;
  cs.flags = e.f[2];
  cs.team_size = ps.team_size;
  // libomp flags every task of a one-thread team "undeferred", exactly like if(0) tasks, so
  // there the flag says nothing about the program: only a real team tells them apart.
  if ((cs.flags & kTaskUndeferred) && cs.team_size <= 1) {
    cs.flags &= ~kTaskUndeferred;
    ++serialized_undeferred_;
  }
  cs.creator_strand = creator;
  uint32_t scope = ps.scope;
  bool in_taskloop = nodes_[scope].kind == NodeKind::Taskloop;
  cs.node = cs.scope = new_node(NodeKind::Task, scope);
  if (!in_taskloop) {  // taskloop's tasks are parts of the taskloop instance
    nodes_[cs.node].site = site(e.f[3], SiteKind::Task, scope);
    nodes_[cs.node].instance = instance_count_++;
  }
  cs.pending_next = ps.pending_head;
  ps.pending_head = c;
  uint32_t s = open_strand(p, thread, e.time);
  edge(creator, s);
}

void Builder::on_schedule(const Event& e, uint32_t thread) {
  uint32_t prior = e.f[0] ? task(e.f[0]) : kNone;
  uint64_t status = e.f[1];
  uint32_t next = e.f[2] ? task(e.f[2]) : kNone;
  if (prior != kNone) {
    TaskState& ps = tasks_[prior];
    close_strand(prior);
    if (status == kStatusComplete || status == kStatusCancel || status == kStatusDetach ||
        status == kStatusLateFulfill) {
      ps.done = true;
      if ((ps.flags & kTaskUndeferred) && ps.parent != kNone)
        add_next_pred(ps.parent, kTaskRef | prior);
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
    uint32_t s = open_strand(next, thread, e.time);
    edge(ns.creator_strand, s);
  } else if (!ns.waiting && !ns.done && ns.open == kNone) {
    continue_task(next, thread, e.time);  // resumed after a suspension (taskyield, untied)
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
    nodes_[g].instance = instance_count_++;
    ts.scope = g;
    edge(prev, open_strand(t, thread, e.time));
  } else if (kind == kSyncTaskwait) {
    ts.pre_wait = close_strand(t);
    ts.waiting = true;
  } else if (is_barrier(kind)) {
    uint32_t last = close_strand(t);
    ts.waiting = true;
    if (!ts.implicit || ts.region == kNone) return;
    Region& r = regions_[ts.region];
    if (r.ended) return;
    uint32_t ph = phase_node(r, ts.region, ts.phase);
    if (nodes_[ph].tail_strand == kNone) {
      uint32_t j = static_cast<uint32_t>(strands_.size());
      strands_.push_back(PStrand{0, 0, 0, kNone, ph});
      nodes_[ph].tail_strand = nodes_[ph].join_strand = j;
    }
    edge(last, nodes_[ph].join_strand);
    ts.phase++;
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
  } else if (kind == kSyncTaskwait) {
    ts.waiting = false;
    uint32_t s = open_strand(t, thread, e.time);
    edge(ts.pre_wait, s);
    for (uint32_t c = ts.pending_head; c != kNone; c = tasks_[c].pending_next)
      edge_from_task_end(c, s);
    ts.pending_head = kNone;
    if (ts.deps) ts.deps->clear();  // every earlier sibling has finished
  } else if (is_barrier(kind)) {
    if (!ts.implicit || ts.region == kNone) {
      ts.waiting = false;
      return;
    }
    Region& r = regions_[ts.region];
    if (r.ended) return;  // a worker's late end-of-region events
    ts.waiting = false;
    uint32_t ph = phase_node(r, ts.region, ts.phase);
    ts.node = ts.scope = new_node(NodeKind::ImplicitTask, ph);
    uint32_t s = open_strand(t, thread, e.time);
    edge(nodes_[phase_node(r, ts.region, ts.phase - 1)].join_strand, s);
  }
}

void Builder::on_work_begin(const Event& e, uint32_t thread) {
  uint32_t t = task(e.f[1]);
  TaskState& ts = tasks_[t];
  if (ts.scope == kNone) return;
  uint64_t w = e.f[0];
  auto ws_instance = [&]() {
    uint64_t key = (uint64_t(ts.region) << 32) | ts.ws_seq++;
    auto [it, inserted] = ws_instances_.try_emplace(key, instance_count_);
    if (inserted) ++instance_count_;
    return it->second;
  };
  if (is_loop(w) || w == kWorkSections) {
    uint32_t fork = close_strand(t);
    bool loop = is_loop(w);
    uint32_t n = new_node(loop ? NodeKind::Loop : NodeKind::Sections, ts.scope);
    nodes_[n].site = site(e.f[3], loop ? SiteKind::Loop : SiteKind::Sections, ts.scope);
    nodes_[n].instance = ws_instance();
    ts.scope = n;
    ts.loop_fork = fork;
    if (!ts.loop_members) ts.loop_members = new std::vector<uint32_t>();
    ts.loop_members->clear();
    // Without dispatch events (old runtimes) this thread's whole share is one chunk.
    if (!(trace_.runtime_flags() & trace::kRuntimeHasDispatch)) {
      ts.scope = new_node(NodeKind::Chunk, n);
    }
    edge(fork, open_strand(t, thread, e.time));
  } else if (w == kWorkSingleExecutor || w == kWorkTaskloop) {
    uint32_t prev = close_strand(t);
    bool single = w == kWorkSingleExecutor;
    uint32_t scope = ts.scope;
    uint32_t st = site(e.f[3], single ? SiteKind::Single : SiteKind::Taskloop, scope);
    if (!single && nodes_[scope].kind == NodeKind::Taskgroup && nodes_[scope].last != kNone &&
        !(nodes_[scope].last & kNodeBit) && nodes_[scope].first == nodes_[scope].last) {
      // The taskgroup taskloop opened for itself: the taskloop is the construct to report.
      nodes_[scope].site = kNone;
      nodes_[scope].instance = kNone;
    }
    uint32_t n = new_node(single ? NodeKind::Single : NodeKind::Taskloop, scope);
    nodes_[n].site = st;
    nodes_[n].instance = single ? ws_instance() : instance_count_++;
    ts.scope = n;
    edge(prev, open_strand(t, thread, e.time));
  } else if (w == kWorkSingleOther) {
    ts.ws_seq++;  // keeps single instances aligned across the team
  }
}

void Builder::on_work_end(const Event& e, uint32_t thread) {
  uint32_t t = task(e.f[1]);
  TaskState& ts = tasks_[t];
  if (ts.scope == kNone) return;
  uint64_t w = e.f[0];
  if (is_loop(w) || w == kWorkSections) {
    uint32_t last = close_strand(t);
    uint32_t n = ts.scope;
    if (nodes_[n].kind == NodeKind::Chunk) n = nodes_[n].parent;
    if (nodes_[n].kind != NodeKind::Loop && nodes_[n].kind != NodeKind::Sections) {
      ++anomalies_;
      return;
    }
    ts.scope = nodes_[n].parent;
    uint32_t s = open_strand(t, thread, e.time);
    edge(last, s);
    if (ts.loop_members)
      for (uint32_t m : *ts.loop_members) edge(m, s);
  } else if (w == kWorkSingleExecutor || w == kWorkTaskloop) {
    NodeKind want = w == kWorkSingleExecutor ? NodeKind::Single : NodeKind::Taskloop;
    if (nodes_[ts.scope].kind != want) {
      ++anomalies_;
      return;
    }
    uint32_t prev = close_strand(t);
    ts.scope = nodes_[ts.scope].parent;
    edge(prev, open_strand(t, thread, e.time));
  }
}

void Builder::on_dispatch(const Event& e, uint32_t thread) {
  uint64_t kind = e.f[0];
  if (kind != kDispatchWsLoopChunk && kind != kDispatchSection && kind != kDispatchDistributeChunk)
    return;  // taskloop chunks and single iterations add nothing to the structure
  uint32_t t = task(e.f[1]);
  TaskState& ts = tasks_[t];
  if (ts.scope == kNone) return;
  uint32_t n = ts.scope;
  uint32_t prev = close_strand(t);
  if (nodes_[n].kind == NodeKind::Chunk) n = nodes_[n].parent;
  if (nodes_[n].kind != NodeKind::Loop && nodes_[n].kind != NodeKind::Sections) {
    ++anomalies_;
    return;
  }
  if (ts.loop_members && prev != kNone) ts.loop_members->push_back(prev);
  ts.scope = new_node(NodeKind::Chunk, n);
  edge(ts.loop_fork, open_strand(t, thread, e.time));
}

void Builder::on_dependences(const Event& e) {
  uint32_t t = task(e.f[0]);
  TaskState& ts = tasks_[t];
  if (ts.parent == kNone) return;
  TaskState& ps = tasks_[ts.parent];
  if (!ps.deps) ps.deps = new std::unordered_map<uint64_t, DepEntry>();
  const std::vector<uint64_t>& g = *e.groups;
  for (size_t i = 0; i + 1 < g.size(); i += 2) {
    uint64_t address = g[i], type = g[i + 1];
    if (type == kDepSource || type == kDepSink) continue;  // doacross: not modelled
    DepEntry& d = (*ps.deps)[address];
    if (d.last_out != kNone && d.last_out != t) add_next_pred(t, kTaskRef | d.last_out);
    if (type == kDepIn) {
      d.readers.push_back(t);
    } else {  // out, inout, mutexinoutset, inoutset: ordered after everything before
      for (uint32_t r : d.readers)
        if (r != t) add_next_pred(t, kTaskRef | r);
      d.readers.clear();
      d.last_out = t;
    }
  }
}

void Builder::handle(const Event& e, uint32_t thread) {
  // The time since this thread's previous event belongs to the task it was running, unless
  // that task was waiting inside the runtime.
  last_before_ = last_metric_[thread];
  uint64_t delta = e.metric - last_metric_[thread];
  if (!preempt_.empty() && thread < preempt_.size() && !preempt_[thread].empty()) {
    uint64_t off = preempted_between(thread, last_metric_[thread], e.metric);
    delta = off < delta ? delta - off : 0;
  }
  last_metric_[thread] = e.metric;
  uint32_t cur = current_[thread];
  if (cur != kNone) {
    TaskState& ts = tasks_[cur];
    if (ts.open != kNone && !ts.waiting) {
      PStrand& s = strands_[ts.open];
      s.work += delta;
      s.end = e.time;
      if (!preempt_.empty()) preempted_total_ += (e.metric - last_before_) - delta;
    }
  }
  switch (e.kind) {
    case EventKind::ThreadBegin:
      current_[thread] = kNone;
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
      bool late = ts.region != kNone && regions_[ts.region].ended;
      if (!late) close_strand(t);
      ts.done = true;
      if (current_[thread] == t) current_[thread] = kNone;
      break;
    }
    case EventKind::ParallelBegin: {
      saw_openmp_ = true;
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
      if (first_parallel_ && !main_marked_ && enc == root_task_ && r.fork_strand != kNone &&
          strands_[r.fork_strand].start == root_start_) {
        // Without the recorder's main() marker the runtime started at the program's first
        // OpenMP construct, and this strand is the runtime's own initialization (thread pool,
        // affinity), not program work.
        strands_[r.fork_strand].work = 0;
        strands_[r.fork_strand].start = strands_[r.fork_strand].end;
      }
      first_parallel_ = false;
      r.node = new_node(NodeKind::Parallel, es.scope);
      nodes_[r.node].site = site(e.f[4], SiteKind::Parallel, es.scope);
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
    case EventKind::Mark:
      if (e.f[0] == static_cast<uint64_t>(trace::MarkKind::MainStart) && root_task_ != kNone &&
          tasks_[root_task_].open != kNone) {
        // The recorder started the runtime just before main(): what came before is the
        // runtime's initialization; the program's serial code starts now.
        PStrand& s = strands_[tasks_[root_task_].open];
        s.work = 0;
        s.start = s.end = e.time;
        main_marked_ = true;
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
    case EventKind::MaskedBegin:
    case EventKind::MaskedEnd: {
      uint32_t t = task(e.f[0]);
      TaskState& ts = tasks_[t];
      if (ts.scope == kNone) break;
      uint32_t prev = close_strand(t);
      if (e.kind == EventKind::MaskedBegin) {
        uint32_t n = new_node(NodeKind::Masked, ts.scope);
        nodes_[n].site = site(e.f[1], SiteKind::Masked, ts.scope);
        nodes_[n].instance = instance_count_++;
        ts.scope = n;
      } else if (nodes_[ts.scope].kind == NodeKind::Masked) {
        ts.scope = nodes_[ts.scope].parent;
      }
      edge(prev, open_strand(t, thread, e.time));
      break;
    }
  }
}

// Preempted intervals come in CLOCK_MONOTONIC ns; the clock syncs map them onto the TSC.
void Builder::load_preemptions() {
  if (trace_.metric() != trace::Metric::Tsc || trace_.preemptions().empty()) return;
  const auto& syncs = trace_.clock_syncs();
  if (syncs.size() < 2 || trace_.tsc_hz() <= 0) return;
  const trace::ClockSync& s0 = syncs.front();
  double ticks_per_ns = trace_.tsc_hz() / 1e9;
  auto to_tsc = [&](uint64_t ns) {
    double t = double(s0.tsc) + (double(ns) - double(s0.monotonic_ns)) * ticks_per_ns;
    return t <= 0 ? uint64_t(0) : static_cast<uint64_t>(t);
  };
  preempt_.resize(trace_.preemptions().size());
  preempt_cursor_.assign(preempt_.size(), 0);
  for (size_t t = 0; t < preempt_.size(); ++t)
    for (auto [out, in] : trace_.preemptions()[t])
      preempt_[t].emplace_back(to_tsc(out), to_tsc(in));
}

uint64_t Builder::preempted_between(uint32_t thread, uint64_t from, uint64_t to) {
  const auto& iv = preempt_[thread];
  size_t& c = preempt_cursor_[thread];
  while (c < iv.size() && iv[c].second <= from) ++c;
  uint64_t total = 0;
  for (size_t i = c; i < iv.size() && iv[i].first < to; ++i) {
    uint64_t lo = std::max(iv[i].first, from), hi = std::min(iv[i].second, to);
    if (hi > lo) total += hi - lo;
  }
  return total;
}

Model Builder::run() {
  load_preemptions();
  for (const auto& m : trace_.modules()) {
    std::string base = m.path.substr(m.path.find_last_of('/') + 1);
    if (base.rfind("libomp", 0) == 0 || base.rfind("libgomp", 0) == 0 ||
        base.rfind("libiomp", 0) == 0)
      runtime_ranges_.emplace_back(m.begin, m.end);
  }
  // Node 0: the program (the initial task outside every construct).
  nodes_.push_back(PNode{NodeKind::Program, kNone});
  sites_.push_back(Site{0, SiteKind::Program, {}, 0, {}});
  nodes_[0].site = 0;
  nodes_[0].instance = instance_count_++;

  // Merge the per-thread streams by timestamp: causality across threads (a task created on
  // one thread and run on another, an untied task resumed elsewhere) follows the TSC order.
  uint32_t n = trace_.stream_count();
  std::vector<std::vector<uint8_t>> streams(n);
  std::vector<trace::EventDecoder> decoders;
  decoders.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    streams[i] = trace_.stream(i);
    decoders.push_back(trace_.decoder(streams[i]));
  }
  current_.assign(n, kNone);
  last_metric_.assign(n, 0);
  // Sizes from the stream lengths (a few bytes per event): growing these vectors while
  // building costs more than the building itself on large traces.
  size_t bytes = 0;
  for (const auto& st : streams) bytes += st.size();
  size_t events = bytes / 5 + 16;
  strands_.reserve(events * 7 / 10);
  edges_.reserve(events * 6 / 5);
  nodes_.reserve(events / 4);
  tasks_.reserve(events / 4);
  std::vector<Event> heads(n);
  using Item = std::pair<uint64_t, uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> queue;
  for (uint32_t i = 0; i < n; ++i)
    if (decoders[i].next(heads[i])) {
      last_metric_[i] = trace_.metric() == trace::Metric::Tsc ? trace_.header().start_tsc : 0;
      queue.emplace(heads[i].time, i);
    }
  bool stream_truncated = false;
  while (!queue.empty()) {
    uint32_t i = queue.top().second;
    queue.pop();
    // Consume this stream while it stays the earliest (one stream at a time is the common
    // case: avoids heap traffic per event).
    uint64_t limit = queue.empty() ? ~0ull : queue.top().first;
    do {
      handle(heads[i], i);
      if (!decoders[i].next(heads[i])) {
        stream_truncated |= decoders[i].truncated();
        goto next_stream;
      }
    } while (heads[i].time <= limit);
    queue.emplace(heads[i].time, i);
  next_stream:;
  }
  if (!saw_openmp_) {
    if (!trace_.complete())
      throw ModelError(trace_.path() +
                       ": the trace is incomplete (the program was killed) and holds no OpenMP "
                       "activity: nothing to profile");
    throw ModelError(trace_.path() +
                     ": the program never started an OpenMP parallel region or task (is it built "
                     "with -fopenmp?)");
  }
  Model m = finalize();
  if (stream_truncated) m.complete = false;
  return m;
}

Model Builder::finalize() {
  Model m;
  // Tasks still open (a killed program): close them where they were.
  for (uint32_t t = 0; t < tasks_.size(); ++t) close_strand(t);
  // Escaped tasks join where their innermost enclosing taskgroup or phase ends.
  std::vector<uint32_t> join_target(nodes_.size(), kNone);
  for (uint32_t v = 0; v < nodes_.size(); ++v) {  // parents come before children
    const PNode& p = nodes_[v];
    uint32_t inherited = p.parent == kNone ? kNone : join_target[p.parent];
    if (p.kind == NodeKind::Taskgroup || p.kind == NodeKind::Phase) {
      uint32_t j = p.join_strand;
      if (j == kNone && p.kind == NodeKind::Phase && p.region != kNone)
        j = regions_[p.region].post_strand;
      join_target[v] = j != kNone ? j : inherited;
    } else {
      join_target[v] = inherited;
    }
  }
  for (uint32_t t = 0; t < tasks_.size(); ++t) {
    const TaskState& ts = tasks_[t];
    if (ts.implicit || ts.node == kNone || ts.node == 0 || ts.prev == kNone) continue;
    uint32_t target = join_target[nodes_[ts.node].parent];
    if (target != kNone) edges_.emplace_back(ts.prev, target);
  }

  // Depth-first numbering of nodes and strands: the serial elision order.
  std::vector<uint32_t> node_id(nodes_.size(), kNone), strand_id(strands_.size(), kNone);
  m.nodes.reserve(nodes_.size());
  m.strands.reserve(strands_.size());
  struct Frame {
    uint32_t node, item;
  };
  std::vector<Frame> stack;
  auto enter = [&](uint32_t v) {
    node_id[v] = static_cast<uint32_t>(m.nodes.size());
    Node out;
    out.kind = nodes_[v].kind;
    out.parent = nodes_[v].parent == kNone ? kNone : node_id[nodes_[v].parent];
    out.site = nodes_[v].site;
    out.instance = nodes_[v].instance;
    out.strand_begin = static_cast<uint32_t>(m.strands.size());
    m.nodes.push_back(out);
    stack.push_back(Frame{v, nodes_[v].first});
  };
  auto emit_strand = [&](uint32_t s) {
    strand_id[s] = static_cast<uint32_t>(m.strands.size());
    const PStrand& p = strands_[s];
    Strand out;
    out.work = p.work;
    out.start = p.start;
    out.end = p.end;
    out.thread = p.thread;
    out.node = node_id[p.node];
    m.strands.push_back(out);
  };
  enter(0);
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.item == kNone) {
      uint32_t v = f.node;
      if (nodes_[v].tail_strand != kNone) emit_strand(nodes_[v].tail_strand);
      Node& out = m.nodes[node_id[v]];
      out.strand_end = static_cast<uint32_t>(m.strands.size());
      out.subtree_size = static_cast<uint32_t>(m.nodes.size()) - node_id[v];
      stack.pop_back();
      continue;
    }
    uint32_t item = f.item;
    f.item = (item & kNodeBit) ? nodes_[item & ~kNodeBit].next : strands_[item].next;
    if (item & kNodeBit)
      enter(item & ~kNodeBit);
    else
      emit_strand(item);
  }

  // Edges, in final ids; every edge must go forward in the serial order. Counting sort into
  // the CSR arrays (no comparison sort: there are millions of edges).
  auto resolve = [&](uint64_t ref) -> uint32_t {
    uint32_t from = (ref & kTaskRef) ? tasks_[static_cast<uint32_t>(ref & ~kTaskRef)].prev
                                     : static_cast<uint32_t>(ref);
    return from == kNone ? kNone : strand_id[from];  // kNone: the task never ran (killed)
  };
  uint64_t backward = 0;
  m.pred_begin.assign(m.strands.size() + 1, 0);
  for (auto& [ref, to] : edges_) {
    uint32_t a = resolve(ref), b = strand_id[to];
    if (a == kNone || b == kNone || a == b) {
      to = kNone;
      continue;
    }
    if (a > b) {
      ++backward;
      to = kNone;
      continue;
    }
    ref = a;
    to = b;
    m.pred_begin[b + 1]++;
  }
  for (size_t i = 0; i < m.strands.size(); ++i) m.pred_begin[i + 1] += m.pred_begin[i];
  m.preds.resize(m.pred_begin.back());
  {
    std::vector<uint32_t> fill(m.pred_begin.begin(), m.pred_begin.end() - 1);
    for (const auto& [from, to] : edges_)
      if (to != kNone) m.preds[fill[to]++] = static_cast<uint32_t>(from);
  }
  std::vector<std::pair<uint64_t, uint32_t>>().swap(edges_);

  // Attribution: each strand to the innermost construct site around it.
  std::vector<uint32_t> node_site(m.nodes.size(), 0);
  for (uint32_t v = 0; v < m.nodes.size(); ++v) {
    const Node& nd = m.nodes[v];
    node_site[v] = nd.site != kNone ? nd.site : (nd.parent == kNone ? 0 : node_site[nd.parent]);
  }
  for (Strand& s : m.strands) s.site = node_site[s.node];

  m.sites = std::move(sites_);
  m.instance_count = instance_count_;
  m.metric = trace::to_string(trace_.metric());
  m.metric_is_time =
      trace_.metric() == trace::Metric::Tsc || trace_.metric() == trace::Metric::TaskClock;
  double hz = trace_.tsc_hz();
  m.ticks_per_second = trace_.metric() == trace::Metric::Tsc         ? hz
                       : trace_.metric() == trace::Metric::TaskClock ? 1e9
                                                                     : 0;
  m.complete = trace_.complete();
  m.loops_have_chunks = (trace_.runtime_flags() & trace::kRuntimeHasDispatch) != 0;
  m.task_count = explicit_tasks_;
  m.preempted = preempted_total_;
  m.thread_count = trace_.stream_count();
  if (!m.loops_have_chunks)
    m.warnings.push_back(
        "the OpenMP runtime had no dispatch callback (LLVM < 16): each thread's "
        "share of a worksharing loop counts as one strand");
  if (trace_.has_finish() && (trace_.finish().flags & trace::kFinishThreadsStillRunning))
    m.warnings.push_back(
        "the program exited inside a parallel region: work still running on "
        "other threads at exit is not recorded");
  if (!trace_.complete())
    m.warnings.push_back(
        "the trace is incomplete (the program was killed before the recorder "
        "finished it): the profile covers what was recorded");
  if (serialized_undeferred_)
    m.warnings.push_back(
        "tasks ran in one-thread teams, where the runtime cannot tell if(0)/final tasks from "
        "others: they were all taken as deferred; record with 2 or more threads for exact "
        "if(0)/final semantics");
  if (backward)
    m.warnings.push_back(std::to_string(backward) +
                         " dependence edges contradicted the program order and were ignored");
  if (anomalies_)
    m.warnings.push_back(std::to_string(anomalies_) +
                         " events did not match the construct they belong to (the trace may "
                         "have started or stopped inside a construct)");
  for (auto& t : tasks_) {
    delete t.next_preds;
    delete t.loop_members;
    delete t.deps;
  }
  return m;
}

}  // namespace

const char* to_string(NodeKind kind) {
  switch (kind) {
    case NodeKind::Program:
      return "program";
    case NodeKind::Parallel:
      return "parallel";
    case NodeKind::Phase:
      return "phase";
    case NodeKind::ImplicitTask:
      return "implicit-task";
    case NodeKind::Task:
      return "task";
    case NodeKind::Taskgroup:
      return "taskgroup";
    case NodeKind::Loop:
      return "loop";
    case NodeKind::Chunk:
      return "chunk";
    case NodeKind::Single:
      return "single";
    case NodeKind::Sections:
      return "sections";
    case NodeKind::Taskloop:
      return "taskloop";
    case NodeKind::Masked:
      return "masked";
  }
  return "unknown";
}

const char* to_string(SiteKind kind) {
  switch (kind) {
    case SiteKind::Program:
      return "program";
    case SiteKind::Parallel:
      return "parallel";
    case SiteKind::Task:
      return "task";
    case SiteKind::Taskloop:
      return "taskloop";
    case SiteKind::Loop:
      return "loop";
    case SiteKind::Sections:
      return "sections";
    case SiteKind::Single:
      return "single";
    case SiteKind::Taskgroup:
      return "taskgroup";
    case SiteKind::Masked:
      return "masked";
  }
  return "unknown";
}

Model build_model(const trace::TraceFile& trace) { return Builder(trace).run(); }

}  // namespace tasklens::model
