// Builds the Model (strand DAG + construct tree) from a trace's OpenMP events.
//
// OpenMP semantics (each has an end-to-end test in tests/e2e/e2e_semantics_test.cpp):
//  * spawn: the strand that ends at a task's creation -> the task's first strand;
//  * taskwait joins the children created before it (not grandchildren); a task that outlives
//    its parent's waits joins at the end of the innermost enclosing taskgroup or at the next
//    barrier of its team (its "structural" join);
//  * taskgroup end joins every descendant created inside it; barriers join the whole team;
//  * depend(in/out/inout) orders sibling tasks, also when the predecessor already finished;
//  * undeferred (if(0), included) tasks join into the strand that follows their creation;
//  * each worksharing-loop chunk (or section) is a strand of its own, forked from the strand
//    before the loop and joined by the strand after it (or by the barrier).
#pragma once

#include <functional>

#include "model/model.hpp"
#include "model/strand_sink.hpp"
#include "trace/reader.hpp"

namespace tasklens::model {

class ModelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// build_streaming met a construct it cannot read in one pass yet (`construct` names it).
// The most ended tasks of one taskloop the one-pass builder holds back until the taskloop ends
// (a taskloop without dispatch events; more is refused in one line: NotInOnePass).
inline constexpr size_t kMaxTaskloopHeld = size_t{1} << 18;

class NotInOnePass : public ModelError {
 public:
  NotInOnePass(const std::string& message, std::string what)
      : ModelError(message), construct(std::move(what)) {}
  std::string construct;  // "worksharing loops or sections", "oneTBB tasks" ...
};

// One interval of a thread's time that went into a strand, by its kind (trace::RuntimeCostEntry):
// what `tasklens record`'s runtime calibration times in a program of empty tasks.
class ChunkTap;  // model/sink_thread.hpp

struct IntervalSample {
  uint16_t before, after;  // trace::interval_key of the events that start and end it
  uint8_t solo;            // the thread's team had one thread
  uint64_t ticks;          // after preemption and the recorder's own cost were taken out
};

struct BuildOptions {
  // The caller's allocator puts big arrays in transparent huge pages (src/platform/platform.hpp).
  // The builder's vectors are populated ahead of it either way (platform/platform.hpp): in small
  // pages by a thread of their own (a fault per 4 KiB: 1-3 us on a VM); in huge pages only in
  // the spare time of the thread that decodes the events, just ahead of the builder, since a
  // thread of their own then took the second core from the decoder (a large report took a fifth
  // longer with it).
  bool huge_pages = false;
  // Time a program thread spent blocked (switched out while not runnable: sleeping, I/O, a
  // futex) inside a strand counts as its work, as wall time would; by default it is taken out,
  // like preemption, because a blocked thread does no work.
  bool blocked_as_work = false;
  // Keep the recorder's own per-event cost (trace::ProbeCost) in the work (tests).
  bool keep_probe_cost = false;
  // Keep the time of page faults far slower than their thread's typical one (SlowFaults records)
  // in the work; by default it is taken out, like preemption: the machine held the thread.
  bool keep_slow_faults = false;
  // Keep the OpenMP runtime's own cost between events (trace::RuntimeCostEntry) in the work; by
  // default it is taken out, so that the work is the program's and T1 - work the runtime's.
  bool keep_runtime_cost = false;
  // When set, every interval added to a strand is appended here (the runtime calibration), and
  // no runtime cost is taken out. TSC metric only.
  std::vector<IntervalSample>* interval_sink = nullptr;
  // Told now and then how many of the trace's events have been handled, of how many (the
  // reader's progress line, load/progress.hpp); done == total once they all have (the model's
  // DAG is then put in order).
  std::function<void(uint64_t done, uint64_t total)> progress;
  // For a reading that labels sites as it meets them (the streaming mode's: sites merge by
  // source line before the profile is made, report::SitesAsTheyCome): given a new site, its
  // index and the site of the construct around it, the index to use (its own, or that of an
  // earlier site it merges into). Unset: every site is its own (merged after the build).
  std::function<uint32_t(const Site& site, uint32_t index, uint32_t enclosing)> place_site;
  // The streaming mode, for such a reading: does a construct of `site` count for the construct
  // around it (a site in a library's code: report::attribute_library_sites's rule, which the DAG's
  // reading applies after the build), given whether that construct is the program's? Unset: no.
  std::function<bool(uint32_t site, bool outer_is_program)> folds_into_enclosing;
  // The streaming mode's fragments, told as they are numbered (fragment 0 is the empty pair, as
  // in memory), before the first strand of each reaches the sink, with that strand's site.
  std::function<void(const Fragment& fragment, uint32_t index, uint32_t site)> place_fragment;
  // The streaming mode: how many events a child not ended when its parent's taskwait ended is
  // waited for before it is settled as it stands (its end lost), so that a lost end cannot hold
  // back the rest of the run (builder_stream_state.hpp, LateChild).
  uint64_t late_end_events = uint64_t{1} << 20;
  // The streaming mode: told every chunk of the sink's calls once played (model/sink_thread.hpp),
  // so that they can be played again without reading the trace (load/sink_spool.hpp).
  ChunkTap* sink_tap = nullptr;
};

// Throws trace::TraceError for undecodable input and ModelError when the trace holds no
// OpenMP activity to model.
Model build_model(const trace::TraceFile& trace, const BuildOptions& options = {});

// The streaming mode: the same strands, with the same work and edges, handed to `sink` each once
// final (model/strand_sink.hpp), and never held together: memory follows what is live (the
// recursion's depth times the threads), not the run. Returns the model without its DAG (no
// strands, nodes or edges): its sites and what it says of the run. Throws ModelError, as
// build_model does, and for what it cannot read in one pass yet (detach clauses, oneTBB, ...: the
// message says which). The sink is called on a thread of its own (model/sink_thread.hpp), all its
// calls made when this returns: what it consults that BuildOptions' callbacks change (the sites
// placed so far) must be read under a lock.
Model build_streaming(const trace::TraceFile& trace, StrandSink& sink,
                      const BuildOptions& options = {});

// What the builders set Model::metric and Model::task_cost to (the tasking overhead per task
// that `record` measured, in the metric's unit; 0 when unknown), known from the trace's records
// before its events are read.
std::string metric_of(const trace::TraceFile& trace);
uint64_t task_cost_of(const trace::TraceFile& trace);

}  // namespace tasklens::model
