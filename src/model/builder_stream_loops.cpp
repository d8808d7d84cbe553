// The builder's streaming mode (builder_stream.cpp) for worksharing loops and taskloops: which
// loop pieces stand for their iterations on paths, decided as find_divisible decides it in memory,
// once what decides it has been seen (docs/design-scale.md, "Worksharing loops and sections" and
// "Taskloops").
#include <algorithm>

#include "model/builder_state.hpp"

namespace tasklens::model::detail {

void Builder::stream_piece(uint32_t node, uint32_t instance, uint64_t iterations, uint64_t start,
                           Piece piece) {
  StreamNode& v = sn_[node];
  v.piece_kind = piece;
  v.iterations = iterations;
  v.first_iteration = start;
  if (piece == Piece::Chunk || piece == Piece::TaskloopTask) {
    v.piece = StreamNode::Known;
    return;
  }
  // A thread's first chunk or whole share: its iterations are known once every share has ended.
  // The node stays until then.
  v.piece = StreamNode::AtLoopEnd;
  ++v.pending;
  stream_loops_[instance].waiting.push_back(node);
}

void Builder::stream_share_ended(uint32_t share) {
  close_node(share);
  auto it = stream_loops_.find(nodes_[share].instance);
  if (it == stream_loops_.end()) return;
  if (++it->second.ended == it->second.team) stream_loop_ended(it->first, it->second);
}

// Every share of the loop has ended: its pieces' iterations, as find_divisible works them out.
void Builder::stream_loop_ended(uint32_t instance, StreamLoop& loop) {
  const LoopCoverage coverage =
      loop_coverage_.count(instance) ? loop_coverage_[instance] : LoopCoverage{};
  loop_coverage_.erase(instance);
  std::vector<uint32_t> shares, firsts;
  for (uint32_t v : loop.waiting)
    (sn_[v].piece_kind == Piece::Share ? shares : firsts).push_back(v);
  if (coverage.dispatched == 0)
    for (uint32_t v : shares) sn_[v].iterations /= shares.size();
  if (coverage.dispatched > 0 && coverage.dispatched < coverage.trip) {
    std::stable_sort(firsts.begin(), firsts.end(), [&](uint32_t a, uint32_t b) {
      return sn_[a].first_iteration < sn_[b].first_iteration;
    });
    std::vector<uint64_t*> ranked;
    for (uint32_t v : firsts) ranked.push_back(&sn_[v].iterations);
    shares_of_first_chunks(ranked, coverage.trip);
  }
  const std::vector<uint32_t> waiting = std::move(loop.waiting);
  loop.waiting.clear();
  for (uint32_t v : waiting) {
    sn_[v].piece = StreamNode::Known;
    if (sn_[v].closed) release_deferred(v, alone(v));
    node_item_done(v);  // (its hold while it waited)
  }
  // Its ordered parts' chain (on_ordered) joins where its phase ends, as finalize joins it; its
  // node, a share of the loop, ends. (Last: `loop` may be retired with it.)
  const auto ordered = last_ordered_.find(instance);
  if (ordered != last_ordered_.end()) {
    const OrderedChain chain = ordered->second;
    last_ordered_.erase(ordered);
    edge(chain.last, node_join(chain.phase));
    drop(chain.last);
    close_node(chain.node);
  }
}

// ---- taskloops (find_divisible's rule for their tasks, as the tasks end)

void Builder::stream_taskloop_task(uint32_t taskloop, uint32_t node) {
  auto it = stream_taskloops_.find(taskloop);
  if (it == stream_taskloops_.end()) return;
  ++it->second.open;
  StreamNode& v = sn_[node];
  v.taskloop_index = static_cast<uint32_t>(it->second.waiting.size());
  it->second.waiting.push_back(node);
  v.taskloop = taskloop;
  v.piece = StreamNode::AtLoopEnd;
  v.piece_kind = Piece::TaskloopTask;
  ++v.pending;  // (its hold while it waits)
}

// A dispatch event gave the task's own iterations: its piece is known at once, whatever the
// taskloop's share (it still counts among the taskloop's tasks).
void Builder::stream_taskloop_dispatch(uint32_t node, uint64_t iterations, uint64_t start) {
  StreamNode& v = sn_[node];
  if (v.taskloop == kNone || v.dispatched || v.piece != StreamNode::AtLoopEnd) {
    stream_piece(node, kNone, iterations, start, Piece::TaskloopTask);
    return;
  }
  v.dispatched = true;
  v.iterations = iterations;
  v.first_iteration = start;
  v.piece = StreamNode::Known;
  if (v.closed) release_deferred(node, alone(node));
  // It waits no more: out of the taskloop's list (the last one takes its place), its hold let
  // go. (It still counts among the taskloop's tasks when it ends: `taskloop` stays.)
  auto it = stream_taskloops_.find(v.taskloop);
  if (it != stream_taskloops_.end()) {
    std::vector<uint32_t>& waiting = it->second.waiting;
    const uint32_t last = waiting.back();
    waiting[v.taskloop_index] = last;
    sn_[last].taskloop_index = v.taskloop_index;
    waiting.pop_back();
  }
  node_item_done(node);  // (its hold)
}

// A taskloop's task ended (its node closed), or the taskloop did.
void Builder::stream_taskloop_closed(uint32_t node) {
  const bool task = sn_[node].taskloop != kNone;
  const uint32_t taskloop = task ? sn_[node].taskloop : node;
  auto it = stream_taskloops_.find(taskloop);
  if (it == stream_taskloops_.end()) return;
  StreamTaskloop& l = it->second;
  if (task) {
    --l.open;
    if (alone(node)) ++l.alone;
    // Ended without a dispatch event: its strands wait for the taskloop's end.
    if (!sn_[node].dispatched && ++l.held > kMaxTaskloopHeld) {
      static const std::string what =
          "a taskloop of more than " + std::to_string(kMaxTaskloopHeld) +
          " tasks without dispatch events (a one-thread team's, or gcc's), whose tasks' share of "
          "its iterations is known only at its end";
      stream_unsupported(what.c_str());
    }
  } else {
    l.ended = true;
  }
  if (l.ended && l.open == 0) stream_taskloop_resolve(taskloop);
}

// The trip count shared evenly among the tasks that stand alone: each undispatched one that does
// stands for that many iterations.
void Builder::stream_taskloop_resolve(uint32_t taskloop) {
  auto it = stream_taskloops_.find(taskloop);
  if (it == stream_taskloops_.end()) return;
  const StreamTaskloop l = std::move(it->second);
  stream_taskloops_.erase(it);
  const uint64_t share = l.trip / std::max<uint64_t>(l.alone, 1);
  for (uint32_t v : l.waiting) {
    StreamNode& x = sn_[v];
    x.iterations = share;
    x.piece = StreamNode::Known;
    if (x.closed) release_deferred(v, alone(v));
    node_item_done(v);  // (its hold)
  }
  node_item_done(taskloop);  // (its hold)
}

}  // namespace tasklens::model::detail
