// The builder's state per strand, node, task and loop in its streaming mode (build_streaming:
// builder_stream.cpp; the scheme is described in builder_state.hpp, "The streaming mode"), and
// the loop pieces both modes tell apart. Internal to src/model.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "model/model.hpp"
#include "model/strand_sink.hpp"

namespace tasklens::model::detail {

enum class Piece : uint8_t {
  FirstChunk,    // a thread's first dispatched chunk of a loop
  Chunk,         // a later one
  Share,         // a thread's whole share of a loop that had no dispatch event (a one-thread
                 // team, or a runtime without the callback): its iterations are the trip
                 // count shared among the threads that ran the loop
  TaskloopTask,  // a taskloop task whose dispatch event gave its iterations
  Taskloop,      // a taskloop (node) and its trip count, for tasks without a dispatch event
};

struct StreamStrand {
  StrandSink::Strand out = 0;  // its handle once handed over
  uint32_t refs = 0;
  enum State : uint8_t { Open, Sealed, Handed, Free } state = Open;
  bool join = false;    // a join of out_ (handed at once, never a strand of the DAG)
  uint32_t undone = 0;  // a join of a task's children: those that have not ended
  // A join: the strands to fold into it that are not handed over yet (folds_). A strand after
  // it waits for them, or a strand held back (a loop's deferred first chunk) would be missed.
  uint32_t folds_pending = 0;
  uint64_t blocked = 0;  // ticks its thread was blocked in it (Model::blocked_work)
  // Held back until it is known whether it stands alone for its loop piece's iterations
  // (StreamNode::piece); then the iterations it stands for (1: none seen together).
  bool deferred = false;
  uint64_t iterations = 1;
  uint64_t order = 0;  // the strands made before it (Model::strand_order)
  // Tasks (StrandSink::task, when the sink wants them): its end if timed, else the latest
  // eff_end of its predecessors (analysis::task_samples' "effective end"); the first strand
  // of its task or loop chunk.
  uint64_t eff_end = 0;
  bool first_of_task = false;
  bool task_start = false;  // a Task node's first strand (StrandSink::task_start)
  uint32_t pred_count = 0;
  uint32_t preds[3] = {};
  std::vector<uint32_t> more_preds;  // (keeps its capacity when the slot is reused)
  // Its work inside user regions (region, work), as region_work_ has it in memory; only when
  // the sink wants_regions() (keeps its capacity too).
  std::vector<std::pair<uint32_t, uint64_t>> regions;
};

struct StreamNode {
  uint32_t pending = 0;        // itself while open, its live strands and child nodes
  uint32_t chain = kNone;      // its instances (stream_chain), once a strand needed them
  uint32_t site = 0;           // the innermost site around it (Strand::site), with the chain
  uint64_t code = 0;           // its own site's address (Builder::keep_site_code; 0: its site's)
  uint32_t join_node = kNone;  // its innermost enclosing taskgroup or phase
  uint32_t join = kNone;       // taskgroup, phase: the join of the tasks that end in it
  // Its Node::instance as the DAG's reading has it (a library's construct folded into the one
  // around it is in that one's instance), told to a sink that wants_nodes().
  uint32_t model_instance = kNone;
  StrandSink::Instance instance = 0;
  bool has_instance = false, closed = false, live = false;
  bool shared_instance = false;  // a loop's or sections' share: the instance is StreamLoop's
  // oneTBB: a task splitting its parent's range, in its parent's instance (its chain's); a
  // task of an algorithm call whose instance is StreamTbbCall's.
  bool inherits_instance = false, tbb_call = false;
  // A loop piece (a chunk, a thread's share: chunk_iterations_): its one strand stands for its
  // iterations if it has one strand and no child node, as find_divisible decides. Known: at
  // once; AtLoopEnd: once every thread's share of the loop has ended (a thread's first chunk
  // of a partly seen static loop, a share without dispatch events).
  enum PieceState : uint8_t { NoPiece, Known, AtLoopEnd } piece = NoPiece;
  Piece piece_kind = Piece::Chunk;
  uint64_t iterations = 0, first_iteration = 0;
  // A task of a taskloop (its node is a child of the Taskloop node `taskloop`): its piece waits
  // for the taskloop's share (StreamTaskloop) unless a dispatch event gave its iterations.
  uint32_t taskloop = kNone;
  uint32_t taskloop_index = 0;  // its place in the taskloop's `waiting` while it waits
  bool dispatched = false;
  uint32_t strands_made = 0, children_made = 0;
  uint32_t deferred = kNone;  // its first strand, held back until that is decided
  // Tasks (StrandSink::task): the innermost Task node or loop chunk around it, itself
  // included (kNone: none), and, on such a node, what its own strands add up to so far.
  uint32_t owner = kNone;
  // StrandSink::task_key: the serial number of the innermost Task, ImplicitTask or Chunk node
  // around it, itself included, else of the outermost node (analysis/predict.cpp's tasks_of).
  // (Not the slot: a slot is reused while a dependence still names the task that had it.)
  uint64_t sim_task = ~uint64_t{0};
  uint64_t key = StrandSink::kNoNode;  // StrandSink::node's, once told (stream_chain)
  bool ran = false;                    // it has a strand of its own
  uint64_t task_size = 0, wait = StrandSink::kNoTime, idle = StrandSink::kNoTime;
  // Its idle time waits for strands of its thread open when it began (IdleWait): the index of
  // its entry in idle_waits_ (kNone: it does not).
  uint32_t idle_wait = kNone;
};

// A worksharing loop's or sections' instance, shared by its team's shares (one node each).
struct StreamLoop {
  StrandSink::Instance instance = 0;
  bool opened = false, outermost = true;
  uint32_t team = 1;              // the shares to come
  uint32_t ended = 0;             // shares whose thread ended the loop (WorkEnd)
  uint32_t live = 0;              // shares not retired
  std::vector<uint32_t> waiting;  // nodes whose pieces wait for the loop's end
};

// A taskloop whose tasks may have no dispatch event (one-thread teams and gcc's GOMP_taskloop
// have none): its trip
// count is shared evenly among its tasks that stand alone (find_divisible's rule), known once
// the taskloop has ended and so has each of its tasks. Until then the undispatched tasks'
// nodes wait (held), and their strands with them: the memory of one taskloop's tasks, at most
// kMaxTaskloopHeld of them ended (more is refused in one line rather than the memory
// exhausted). A task whose dispatch event came goes on at once.
struct StreamTaskloop {
  uint64_t trip = 0;
  uint32_t open = 0;              // its tasks not ended
  uint32_t alone = 0;             // its ended tasks of one strand and no construct inside
  uint32_t held = 0;              // its tasks ended without a dispatch event
  bool ended = false;             // the Taskloop node closed: no more tasks of its own
  std::vector<uint32_t> waiting;  // its undispatched tasks' nodes (held until then)
};

struct StreamChain {  // per site around a node, the outermost instance: outermost first
  std::vector<uint32_t> sites;
  std::vector<StrandSink::Instance> instances;
  uint32_t refs = 0;
};

struct StreamTask {
  uint64_t id = 0;
  uint32_t children = 0;         // children not retired (they name it as their parent)
  uint32_t join = kNone;         // the join of its children's ends since its last taskwait
  uint32_t parent_join = kNone;  // its parent's join it goes to when it ends
  uint32_t loop_join = kNone;    // its chunks in the current loop (TaskExtra::loop_members)
  // Its siblings' dependences (TaskExtra::deps) and the tasks that wait for it and have not
  // begun name it: its end is needed until they let go (dep_hold, dep_drop).
  uint32_t dep_refs = 0;
  bool ended = false;
  bool node_closed = false;
  bool region_ended = false;  // implicit tasks: their region ended
  bool live = false;
  // A thread of the program's own: pthread_join joined it; the id of its OpenMP initial task,
  // which names the thread's task too (on_implicit_begin), forgotten with it.
  bool thread_joined = false;
  uint64_t initial_id = 0;
};

// The streaming mode's table of task ids: per thread, pages of kIdPage counters, each freed
// once every task named in it has retired and the thread's ids have gone past it (the
// recorder numbers each thread's ids in order), so that it follows the live tasks too.
static constexpr uint32_t kIdPage = 4096;

struct IdPage {
  uint32_t task[kIdPage];
  uint32_t live = 0;  // tasks named in it not retired
};

struct IdPages {
  std::vector<std::unique_ptr<IdPage>> pages;
  uint64_t top = 0;  // the highest page met
};

// The page each thread's ids last met (by thread, modulo kIdCaches): a task's events name
// the ids of a few threads, page after page, and walking the table for each was a large
// part of the builder's work (docs/benchmarks.md, "The readers' instructions per task").
// An entry goes when its page is freed.
struct IdCache {
  uint64_t key = ~uint64_t{0};  // the id / kIdPage (the thread's and the page's number)
  IdPage* page = nullptr;
};

// Children not ended when their parent's taskwait ended. Events of two threads are merged by
// time, and a child's end may come a few ticks after the wait's end (two cores' clocks, the
// runtime's order of callbacks): the child ends where its end comes, as in memory, and the
// strand after the wait waits for it (complete(): its join's `undone`). One whose thread goes
// on to another task lost its end: it is closed then, as finalize would (builder_unended.cpp);
// one still running when the trace ends is closed there; one suspended or never begun joins
// the wait with what it did. One still waited for after BuildOptions::late_end_events events is
// settled as it stands, so that a lost end cannot hold back the rest of the run (a trace that
// lost events only).
struct LateChild {
  uint32_t task;
  uint64_t id;         // the task's id: its slot may be another task's once it has retired
  uint64_t events_at;  // stream_events_ when its parent's wait ended
};

// A task whose first strand began while other strands of its thread were open (a taskloop's
// encountering strand while its thread runs the taskloop's tasks): task_samples counts their
// ends, known only once they close. The tasks that began with the same strands open share a
// group, which holds the latest end of those closed so far; each task's idle time is final
// when the last of them closes, and its Task record waits for it if the task was done first.
struct IdleWait {
  uint64_t start = 0, busy = 0;  // its first strand's start; its thread's busy_until then
  uint32_t node = kNone;         // its node while not done
  bool done = false;             // its node is done: `task` waits for the idle time
  StrandSink::Task task;
};

struct IdleGroup {
  std::vector<uint64_t> open;   // the strands open when its tasks began (their order)
  uint32_t remaining = 0;       // of those, not closed yet
  uint64_t latest_end = 0;      // of those closed
  bool timed = false;           // one of those closed has times
  std::vector<uint32_t> waits;  // idle_waits_ indices
};

struct StreamTbbCall {
  StrandSink::Instance instance = 0;
  bool opened = false;
  uint32_t live = 1;  // the call's own hold
};

}  // namespace tasklens::model::detail
