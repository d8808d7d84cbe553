// Tasks that began and whose end the trace lacks (see builder_state.hpp). The strand a task runs
// gets its work at the thread's next event: a task whose end was never recorded would keep only
// what came before its last event (nothing, if it had none), and its work would vanish without a
// word. A oneTBB task_group task releases its group inside its execute, before it returns to the
// scheduler where the recorder writes its end: the group's wait may return, the program end and
// the recording stop while the task's thread is in between (preempted there, say), and the end
// is never written. An end can also be lost with its thread's events (no buffer memory, a
// stream cut short).
//
// Such a task ended before any wait that joined it had ended (the wait waits for it): it is
// closed there, an upper bound of its end; its thread's time from its last event to then is its
// work, less the time it was off its CPU (a switch-out still open when the recording ends, the
// recorder closes there). With no such join, it is closed at the recording's end if the recorder
// saw its thread still inside it then (OpenAtEnd), else at its thread's last event; either way its
// end is data the recording lost (Model::losses).
#include <algorithm>

#include "model/builder_state.hpp"

namespace tasklens::model::detail {

namespace {

constexpr uint64_t kNoTime = ~uint64_t{0};

const char* plural(uint64_t n, const char* one, const char* many) { return n == 1 ? one : many; }

}  // namespace

uint32_t Builder::find_task(uint64_t id) const {
  const uint64_t t = id >> 40, c = id & ((uint64_t{1} << 40) - 1);
  if (out_) {
    if (t >= id_pages_.size() || c / kIdPage >= id_pages_[t].pages.size() ||
        !id_pages_[t].pages[c / kIdPage])
      return kNone;
    return id_pages_[t].pages[c / kIdPage]->task[c % kIdPage];
  }
  if (t >= ids_.size() || c >= ids_[t].size()) return kNone;
  return ids_[t][c];
}

// The thread's time in [from, to) goes to `strand` as if an event had come at `to`: the time it
// was off its CPU (preempted, blocked, in a slow fault) and the recorder's pending cost are taken
// out, as handle() does. Only the TSC can be carried on: perf counters are known at events only.
void Builder::extend_strand(uint32_t strand, uint32_t thread, uint64_t from, uint64_t to) {
  strands_[strand].end = std::max(strands_[strand].end, to);
  if (tsc_metric_ < 0 || to <= from) return;
  OffCpuSplit split;
  uint64_t off = 0;
  if (thread < off_cpu_.size())
    off = std::min(preempted_between(thread, from, to, split), to - from);
  uint64_t ticks = to - from - off;
  uint64_t& debt = probe_debt_[thread];
  const uint64_t probe = std::min(ticks, debt);
  ticks -= probe;
  debt -= probe;
  probe_total_ += probe;
  const uint64_t blocked = std::min(split.blocked, off);
  const uint64_t faults = std::min(split.faults, off - blocked);
  blocked_total_ += blocked;
  faults_total_ += faults;
  preempted_total_ += off - blocked - faults;
  if (blocked && out_)
    ss_[strand].blocked += blocked;
  else if (blocked)
    blocked_work_.push_back(StrandBlocked{strand, blocked});
  if (tsc_metric_ == 0) {
    strands_[strand].work += ticks;
  } else {
    uint64_t delta[trace::kMaxMetrics] = {};
    delta[tsc_metric_ - 1] = ticks;
    add_extra_work(strand, delta);
  }
}

void Builder::close_unended(const std::vector<uint32_t>& join_target) {
  // The tasks the recorder saw their threads inside when the recording ended.
  std::vector<uint32_t> inside;
  for (const trace::OpenRun& r : trace_.open_at_end()) {
    const uint32_t t = find_task(r.task);
    if (t < tasks_.size() && tasks_[t].open != kNone && strands_[tasks_[t].open].thread == r.thread)
      inside.push_back(t);
  }
  std::sort(inside.begin(), inside.end());
  const uint64_t end = trace_.has_finish() ? trace_.finish().end_tsc : 0;
  cur_code_ = 0;  // no event closes these strands: no code address
  for (uint32_t t = 0; t < tasks_.size(); ++t) {
    TaskState& ts = tasks_[t];
    // A task inside a wait (its strand closed there) lost no work: it was waiting.
    if (ts.origin == kOriginOther || !ts.started || ts.done || ts.open == kNone || ts.waiting)
      continue;
    const uint32_t strand = ts.open, thread = strands_[strand].thread;
    if (thread >= current_.size()) continue;
    // Its thread's time after its last event is the task's, unless the thread went on to
    // something else (a damaged trace) or was waiting in the runtime.
    const bool running = current_[thread] == t && !mutex_wait_[thread];
    const uint64_t from = last_time_[thread];
    uint64_t to = kNoTime;
    uint64_t* count = unended_.lost;
    if (ts.peek().joined_at != kNoTime) {
      to = ts.peek().joined_at;
      count = unended_.joined;
    } else if (!ts.joined_in_scope && ts.node != kNone && ts.node != 0) {
      // Joined where its enclosing taskgroup or region ends (a barrier's join has no time).
      const uint32_t target = join_target[nodes_[ts.node].parent];
      if (target != kNone && strands_[target].thread != kNone) {
        to = strands_[target].start;
        count = unended_.joined;
      }
    }
    if (to == kNoTime && end > 0 && std::binary_search(inside.begin(), inside.end(), t)) {
      to = end;
      count = unended_.at_end;
    }
    if (running && to != kNoTime && to > from) extend_strand(strand, thread, from, to);
    ++count[ts.origin];
    close_strand(t);
    ts.done = true;
    if (ts.extra && ts.extra->chunks) join_chunks(t);
  }
}

void Builder::note_unended(Model& m) const {
  // Only the TSC goes on past a thread's last event (extend_strand).
  const std::string metric_note =
      tsc_metric_ == 0 ? ""
                       : std::string(" (in time: their ") + trace::to_string(trace_.metric()) +
                             " counts stop at their threads' last events)";
  const uint64_t tbb = unended_.joined[kOriginTbb], omp = unended_.joined[kOriginOpenMP];
  if (tbb)
    m.warnings.push_back(
        std::to_string(tbb) + plural(tbb, " oneTBB task's end was", " oneTBB tasks' ends were") +
        " not recorded (the program ended before " +
        plural(tbb, "its thread returned from it", "their threads returned from them") +
        "): counted up to the wait that joined " + plural(tbb, "it", "them") + ", which bounds " +
        plural(tbb, "its end", "their ends") + " from above" + metric_note);
  if (omp)
    m.warnings.push_back(
        std::to_string(omp) + plural(omp, " OpenMP task's end was", " OpenMP tasks' ends were") +
        " not recorded (" + plural(omp, "its event was", "their events were") +
        " lost): counted up to the taskwait, taskgroup or region end that joined " +
        plural(omp, "it", "them") + ", which bounds " + plural(omp, "its end", "their ends") +
        " from above" + metric_note);
  uint64_t at_end = 0, lost = 0;
  for (int o : {kOriginOpenMP, kOriginTbb}) {
    at_end += unended_.at_end[o];
    lost += unended_.lost[o];
  }
  const uint64_t total = at_end + lost;
  // When the recording lost events (a full disk, no memory), tasks' ends go with them: that loss
  // says so already.
  if (total == 0 || !m.losses.empty()) return;
  const bool only_tbb = unended_.at_end[kOriginOpenMP] + unended_.lost[kOriginOpenMP] == 0;
  const bool only_omp = unended_.at_end[kOriginTbb] + unended_.lost[kOriginTbb] == 0;
  const char* who = only_tbb ? " oneTBB" : only_omp ? " OpenMP" : "";
  trace::Loss l;
  l.cause = "unended_tasks";
  l.count = total;
  l.message = std::to_string(total) + who + plural(total, " task's end was", " tasks' ends were") +
              " not recorded and no wait joined " + plural(total, "it", "them") + ": ";
  const std::string at_end_words =
      std::string("counted up to the program's end, ") +
      plural(at_end, "its thread still inside it", "their threads still inside them");
  const std::string lost_words =
      std::string("counted up to ") +
      plural(lost, "its thread's last event", "their threads' last events") + ", what " +
      plural(lost, "it", "they") + " did after that is lost";
  if (lost == 0)
    l.message += at_end_words;
  else if (at_end == 0)
    l.message += lost_words;
  else
    l.message += std::to_string(at_end) + " " + at_end_words + "; " + std::to_string(lost) + " " +
                 lost_words;
  l.message += metric_note;
  m.losses.push_back(std::move(l));
}

}  // namespace tasklens::model::detail
