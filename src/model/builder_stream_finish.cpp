// The end of a streaming build (build_streaming): what the trace left open (tasks begun and not
// ended, loops and taskloops a killed program left, strands waiting for a predecessor that never
// ended) is closed as the in-memory finalize would close it, the last strands are handed over,
// and the Model gets the run's description. Apart from builder_stream.cpp, which does the same
// as the events come.
#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "model/builder_state.hpp"

namespace tasklens::model::detail {

Model Builder::finish_stream() {
  // Tasks begun whose ends were not recorded and that no wait joined: at the recording's end if
  // their threads were inside them then, else where they are (builder_unended.cpp).
  std::vector<uint32_t> inside;
  for (const trace::OpenRun& r : trace_.open_at_end()) {
    const uint32_t t = find_task(r.task);
    if (t < tasks_.size() && tasks_[t].open != kNone && strands_[tasks_[t].open].thread == r.thread)
      inside.push_back(t);
  }
  const uint64_t end = trace_.has_finish() ? trace_.finish().end_tsc : 0;
  cur_code_ = 0;
  for (uint32_t t = 0; t < tasks_.size(); ++t) {
    const TaskState& ts = tasks_[t];
    if (!st_[t].live || ts.origin == kOriginOther || !ts.started || ts.done || ts.open == kNone ||
        ts.waiting)
      continue;
    const uint64_t joined_at = ts.peek().joined_at;  // a child its parent's taskwait joined
    const bool at_end = end > 0 && std::find(inside.begin(), inside.end(), t) != inside.end();
    if (joined_at != ~uint64_t{0})
      stream_unended(t, joined_at, unended_.joined);
    else
      stream_unended(t, at_end ? end : ~uint64_t{0}, at_end ? unended_.at_end : unended_.lost);
  }
  // Children not ended (never begun, or suspended): the waits that joined them go on without
  // them.
  for (const LateChild& late : late_children_)
    if (st_[late.task].live && st_[late.task].id == late.id && !st_[late.task].ended)
      stream_leave_join(late.task);
  late_children_.clear();
  // What is still open (the initial task; tasks a killed program left) ends where it is.
  for (uint32_t t = 0; t < tasks_.size(); ++t)
    if (st_[t].live) close_strand(t);
  // Loops some thread of the team never ended (a killed program): their pieces as they stand.
  std::vector<uint32_t> unended;
  for (const auto& [instance, loop] : stream_loops_) unended.push_back(instance);
  for (uint32_t instance : unended) {
    auto it = stream_loops_.find(instance);
    if (it == stream_loops_.end()) continue;
    it->second.team = it->second.ended;
    stream_loop_ended(instance, it->second);  // (may retire it: not used after)
  }
  // Taskloops not ended (a killed program): their tasks' share as they stand.
  std::vector<uint32_t> taskloops;
  for (const auto& [node, l] : stream_taskloops_) taskloops.push_back(node);
  for (uint32_t node : taskloops) {
    StreamTaskloop& l = stream_taskloops_[node];
    for (uint32_t v : l.waiting) {
      if (sn_[v].closed) continue;
      // Its task is over (nothing of it comes after the trace): closed here, so that its strands
      // sealed below take their iterations.
      if (alone(v)) ++l.alone;
      sn_[v].closed = true;
      if (sn_[v].piece == StreamNode::Known) release_deferred(v, alone(v));
      node_item_done(v);
    }
    stream_taskloop_resolve(node);
  }
  for (uint32_t s = 0; s < ss_.size(); ++s)
    if (ss_[s].state == StreamStrand::Open) seal(s);
  stream_flush();
  // A strand still waiting has a predecessor that never ended: it goes without it.
  for (uint32_t s : sealed_) {
    StreamStrand& x = ss_[s];
    uint32_t kept = 0;
    for (uint32_t k = 0; k < x.pred_count; ++k) {
      const uint32_t q = k < std::size(x.preds) ? x.preds[k] : x.more_preds[k - 3];
      if (ss_[q].state == StreamStrand::Handed) {
        if (kept < std::size(x.preds))
          x.preds[kept] = q;
        else
          x.more_preds[kept - 3] = q;
        ++kept;
      } else {
        ++stream_late_;
      }
    }
    x.pred_count = kept;
    x.more_preds.resize(kept > std::size(x.preds) ? kept - std::size(x.preds) : 0);
  }
  stream_flush();
  // Every construct still open ends now (its instance counts).
  stream_tbb_finish();
  for (uint32_t n = 0; n < sn_.size(); ++n)
    if (sn_[n].live) close_node(n);
  // Tasks still waiting for a strand that never closed (a task whose end came after its region's,
  // say): their idle times from the strands closed so far.
  for (std::vector<IdleGroup>& groups : idle_groups_) {
    for (const IdleGroup& g : groups) stream_idle_group_done(g);
    groups.clear();
  }

  Model m;
  m.one_pass = std::move(one_pass_);
  m.one_pass.read = true;
  m.fragments = std::move(stream_fragments_);
  if (m.fragments.empty()) m.fragments.push_back(Fragment{});
  // The regions' names as finalize gives them (a region met only by id is "region#ID").
  m.region_names = trace_.region_names();
  if (stream_region_count_ > m.region_names.size()) m.region_names.resize(stream_region_count_);
  for (size_t i = 0; i < m.region_names.size(); ++i)
    if (m.region_names[i].empty()) m.region_names[i] = "region#" + std::to_string(i);
  describe_run(m);
  m.one_pass.blocked_by_site.resize(m.sites.size(), 0);
  anomalies_ += stream_late_;
  describe_anomalies(m, 0, 0);
  preemption_in_run(m, stream_first_, m.one_pass.last_end);
  return m;
}

}  // namespace tasklens::model::detail
