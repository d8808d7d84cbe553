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
  if (out_) stream_unsupported("oneTBB calls from threads of the program's own outside every task");
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
  hold(creator);
  cs.tbb_kind = static_cast<uint8_t>(kind);
  cs.origin = kOriginTbb;
  uint32_t scope = ps.scope;
  // A parallel_pipeline's stage task goes into the pipeline's root task (on_tbb_pipeline).
  Pipeline* pipeline = nullptr;
  if (!pipelines_.empty() && group) {
    auto it = pipelines_.find(group);
    if (it != pipelines_.end()) pipeline = &it->second;
  }
  if (pipeline && !root && pipeline->root != kNone) scope = pipeline->root;
  // A body of a flow graph node of limited concurrency goes into its node's chain.
  uint32_t chain = kNone;
  if (!flow_bodies_.empty()) {
    auto it = flow_bodies_.find(c);
    if (it != flow_bodies_.end()) {
      chain = flow_chain_for(c, p, scope, group, it->second.first, it->second.second);
      flow_bodies_.erase(it);
    }
  }
  cs.node = cs.scope = new_node(NodeKind::Task, chain != kNone ? chain : scope);
  if (pipeline && root && pipeline->root == kNone) pipeline->root = cs.node;
  if (!root && ps.node != kNone && nodes_[ps.node].site != kNone &&
      splits_parent(kind, ps.tbb_kind)) {
    nodes_[cs.node].site = nodes_[ps.node].site;
    nodes_[cs.node].instance = nodes_[ps.node].instance;
    if (out_) sn_[cs.node].inherits_instance = true;
  } else {
    nodes_[cs.node].site = site(e.f[4], site_kind_of(kind), scope);
    keep_site_code(cs.node);
    // An algorithm call may start with several tasks from the caller (parallel_invoke spawns
    // all its functions but the last, then runs that one with execute_and_wait): the tasks one
    // task spawns into one group for one algorithm call are one instance. task_group::run's
    // tasks are instances of their own, as OpenMP tasks are.
    TbbCall* call = nullptr;
    const uint64_t parent_id = out_ ? st_[p].id : 0;  // (one pass reuses a retired task's slot)
    if (kind != TbbKind::Task && kind != TbbKind::Unknown && group) {
      call = &tbb_calls_[group];
      if (call->parent == p && call->parent_id == parent_id &&
          call->kind == static_cast<uint8_t>(kind) && call->instance != kNone) {
        nodes_[cs.node].instance = call->instance;
        if (out_) stream_tbb_call_node(cs.node);
        call = nullptr;
      }
    }
    if (nodes_[cs.node].instance == kNone) {
      nodes_[cs.node].instance = instance_count_++;
      if (call) {
        if (out_) stream_tbb_call_over(*call);
        *call = TbbCall{p, static_cast<uint8_t>(kind), nodes_[cs.node].instance, parent_id};
        if (out_) {
          stream_tbb_calls_[call->instance] = StreamTbbCall{};  // (held by the call until its wait)
          stream_tbb_call_node(cs.node);
        }
      }
    }
  }
  // A new chain is part of the construct of its first body (a flow graph's tasks are one
  // instance: splits_parent), which it stays inside in the site profile.
  if (chain != kNone && nodes_[chain].site == kNone) {
    nodes_[chain].site = nodes_[cs.node].site;
    nodes_[chain].instance = nodes_[cs.node].instance;
  }
  if (group) {
    if (out_)
      stream_tbb_spawned(p, c, group);
    else
      tbb_groups_[group].push_back(c);
    if (tbb_group_of_.size() <= c) tbb_group_of_.resize(size_t{c} + 1, 0);
    tbb_group_of_[c] = group;
  } else {
    if (out_) ++st_[p].children;
    if (c < tbb_group_of_.size()) tbb_group_of_[c] = 0;  // (one pass: a slot used before)
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
    hold(ts.pre_wait);  // (one pass: until the strand after the wait takes it)
    ts.waiting = true;
    return;
  }
  ts.waiting = false;
  if (!flow_chains_.empty()) place_flow_chains(e.f[1], ts.scope);  // before the join strand
  // A pipeline's wait: its filters' runs are over (a later call may use the same group).
  if (!pipelines_.empty()) pipelines_.erase(e.f[1]);
  uint32_t s = open_strand(t, thread, e.time);
  edge(ts.pre_wait, s);
  // The call is over: the group's next tasks are another call.
  if (auto call = tbb_calls_.find(e.f[1]); call != tbb_calls_.end()) {
    if (out_) stream_tbb_call_over(call->second);
    tbb_calls_.erase(call);
  }
  if (out_) {
    drop(ts.pre_wait);
    ts.pre_wait = kNone;
    stream_tbb_wait_ended(e.f[1], s, e.time);
    return;
  }
  auto it = tbb_groups_.find(e.f[1]);
  if (it == tbb_groups_.end()) return;
  for (uint32_t c : it->second) {
    edge_from_task_end(c, s);
    tasks_[c].joined_in_scope = true;  // its end reaches later joins through this strand
    // Begun and not ended (yet): oneTBB released the group inside the task, before the end that
    // the recorder writes once the task returns. Recorded later, or never (close_unended).
    note_join(c, e.time);
  }
  it->second.clear();
}

// ---- flow graph nodes of limited concurrency (TbbNodeBody)
//
// A serial function_node (or one limited to k bodies) runs one body (k) at a time, but oneTBB
// orders its bodies with a counter, not with spawns: the body that ends spawns the next one
// only if a message waits in the node's queue; otherwise the node is free, and whichever task
// puts the next message (its predecessor's body, returning it) spawns it. That task may have
// been put off or preempted (its preemption is no work), so its logical end comes long before
// the body before ended: without an edge from that body, the node's bodies overlap in the DAG
// and a serial node's chain is broken (a span below its analytic value). So each body takes a
// slot of its node, like a lock's acquire, and starts after the end of the body that held the
// slot last (its release).

void Builder::on_tbb_node_body(const Event& e) {
  if (e.f[2] == 0 || e.f[2] > kMaxFlowSlots) return;
  flow_bodies_[task(e.f[0])] = {e.f[1], e.f[2]};
}

// The chain node that `body`, spawned by task `spawner` (in `scope`) into `group`, goes into;
// the body's slot and the edge into it.
uint32_t Builder::flow_chain_for(uint32_t body, uint32_t spawner, uint32_t scope, uint64_t group,
                                 uint64_t address, uint64_t limit) {
  FlowNode& f = flow_nodes_[address];
  if (f.chain == kNone || f.group != group) {
    f = FlowNode{};
    f.group = group;
    // Its parent until the wait places it (place_flow_chains): the scope common to the tasks
    // that spawn its bodies, which is older than the chain.
    f.chain = static_cast<uint32_t>(nodes_.size());
    nodes_.push_back(PNode{NodeKind::Taskgroup, scope});
    flow_chains_[group].emplace_back(address, f.chain);
  }
  PNode& chain = nodes_[f.chain];
  size_t k = std::find(f.slots.begin(), f.slots.end(), spawner) - f.slots.begin();
  if (k < f.slots.size()) {
    // A body of the node spawns the next one, from the node's queue, once its own ended: the
    // spawn orders them, and the rest of the spawner (its successors' puts) runs beside it.
  } else {
    if (chain.parent != scope) chain.parent = common_scope(chain.parent, scope);
    if (f.slots.size() < limit) {  // fewer bodies than the limit so far: it waits for none
      f.slots.push_back(kNone);
      f.taken.push_back(0);
    } else {
      // The slot whose body ended (the others' run yet), taken the longest ago. A body ends
      // with its successors' puts: the next one starts after them, a little late.
      k = 0;
      bool k_done = tasks_[f.slots[0]].done;
      for (size_t i = 1; i < f.slots.size(); ++i) {
        const bool done = tasks_[f.slots[i]].done;
        if (done > k_done || (done == k_done && f.taken[i] < f.taken[k])) {
          k = i;
          k_done = done;
        }
      }
      add_next_pred(body, kTaskRef | f.slots[k]);
    }
  }
  f.slots[k] = body;
  f.taken[k] = ++flow_turns_;
  return f.chain;
}

// Nodes are numbered parents first, so the lowest common ancestor of two is found by walking up
// from the younger one.
uint32_t Builder::common_scope(uint32_t a, uint32_t b) const {
  while (a != b && a != kNone && b != kNone) {
    if (a > b)
      a = nodes_[a].parent;
    else
      b = nodes_[b].parent;
  }
  return a == b ? a : 0;
}

// The wait for `group` ends in `waiting_scope`: the group's chains go before its join strand,
// after every task that spawned one of their bodies, inside no construct that holds neither:
// in the scope common to those tasks and the waiting task ("home"), as its last items if that
// is the waiting scope; otherwise just before the item that holds the wait (graph::wait_for_all
// waits in a task_arena::execute of its own, made after the messages were put: the chains come
// between them). Chains of one home go in together, in the order they were made.
void Builder::place_flow_chains(uint64_t group, uint32_t waiting_scope) {
  auto it = flow_chains_.find(group);
  if (it == flow_chains_.end()) return;
  std::vector<std::pair<uint64_t, uint32_t>> chains = std::move(it->second);
  flow_chains_.erase(it);
  for (const auto& [address, chain] : chains) {
    nodes_[chain].parent = common_scope(nodes_[chain].parent, waiting_scope);
    auto f = flow_nodes_.find(address);
    if (f != flow_nodes_.end() && f->second.chain == chain) flow_nodes_.erase(f);  // all ended
  }
  std::vector<std::pair<uint32_t, uint32_t>> batch;  // (home, chain | kNodeBit)
  std::vector<bool> placed(chains.size(), false);
  for (size_t first = 0; first < chains.size(); ++first) {
    if (placed[first]) continue;
    const uint32_t home = nodes_[chains[first].second].parent;
    batch.clear();
    for (size_t i = first; i < chains.size(); ++i) {
      if (placed[i] || nodes_[chains[i].second].parent != home) continue;
      placed[i] = true;
      batch.emplace_back(home, chains[i].second | kNodeBit);
    }
    size_t at = items_.size();
    if (home != waiting_scope) {
      uint32_t a = waiting_scope;
      while (nodes_[a].parent != home) a = nodes_[a].parent;
      // That item was appended when `a` was made, after the messages' puts: a search from the
      // end of the log reads this wait's items only. Not there (the wait is inside another
      // chain, not placed yet): after it instead.
      const std::pair<uint32_t, uint32_t> holder{home, a | kNodeBit};
      for (size_t i = items_.size(); i-- > 0;) {
        if (items_[i] == holder) {
          at = i;
          break;
        }
      }
    }
    if (at == items_.size()) {
      for (const auto& item : batch) append_item(home, item.second);
    } else {
      items_.insert(items_.begin() + static_cast<std::ptrdiff_t>(at), batch.begin(), batch.end());
      nodes_[home].item_count += static_cast<uint32_t>(batch.size());
    }
  }
}

// Chains whose group was never waited for: after everything of their scope (finalize).
void Builder::place_open_flow_chains() {
  std::vector<uint32_t> open;
  for (const auto& [group, chains] : flow_chains_)
    for (const auto& entry : chains) open.push_back(entry.second);
  std::sort(open.begin(), open.end());
  for (uint32_t chain : open) append_item(nodes_[chain].parent, chain | kNodeBit);
  flow_chains_.clear();
}

// ---- parallel_pipeline's serial filters (TbbPipeline, TbbFilterBegin/End)
//
// A serial filter (serial_in_order, serial_out_of_order) runs one item at a time, but libtbb
// runs an item's turn at it in whichever stage task reaches the filter once it is free (the
// item's own task, returned by its previous stage; the task of the run before only if the item
// was already waiting for its turn then): nothing spawned orders that run after the filter's
// run before. The recorder brackets each run (the filter's operator() on one item, a part of a
// task's strand), and the run follows the end of the filter's previous run, like a lock's
// acquire after its release: in the order the runs happened, which is the items' order for
// serial_in_order and mutual exclusion for serial_out_of_order. Parallel filters are not
// bracketed: their runs are as independent as their tasks.
//
// An edge must go forward in the serial elision order, and the spawn tree does not give one
// that these edges follow: a stage task spawns the next item's input stage before its own
// item's next stage (returned to the scheduler), so every later item's stages come first in
// the tree, before the earlier item's output run they must follow. So a pipeline's stage tasks
// are not nested in the task that spawned them but are siblings inside the pipeline's root
// task, in the order they were spawned: a filter's next run is in a task spawned after its run
// before began (that run's own task, or one spawned after the run freed the filter), so every
// chain, spawn and bypass edge goes forward, and the tasks' ends join at the pipeline's wait
// as before. (Constructs called inside a filter keep their own nesting under its task.)

void Builder::on_tbb_pipeline(const Event& e) { pipelines_[e.f[0]] = Pipeline{}; }

void Builder::on_tbb_filter(const Event& e, uint32_t thread) {
  const uint32_t t = current_[thread];
  if (t == kNone || t >= tbb_group_of_.size()) return;
  auto it = pipelines_.find(tbb_group_of_[t]);
  if (it == pipelines_.end() || it->second.root == kNone) return;  // not a traced pipeline's task
  TaskState& ts = tasks_[t];
  if (ts.scope == kNone || ts.waiting || ts.open == kNone) return;
  std::vector<std::pair<uint64_t, uint32_t>>& filters = it->second.filters;
  size_t f = 0;
  while (f < filters.size() && filters[f].first != e.f[0]) ++f;
  if (f == filters.size()) filters.emplace_back(e.f[0], kNone);
  // The run is a strand (or several, if it waits for a construct of its own) of its task. Its
  // ends are at the pipeline's call, the line its tasks' strands start at (the filter's code,
  // header code called from libtbb, has no line of the program's).
  cur_code_ = site_address(it->second.root);
  const uint32_t before = close_strand(t);
  const uint32_t next = open_strand(t, thread, e.time);
  edge(before, next);
  if (e.kind == EventKind::TbbFilterBegin)
    edge(filters[f].second, next);
  else
    filters[f].second = before;  // the run's last strand
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
    TaskExtra& x = ts.more();
    drop(x.chunk_fork);  // (one pass: a chunk begun before this one and not ended)
    hold(fork);
    x.chunk_fork = fork;
    ts.scope = new_node(NodeKind::Chunk, ts.scope);
    one_pass_.tbb_chunks = true;
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
  if (last != kNone) {
    x.chunks->push_back(last);
    hold(last);  // (one pass: until the task's end takes it)
  }
  const uint32_t chunk = ts.scope;
  ts.scope = nodes_[chunk].parent;
  if (out_) close_node(chunk);
  // The code after a chunk does not wait for it: it follows what came before the chunk.
  edge(x.chunk_fork, open_strand(t, thread, e.time));
  if (out_) {
    drop(x.chunk_fork);
    x.chunk_fork = kNone;
  }
}

// A TBB task's chunks all end before the task does.
void Builder::join_chunks(uint32_t t) {
  TaskState& ts = tasks_[t];
  std::vector<uint32_t>* chunks = ts.peek().chunks;
  if (!chunks || chunks->empty()) return;
  for (uint32_t c : *chunks) {
    edge(c, ts.prev);
    drop(c);
  }
  chunks->clear();
}

// ---- one pass (the streaming mode: builder_stream.cpp)
//
// A wait joins every task spawned into its group since the group's previous wait, whoever
// spawned them: in one pass the group has a join (StrandSink::open_join) that each such task's
// end is folded into as it ends (its `parent_join`, as a taskwait's children have theirs), and
// the strand after the wait follows the join once every one of them has ended. An algorithm
// call's tasks share its instance: the tasks splitting a range take their parent's (they inherit
// its chain), the tasks one task spawns into one group for one call (parallel_invoke's) share an
// entry of stream_tbb_calls_, held by the call until its wait and by each of their nodes.

void Builder::stream_tbb_spawned(uint32_t parent, uint32_t child, uint64_t group) {
  ++st_[parent].children;
  auto [it, made] = stream_tbb_joins_.try_emplace(group, kNone);
  if (made) {
    it->second = stream_join();
    hold(it->second);  // the group's, until its wait ends
  }
  const uint32_t j = it->second;
  st_[child].parent_join = j;
  hold(j);
  ++ss_[j].undone;
}

void Builder::stream_tbb_wait_ended(uint64_t group, uint32_t strand, uint64_t time) {
  auto it = stream_tbb_joins_.find(group);
  if (it == stream_tbb_joins_.end()) return;
  const uint32_t j = it->second;
  stream_tbb_joins_.erase(it);
  // Tasks of the group not ended: oneTBB released the wait inside the task, before the end the
  // recorder writes once the task returns; their ends come a little later (or were lost), as a
  // taskwait's late children. The wait joins them (as every task of the group in memory).
  stream_late_children(j, time, true);
  edge(j, strand);
  drop(j);
}

void Builder::stream_tbb_call_node(uint32_t node) {
  sn_[node].tbb_call = true;
  ++stream_tbb_calls_[nodes_[node].instance].live;
}

void Builder::stream_tbb_call_over(const TbbCall& call) {
  if (call.instance != kNone) stream_tbb_call_done(call.instance);
}

void Builder::stream_tbb_call_done(uint32_t instance) {
  auto it = stream_tbb_calls_.find(instance);
  if (it == stream_tbb_calls_.end() || --it->second.live > 0) return;
  if (it->second.opened) out_->close_instance(it->second.instance);
  stream_tbb_calls_.erase(it);
}

// The recording's end: groups never waited for and calls still open let go.
void Builder::stream_tbb_finish() {
  for (auto& [group, join] : stream_tbb_joins_) drop(join);
  stream_tbb_joins_.clear();
  for (auto& [group, call] : tbb_calls_) stream_tbb_call_over(call);
  tbb_calls_.clear();
}

}  // namespace tasklens::model::detail
