// Worksharing events -> strands of loops, their chunks and ordered regions (see
// builder_state.hpp; the other events are in builder_events.cpp).
#include <algorithm>

#include "model/builder_state.hpp"

namespace tasklens::model::detail {

void Builder::on_work_begin(const Event& e, uint32_t thread) {
  uint32_t t = task(e.f[1]);
  TaskState& ts = tasks_[t];
  if (ts.scope == kNone) return;
  uint64_t w = e.f[0];
  auto ws_instance = [&]() {
    TaskExtra& x = ts.more();
    uint64_t key = (uint64_t(x.region) << 32) | x.ws_seq++;
    auto [it, inserted] = ws_instances_.try_emplace(key, instance_count_);
    if (inserted) ++instance_count_;
    return it->second;
  };
  if (is_loop(w) || w == kWorkSections) {
    uint32_t fork = close_strand(t);
    bool loop = is_loop(w);
    uint32_t n = new_node(loop ? NodeKind::Loop : NodeKind::Sections, ts.scope);
    nodes_[n].site = site(e.f[3], loop ? SiteKind::Loop : SiteKind::Sections, ts.scope);
    keep_site_code(n);
    nodes_[n].instance = ws_instance();
    if (loop) {
      LoopCoverage& c = loop_coverage_[nodes_[n].instance];
      c.trip = std::max(c.trip, e.f[2]);
    }
    ts.scope = n;
    TaskExtra& x = ts.more();
    if (out_) {  // (one share of the team's instance; the previous loop's fork and chunks go)
      StreamLoop& l = stream_loops_[nodes_[n].instance];
      l.team = std::max<uint32_t>(ts.team_size, 1);
      ++l.live;
      sn_[n].shared_instance = true;
      hold(fork);
      drop(x.loop_fork);
      if (st_[t].loop_join != kNone) drop(st_[t].loop_join);
      st_[t].loop_join = kNone;
    }
    x.loop_fork = fork;
    if (!x.loop_members) x.loop_members = new std::vector<uint32_t>();
    x.loop_members->clear();
    // Without dispatch events (old runtimes) this thread's whole share is one chunk.
    if (!(trace_.runtime_flags() & trace::kRuntimeHasDispatch)) {
      ts.scope = new_node(NodeKind::Chunk, n);
    }
    // Its iterations, should no dispatch event come (a one-thread team has none).
    if (loop && out_)
      stream_piece(ts.scope, nodes_[n].instance, e.f[2], 0, Piece::Share);
    else if (loop)
      chunk_iterations_.push_back({ts.scope, nodes_[n].instance, e.f[2], 0, Piece::Share});
    edge(fork, open_strand(t, thread, e.time));
  } else if (w == kWorkSingleExecutor || w == kWorkTaskloop) {
    uint32_t prev = close_strand(t);
    bool single = w == kWorkSingleExecutor;
    uint32_t scope = ts.scope;
    uint32_t st = site(e.f[3], single ? SiteKind::Single : SiteKind::Taskloop, scope);
    if (!single && nodes_[scope].kind == NodeKind::Taskgroup && nodes_[scope].item_count == 1 &&
        !(nodes_[scope].last_item & kNodeBit)) {
      // The taskgroup taskloop opened for itself: the taskloop is the construct to report.
      nodes_[scope].site = kNone;
      nodes_[scope].instance = kNone;
    }
    uint32_t n = new_node(single ? NodeKind::Single : NodeKind::Taskloop, scope);
    nodes_[n].site = st;
    keep_site_code(n);
    nodes_[n].instance = single ? ws_instance() : instance_count_++;
    if (!single && out_) {  // its trip count waits for its tasks (held until shared)
      stream_taskloops_[n].trip = e.f[2];
      ++sn_[n].pending;
    } else if (!single) {
      chunk_iterations_.push_back({n, kNone, e.f[2], 0, Piece::Taskloop});
    }
    ts.scope = n;
    edge(prev, open_strand(t, thread, e.time));
  } else if (w == kWorkSingleOther) {
    ts.more().ws_seq++;  // keeps single instances aligned across the team
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
    const uint32_t chunk = nodes_[n].kind == NodeKind::Chunk ? n : kNone;
    if (chunk != kNone) n = nodes_[n].parent;
    if (nodes_[n].kind != NodeKind::Loop && nodes_[n].kind != NodeKind::Sections) {
      ++anomalies_;
      return;
    }
    ts.scope = nodes_[n].parent;
    uint32_t s = open_strand(t, thread, e.time);
    edge(last, s);
    if (const auto* members = ts.peek().loop_members)
      for (uint32_t m : *members) edge(m, s);
    if (out_) {  // its chunks, joined; the chunk and the share end
      if (const uint32_t j = st_[t].loop_join; j != kNone) {
        st_[t].loop_join = kNone;
        edge(j, s);
        drop(j);
      }
      close_node(chunk);
      stream_share_ended(n);
    }
  } else if (w == kWorkSingleExecutor || w == kWorkTaskloop) {
    NodeKind want = w == kWorkSingleExecutor ? NodeKind::Single : NodeKind::Taskloop;
    if (nodes_[ts.scope].kind != want) {
      ++anomalies_;
      return;
    }
    uint32_t prev = close_strand(t);
    const uint32_t single = ts.scope;
    ts.scope = nodes_[single].parent;
    edge(prev, open_strand(t, thread, e.time));
    if (out_) close_node(single);
  }
}

void Builder::on_dispatch(const Event& e, uint32_t thread) {
  uint64_t kind = e.f[0];
  if (kind == kDispatchTaskloopChunk) {
    // A taskloop task's iterations (it is one strand unless its body makes constructs).
    TaskState& ts = tasks_[task(e.f[1])];
    if (ts.node != kNone && nodes_[ts.node].kind == NodeKind::Task && e.f[3] >= 2) {
      if (out_)
        stream_taskloop_dispatch(ts.node, e.f[3], e.f[2]);
      else
        chunk_iterations_.push_back({ts.node, kNone, e.f[3], e.f[2], Piece::TaskloopTask});
    }
    return;
  }
  if (kind != kDispatchWsLoopChunk && kind != kDispatchSection && kind != kDispatchDistributeChunk)
    return;  // single iterations add nothing to the structure
  uint32_t t = task(e.f[1]);
  TaskState& ts = tasks_[t];
  if (ts.scope == kNone) return;
  uint32_t n = ts.scope;
  const bool first = nodes_[n].kind != NodeKind::Chunk;
  uint32_t prev = close_strand(t);
  if (nodes_[n].kind == NodeKind::Chunk) n = nodes_[n].parent;
  if (nodes_[n].kind != NodeKind::Loop && nodes_[n].kind != NodeKind::Sections) {
    ++anomalies_;
    return;
  }
  if (out_ && prev != kNone) {  // (the streaming mode joins them as they come)
    if (st_[t].loop_join == kNone) {
      st_[t].loop_join = stream_join();
      hold(st_[t].loop_join);
    }
    edge(prev, st_[t].loop_join);
  } else if (ts.peek().loop_members && prev != kNone) {
    ts.extra->loop_members->push_back(prev);
  }
  if (out_ && !first) close_node(ts.scope);  // the chunk before
  cur_code_ = site_address(n);               // a chunk's code starts at its loop
  if (kind == kDispatchWsLoopChunk) loop_coverage_[nodes_[n].instance].dispatched += e.f[3];
  ts.scope = new_node(NodeKind::Chunk, n);
  if (kind != kDispatchSection && (first || e.f[3] >= 2)) {
    const Piece piece = first ? Piece::FirstChunk : Piece::Chunk;
    if (out_)
      stream_piece(ts.scope, nodes_[n].instance, e.f[3], e.f[2], piece);
    else
      chunk_iterations_.push_back({ts.scope, nodes_[n].instance, e.f[3], e.f[2], piece});
  }
  edge(ts.peek().loop_fork, open_strand(t, thread, e.time));
}

// An iteration's ordered part runs after the previous iteration's (whichever thread ran it) and
// after its own body; the body of the thread's next iteration does not wait for it (only the
// schedule put it after): it starts from the loop's fork. So a loop with `ordered` is seen
// iteration by iteration, its ordered parts in a chain. The parts live in a node of their own,
// a share of the loop placed after all of the team's implicit tasks in its phase (finalize()
// puts it there), and the chain joins
// the phase's end: the turns go from thread to thread in iteration order, which need not be the
// order the implicit tasks are numbered in, and every edge must go forward in that numbering.
void Builder::on_ordered(const Event& e, uint32_t thread, bool begin) {
  const uint32_t t = current_[thread];
  if (t == kNone) return;
  TaskState& ts = tasks_[t];
  if (ts.scope == kNone || ts.node == kNone) return;
  if (begin) {
    uint32_t n = ts.scope;
    if (nodes_[n].kind == NodeKind::Chunk) n = nodes_[n].parent;
    const uint32_t phase = nodes_[ts.node].parent;
    if (nodes_[n].kind != NodeKind::Loop || nodes_[n].instance == kNone || ts.open == kNone ||
        nodes_[ts.node].kind != NodeKind::ImplicitTask || phase == kNone ||
        nodes_[phase].kind != NodeKind::Phase)
      return;
    auto [it, first] = last_ordered_.try_emplace(nodes_[n].instance);
    OrderedChain& chain = it->second;
    if (first && out_) {
      // (The streaming mode: a node of the phase at once, one more share of the loop's
      // instance; it ends with the loop, stream_loop_ended.)
      chain.node = new_node(NodeKind::Loop, phase);
      nodes_[chain.node].site = nodes_[n].site;
      nodes_[chain.node].instance = nodes_[n].instance;
      sn_[chain.node].shared_instance = true;
      ++stream_loops_[nodes_[n].instance].live;
      chain.phase = phase;
    } else if (first) {
      // Not an item of the phase yet: finalize() appends it last, after every implicit task
      // (threads of the team may begin theirs after this part).
      chain.node = static_cast<uint32_t>(nodes_.size());
      nodes_.push_back(PNode{NodeKind::Loop, phase});
      nodes_[chain.node].site = nodes_[n].site;
      nodes_[chain.node].instance = nodes_[n].instance;
      chain.phase = phase;
    }
    const uint32_t body = close_strand(t);
    ts.more().ordered_return = ts.scope;
    ts.scope = chain.node;
    const uint32_t part = open_strand(t, thread, e.time);
    edge(body, part);
    // Chained by when each part got its turn: a release's event can come after the next
    // part's turn began (the releasing thread preempted before its callback read the clock),
    // the turns themselves cannot.
    edge(chain.last, part);
    hold(part);  // (the streaming mode: until the next part, or the loop's end, takes it)
    drop(chain.last);
    chain.last = part;
  } else {
    if (!ts.extra || ts.extra->ordered_return == kNone) return;
    close_strand(t);
    ts.scope = ts.extra->ordered_return;
    ts.extra->ordered_return = kNone;
    edge(ts.peek().loop_fork, open_strand(t, thread, e.time));
  }
}

}  // namespace tasklens::model::detail
