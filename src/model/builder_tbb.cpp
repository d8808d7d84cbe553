// oneTBB events -> provisional strands, nodes and edges (see builder_state.hpp). A TBB task is
// an explicit task like OpenMP's (its execution comes as TaskSchedule events); what differs is
// how it is joined: a wait joins every task spawned into the waited task_group_context since its
// previous wait, whoever spawned them (task_group::wait waits for tasks run from inside the
// group's tasks too), and the chunks of an algorithm's body are logically parallel strands.
#include "model/builder_state.hpp"

namespace tasklens::model::detail {

namespace {

using trace::TbbKind;
constexpr uint64_t kTbbRootFlag = 0x80;  // spawned by execute_and_wait: a new construct
// Returned by the running task for the scheduler to run next (task bypass): in that task's group.
constexpr uint64_t kTbbBypassFlag = 0x40;

SiteKind site_kind_of(TbbKind kind) {
  switch (kind) {
    case TbbKind::ParallelFor:
      return SiteKind::ParallelFor;
    case TbbKind::ParallelReduce:
      return SiteKind::ParallelReduce;
    case TbbKind::ParallelInvoke:
      return SiteKind::ParallelInvoke;
    case TbbKind::ParallelSort:
      return SiteKind::ParallelSort;
    case TbbKind::Other:
      return SiteKind::TbbAlgorithm;
    case TbbKind::ArenaExecute:
      return SiteKind::ArenaExecute;
    default:
      return SiteKind::Task;
  }
}

// Tasks an algorithm spawns to split its range (or its list of functions) belong to the
// algorithm's call, not to a construct of their own.
bool splits_parent(TbbKind child, uint8_t parent) {
  return static_cast<uint8_t>(child) == parent &&
         (child == TbbKind::ParallelFor || child == TbbKind::ParallelReduce ||
          child == TbbKind::ParallelInvoke || child == TbbKind::ParallelSort ||
          child == TbbKind::Other);
}

}  // namespace

// A thread of the program's own (not the main thread, not a TBB worker) that calls into oneTBB
// outside every task runs a task of its own: a child of the program that starts with the
// thread's first oneTBB call, unordered with the main thread's work.
uint32_t Builder::outside_task(uint32_t thread, uint64_t time) {
  if (outside_tasks_.size() <= thread) outside_tasks_.resize(thread + 1, kNone);
  uint32_t& t = outside_tasks_[thread];
  if (t == kNone) {
    t = static_cast<uint32_t>(tasks_.size());
    tasks_.emplace_back();
    TaskState& ts = tasks_[t];
    ts.started = true;
    ts.team_size = 2;
    ts.node = ts.scope = new_node(NodeKind::Task, 0);
    open_strand(t, thread, time);
  }
  current_[thread] = t;
  return t;
}

void Builder::on_tbb_spawn(const Event& e, uint32_t thread) {
  saw_openmp_ = saw_constructs_ = true;
  uint32_t p = e.f[0] ? task(e.f[0]) : outside_task(thread, e.time);
  uint32_t c = task(e.f[1]);
  uint64_t group = e.f[2];
  auto kind = static_cast<TbbKind>(e.f[3] & ~(kTbbRootFlag | kTbbBypassFlag));
  bool root = e.f[3] & kTbbRootFlag;
  // A bypassed task is in its spawner's group: a flow graph's nodes return their successors'
  // tasks, which the graph's wait_for_all must join like the tasks it submitted.
  if (!group && (e.f[3] & kTbbBypassFlag) && p < tbb_group_of_.size()) group = tbb_group_of_[p];
  TaskState& ps = tasks_[p];
  if (ps.scope == kNone) {  // a parent we never saw start: hang it under the root
    ps.node = ps.scope = 0;
    ++anomalies_;
  }
  uint32_t creator = close_strand(p);
  ++explicit_tasks_;
  TaskState& cs = tasks_[c];
  cs.parent = p;
  cs.team_size = 2;  // TBB has no undeferred tasks: a task runs when a thread takes it
  cs.creator_strand = creator;
  cs.tbb_kind = static_cast<uint8_t>(kind);
  uint32_t scope = ps.scope;
  cs.node = cs.scope = new_node(NodeKind::Task, scope);
  if (!root && ps.node != kNone && nodes_[ps.node].site != kNone &&
      splits_parent(kind, ps.tbb_kind)) {
    nodes_[cs.node].site = nodes_[ps.node].site;
    nodes_[cs.node].instance = nodes_[ps.node].instance;
  } else {
    nodes_[cs.node].site = site(e.f[4], site_kind_of(kind), scope);
    // An algorithm call may start with several tasks from the caller (parallel_invoke spawns
    // all its functions but the last, then runs that one with execute_and_wait): the tasks one
    // task spawns into one group for one algorithm call are one instance. task_group::run's
    // tasks are instances of their own, as OpenMP tasks are.
    TbbCall* call = nullptr;
    if (kind != TbbKind::Task && kind != TbbKind::Unknown && group) {
      call = &tbb_calls_[group];
      if (call->parent == p && call->kind == static_cast<uint8_t>(kind) &&
          call->instance != kNone) {
        nodes_[cs.node].instance = call->instance;
        call = nullptr;
      }
    }
    if (nodes_[cs.node].instance == kNone) {
      nodes_[cs.node].instance = instance_count_++;
      if (call) *call = TbbCall{p, static_cast<uint8_t>(kind), nodes_[cs.node].instance};
    }
  }
  if (group) {
    tbb_groups_[group].push_back(c);
    if (tbb_group_of_.size() <= c) tbb_group_of_.resize(size_t{c} + 1, 0);
    tbb_group_of_[c] = group;
  }
  uint32_t s = open_strand(p, thread, e.time);
  edge(creator, s);
}

void Builder::on_tbb_wait(const Event& e, uint32_t thread) {
  uint32_t t = e.f[0] ? task(e.f[0]) : outside_task(thread, e.time);
  TaskState& ts = tasks_[t];
  if (ts.scope == kNone) return;
  if (e.kind == EventKind::TbbWaitBegin) {
    ts.pre_wait = close_strand(t);
    ts.waiting = true;
    return;
  }
  ts.waiting = false;
  uint32_t s = open_strand(t, thread, e.time);
  edge(ts.pre_wait, s);
  tbb_calls_.erase(e.f[1]);  // the call is over: the group's next tasks are another call
  auto it = tbb_groups_.find(e.f[1]);
  if (it == tbb_groups_.end()) return;
  for (uint32_t c : it->second) {
    edge_from_task_end(c, s);
    tasks_[c].joined_in_scope = true;  // its end reaches later joins through this strand
  }
  it->second.clear();
}

void Builder::on_chunk(const Event& e, uint32_t thread) {
  uint32_t t = task(e.f[0]);
  TaskState& ts = tasks_[t];
  if (ts.scope == kNone) return;
  if (e.kind == EventKind::ChunkBegin) {
    if (nodes_[ts.scope].kind == NodeKind::Chunk) {  // unmatched begin: close that chunk first
      ++anomalies_;
      return;
    }
    uint32_t fork = close_strand(t);
    ts.more().chunk_fork = fork;
    ts.scope = new_node(NodeKind::Chunk, ts.scope);
    edge(fork, open_strand(t, thread, e.time));
    return;
  }
  if (nodes_[ts.scope].kind != NodeKind::Chunk) {
    ++anomalies_;
    return;
  }
  uint32_t last = close_strand(t);
  TaskExtra& x = ts.more();
  if (!x.chunks) x.chunks = new std::vector<uint32_t>();
  if (last != kNone) x.chunks->push_back(last);
  ts.scope = nodes_[ts.scope].parent;
  // The code after a chunk does not wait for it: it follows what came before the chunk.
  edge(x.chunk_fork, open_strand(t, thread, e.time));
}

// A TBB task's chunks all end before the task does.
void Builder::join_chunks(uint32_t t) {
  TaskState& ts = tasks_[t];
  std::vector<uint32_t>* chunks = ts.peek().chunks;
  if (!chunks || chunks->empty()) return;
  for (uint32_t c : *chunks) edge(c, ts.prev);
  chunks->clear();
}

}  // namespace tasklens::model::detail
