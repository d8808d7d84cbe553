// The timeline in one pass (export_stream.hpp).
#include "report/export_stream.hpp"

#include <algorithm>

#include "model/slots.hpp"

namespace tasklens::report {

using model::kNone;
using model::NodeKind;

TimelineSink::TimelineSink(const ExportClock& clock, const TimeWindow& window, uint64_t max_slices)
    : clock_(clock), window_(window), max_slices_(std::min<uint64_t>(max_slices, kNone - 1)) {
  out_.window = window;
  out_.ids_met = true;
}

void TimelineSink::node(uint64_t key, uint64_t parent, uint8_t kind, uint32_t, uint32_t instance) {
  const auto k = static_cast<NodeKind>(kind);
  const bool owns = k == NodeKind::Program || k == NodeKind::ImplicitTask || k == NodeKind::Task ||
                    k == NodeKind::Chunk;
  auto up = parent == kNoNode ? nodes_.end() : nodes_.find(parent);
  if (up == nodes_.end()) parent = kNoNode;  // (a parent already gone: a damaged trace)
  NodeInfo info{parent,
                owns || up == nodes_.end() ? key : up->second.owner,
                1,
                up == nodes_.end() ? 0 : up->second.depth + 1,
                instance == kNoInstance ? kNone : instance,
                kind};
  if (up != nodes_.end()) ++up->second.refs;
  nodes_.insert_or_assign(key, info);
  peak_nodes_ = std::max(peak_nodes_, nodes_.size());
}

void TimelineSink::ref(uint64_t key) {
  auto it = nodes_.find(key);
  if (it != nodes_.end()) ++it->second.refs;
}

void TimelineSink::unref(uint64_t key) {
  while (key != kNoNode) {
    auto it = nodes_.find(key);
    if (it == nodes_.end() || --it->second.refs != 0) return;
    key = it->second.parent;  // a node gone no longer holds its parent
    nodes_.erase(it);
  }
}

FlowKind TimelineSink::classify(uint64_t from_node, uint64_t to_node) const {
  auto owner = [&](uint64_t key) -> const NodeInfo* {
    auto it = nodes_.find(key);
    if (it == nodes_.end()) return nullptr;
    auto o = nodes_.find(it->second.owner);
    return o == nodes_.end() ? nullptr : &o->second;
  };
  const NodeInfo* a = owner(from_node);
  const NodeInfo* b = owner(to_node);
  if (a == b) return FlowKind::Continuation;
  if (!a || !b) return FlowKind::Dependence;  // (a damaged trace's node)
  // Is x a proper ancestor of y: y's ancestor at x's depth is x.
  auto above = [&](const NodeInfo* x, const NodeInfo* y) {
    if (x->depth >= y->depth) return false;
    while (y && y->depth > x->depth) {
      auto it = nodes_.find(y->parent);
      y = it == nodes_.end() ? nullptr : &it->second;
    }
    return y == x;
  };
  if (above(a, b)) return FlowKind::Spawn;
  if (above(b, a)) return FlowKind::Join;
  return FlowKind::Dependence;
}

void TimelineSink::times(uint64_t start, uint64_t end, uint32_t thread) {
  start_ = start;
  end_ = end;
  thread_ = thread;
}

TimelineSink::Strand TimelineSink::take_handle() {
  const Strand h = model::take_slot(carried_, free_);  // (a released slot is left empty)
  if (is_join_.size() < carried_.size()) is_join_.resize(carried_.size(), 0);
  return h;
}

void TimelineSink::add_source(std::vector<Source>& to, const Source& s) {
  ref(s.node);
  if (s.via != kNoNode) ref(s.via);
  to.push_back(s);
}

TimelineSink::Strand TimelineSink::strand(uint64_t work, uint64_t, uint32_t site,
                                          const Strand* preds, uint32_t pred_count, const Instance*,
                                          uint32_t, uint64_t, uint32_t fragment, uint64_t order) {
  ++out_.strands;
  const bool timed = thread_ != kNone && (start_ != 0 || end_ != 0);  // model::is_timed
  uint32_t slice = kNone;
  if (timed) {
    ++out_.timed;
    out_.first_start = std::min(out_.first_start, start_);
    const auto [start_ns, end_ns] = clock_.slice_ns(start_, end_);
    if (!window_.given || window_.holds(start_ns, end_ns)) {
      if (out_.slices.size() >= max_slices_) throw WindowTooLarge(max_slices_);
      slice = static_cast<uint32_t>(out_.slices.size());
      joined_in_scope_.push_back(0);
      auto node = nodes_.find(current_node_);
      const bool known = node != nodes_.end();
      out_.slices.push_back(TimelineSlice{start_, end_, work, order, order, thread_, site, fragment,
                                          known ? node->second.instance : kNone,
                                          known ? node->second.kind : uint8_t{0}});
    }
  }
  const Strand h = take_handle();
  if (slice != kNone) {
    // The flows into it: one per source slice (export_flows.hpp's rules).
    candidates_.clear();
    for (uint32_t i = 0; i < pred_count; ++i)
      for (const Source& s : carried_[preds[i]]) {
        if (skipped(preds[i], s)) continue;
        const uint32_t from_thread = out_.slices[s.slice].thread;
        if (s.via == kNoNode) {
          const FlowKind k = classify(s.node, current_node_);
          if (drawn(k, from_thread, thread_))
            candidates_.push_back({s.slice, k, false});
          else
            ++out_.continuations_hidden;
        } else {
          const FlowKind k = routed_kind(classify(s.node, s.via), classify(s.via, current_node_));
          if (drawn(k, from_thread, thread_)) candidates_.push_back({s.slice, k, true});
        }
      }
    std::sort(candidates_.begin(), candidates_.end(), [](const Candidate& a, const Candidate& b) {
      if (a.from != b.from) return a.from < b.from;
      return preferred_flow(a.routed, a.kind, b.routed, b.kind);
    });
    for (size_t i = 0; i < candidates_.size(); ++i)
      if (i == 0 || candidates_[i].from != candidates_[i - 1].from)
        out_.flows.push_back(
            TimelineFlow{candidates_[i].from, slice, candidates_[i].kind, candidates_[i].routed});
    add_source(carried_[h], Source{slice, current_node_, kNoNode});
  } else if (!timed) {
    // An untimed strand (a barrier's join) passes on the slices behind it, routed through it.
    // Each slice once (a slice's node is its own: any copy will do).
    scratch_.clear();
    for (uint32_t i = 0; i < pred_count; ++i)
      for (const Source& s : carried_[preds[i]])
        if (!skipped(preds[i], s)) scratch_.push_back(Source{s.slice, s.node, current_node_});
    std::sort(scratch_.begin(), scratch_.end(),
              [](const Source& a, const Source& b) { return a.slice < b.slice; });
    for (size_t i = 0; i < scratch_.size(); ++i)
      if (i == 0 || scratch_[i].slice != scratch_[i - 1].slice)
        add_source(carried_[h], scratch_[i]);
  }
  // (A slice outside the window carries nothing: no flow it starts is drawn.)
  mark_joined(preds, pred_count);
  return h;
}

void TimelineSink::mark_joined(const Strand* preds, uint32_t pred_count) {
  // A taskwait's join: the tasks it joins were made in the node the strand after it is in.
  for (uint32_t i = 0; i < pred_count; ++i) {
    if (!is_join_[preds[i]]) continue;
    for (const Source& s : carried_[preds[i]]) {
      if (s.via != kNoNode || joined_in_scope_[s.slice]) continue;
      auto it = nodes_.find(s.node);
      if (it == nodes_.end()) continue;
      auto owner = nodes_.find(it->second.owner);
      if (owner != nodes_.end() && owner->second.parent == current_node_)
        joined_in_scope_[s.slice] = 1;
    }
  }
}

TimelineSink::Strand TimelineSink::open_join() {
  const Strand h = take_handle();
  is_join_[h] = 1;
  return h;
}

void TimelineSink::fold(Strand join, Strand pred) {
  // A join stands for its predecessors: it carries what they carry, as they carry it.
  // (Sources met twice are drawn once: the flows into a slice are chosen per source.)
  for (const Source& s : carried_[pred]) add_source(carried_[join], s);
}

void TimelineSink::release(Strand s) {
  for (const Source& x : carried_[s]) {
    unref(x.node);
    if (x.via != kNoNode) unref(x.via);
  }
  carried_[s].clear();
  is_join_[s] = 0;
  if (carried_[s].capacity() > 64) carried_[s].shrink_to_fit();
  free_.push_back(s);
}

Timeline TimelineSink::take() { return std::move(out_); }

}  // namespace tasklens::report
