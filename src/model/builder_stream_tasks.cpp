// The builder's streaming mode (builder_stream.cpp) for a sink that wants the tasks
// (StrandSink::task: `tasks --stream`): each task's size, its wait from ready to start and its
// thread's idle time before it, as analysis/tasks.cpp's task_samples has them in memory.
#include <algorithm>

#include "model/builder_state.hpp"
#include "model/slots.hpp"

namespace tasklens::model::detail {

void Builder::stream_task_strand(uint32_t s) {
  StreamStrand& x = ss_[s];
  const PStrand& p = strands_[s];
  const bool timed = p.thread != kNone && (p.start != 0 || p.end != 0);
  uint64_t ready = 0;  // the latest effective end of its predecessors
  for (uint32_t k = 0; k < x.pred_count; ++k)
    ready = std::max(ready, ss_[k < std::size(x.preds) ? x.preds[k] : x.more_preds[k - 3]].eff_end);
  x.eff_end = timed ? p.end : ready;
  const uint32_t owner = sn_[p.node].owner;
  if (owner == kNone) return;
  StreamNode& task = sn_[owner];
  task.task_size += p.work;
  if (x.first_of_task && timed && p.start != 0 && ready != 0)
    task.wait = p.start > ready ? p.start - ready : 0;
}

void Builder::stream_task_done(uint32_t n) {
  StreamNode& x = sn_[n];
  StrandSink::Task t;
  t.site = x.site;
  t.chunk = nodes_[n].kind == NodeKind::Chunk;
  t.size = x.task_size;
  t.wait = x.wait;
  t.idle = x.idle;
  if (x.idle_wait != kNone) {  // its idle time is not known yet: the record waits for it
    IdleWait& w = idle_waits_[x.idle_wait];
    w.done = true;
    w.node = kNone;
    w.task = t;
    x.idle_wait = kNone;
    return;
  }
  out_->task(t);
}

void Builder::stream_idle_begin(uint32_t owner, const PStrand& first) {
  const std::vector<uint64_t>& open = stream_open_[first.thread];
  std::vector<IdleGroup>& groups = idle_groups_[first.thread];
  if (groups.empty() || groups.back().open != open) {
    IdleGroup g;
    g.open = open;
    g.remaining = static_cast<uint32_t>(open.size());
    groups.push_back(std::move(g));
  }
  const uint32_t w = take_slot(idle_waits_, free_idle_waits_);
  IdleWait& wait = idle_waits_[w];
  wait = IdleWait{};
  wait.start = first.start;
  wait.busy = stream_busy_[first.thread];
  wait.node = owner;
  sn_[owner].idle_wait = w;
  groups.back().waits.push_back(w);
}

void Builder::stream_idle_strand_closed(const PStrand& p, uint64_t order) {
  std::vector<uint64_t>& open = stream_open_[p.thread];
  const auto it = std::find(open.begin(), open.end(), order);
  if (it != open.end()) open.erase(it);
  std::vector<IdleGroup>& groups = idle_groups_[p.thread];
  for (size_t i = 0; i < groups.size();) {
    IdleGroup& g = groups[i];
    if (std::find(g.open.begin(), g.open.end(), order) == g.open.end()) {
      ++i;
      continue;
    }
    if (p.start != 0 || p.end != 0) {
      g.latest_end = std::max(g.latest_end, p.end);
      g.timed = true;
    }
    if (--g.remaining > 0) {
      ++i;
      continue;
    }
    stream_idle_group_done(g);
    groups.erase(groups.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

// Every strand open when the group's tasks began has ended (or the trace has): their idle times,
// as task_samples has them (from the latest end of the strands their thread ran before them).
void Builder::stream_idle_group_done(const IdleGroup& g) {
  for (const uint32_t w : g.waits) {
    IdleWait& wait = idle_waits_[w];
    const bool first = wait.busy == StrandSink::kNoTime && !g.timed;  // none ran before it
    const uint64_t busy =
        wait.busy == StrandSink::kNoTime ? g.latest_end : std::max(wait.busy, g.latest_end);
    const uint64_t idle = first ? StrandSink::kNoTime : wait.start > busy ? wait.start - busy : 0;
    if (wait.done) {
      wait.task.idle = idle;
      out_->task(wait.task);
    } else {
      sn_[wait.node].idle = idle;
      sn_[wait.node].idle_wait = kNone;
    }
    free_idle_waits_.push_back(w);
  }
}

}  // namespace tasklens::model::detail
