// Threads the program starts itself (src/recorder/threads.cpp) -> provisional strands, nodes and
// edges (see builder_state.hpp). Such a thread is a task-like child of the task that created it
// (a Task node with a Thread site): spawned where pthread_create was called, joined where
// pthread_join returned, and joined by nothing else (no taskwait, barrier or end of taskgroup
// waits for a thread). The joiner's time blocked in pthread_join is not work.
#include "model/builder_state.hpp"

namespace tasklens::model::detail {

void Builder::on_user_thread(const Event& e, uint32_t thread) {
  switch (e.kind) {
    case EventKind::UserThreadCreate: {
      // A thread created outside every task (before the runtimes, or by a thread of its own
      // that has none) hangs under the program, like a oneTBB call from such a thread.
      if (out_ && current_[thread] == kNone)
        stream_unsupported("threads of its own started outside every task");
      const uint32_t p =
          current_[thread] != kNone ? current_[thread] : outside_task(thread, e.time);
      const uint32_t c = task(e.f[0]);
      if (c == p || tasks_[c].node != kNone) {  // created twice: a damaged trace
        ++anomalies_;
        return;
      }
      TaskState& ps = tasks_[p];
      if (ps.scope == kNone) {
        ps.node = ps.scope = 0;
        ++anomalies_;
      }
      saw_constructs_ = true;
      const uint32_t creator = close_strand(p);
      TaskState& cs = tasks_[c];
      cs.parent = p;
      cs.team_size = 2;
      cs.creator_strand = creator;
      hold(creator);              // (one pass: until the thread's first strand takes it)
      cs.joined_in_scope = true;  // no structural join: only pthread_join waits for it
      cs.node = cs.scope = new_node(NodeKind::Task, ps.scope);
      nodes_[cs.node].site = site(e.f[1], SiteKind::Thread, ps.scope);
      keep_site_code(cs.node);
      nodes_[cs.node].instance = instance_count_++;
      if (out_) {
        ++st_[p].children;  // its creator outlives it (maybe_retire_task)
        dep_hold(c);        // its end is needed until pthread_join (or the trace's end)
      }
      edge(creator, open_strand(p, thread, e.time));
      break;
    }
    case EventKind::UserThreadStart: {
      const uint32_t c = task(e.f[0]);
      TaskState& cs = tasks_[c];
      if (cs.started) {
        ++anomalies_;
        return;
      }
      cs.started = true;
      if (cs.scope == kNone) {  // its creation was not recorded
        cs.node = cs.scope = 0;
        cs.joined_in_scope = true;
        ++anomalies_;
      }
      current_[thread] = thread_task_[thread] = c;
      cur_code_ = site_address(cs.node);
      const uint32_t s = open_strand(c, thread, e.time);
      edge(cs.creator_strand, s);
      if (out_) {
        drop(cs.creator_strand);
        cs.creator_strand = kNone;
      }
      break;
    }
    case EventKind::UserThreadEnd: {
      const uint32_t c = task(e.f[0]);
      close_strand(c);
      tasks_[c].done = true;
      end_task_regions(c);
      if (current_[thread] == c) current_[thread] = kNone;
      if (thread_task_[thread] == c) thread_task_[thread] = kNone;
      if (out_ && tasks_[c].node != kNone) stream_task_ended(c);
      break;
    }
    case EventKind::UserThreadJoinBegin: {
      const uint32_t t = current_[thread];
      if (t == kNone || tasks_[t].scope == kNone || tasks_[t].open == kNone) return;
      TaskState& ts = tasks_[t];
      ts.pre_wait = close_strand(t);
      hold(ts.pre_wait);  // (one pass: until the strand after the join takes it)
      ts.waiting = true;
      break;
    }
    case EventKind::UserThreadJoinEnd: {
      const uint32_t t = current_[thread];
      if (t == kNone || !tasks_[t].waiting || tasks_[t].open != kNone) return;
      const uint32_t c = task(e.f[0]);
      TaskState& ts = tasks_[t];
      ts.waiting = false;
      const uint32_t s = open_strand(t, thread, e.time);
      edge(ts.pre_wait, s);
      if (tasks_[c].node != kNone && c != t) edge_from_task_end(c, s);
      if (out_) {
        drop(ts.pre_wait);
        ts.pre_wait = kNone;
        // Joined: its end is not needed any more (a second join of it is a damaged trace's).
        if (c != t && st_[c].live && tasks_[c].joined_in_scope && !st_[c].thread_joined &&
            tasks_[c].node != kNone) {
          st_[c].thread_joined = true;
          dep_drop(c);
        }
      }
      break;
    }
    default:
      break;
  }
}

}  // namespace tasklens::model::detail
