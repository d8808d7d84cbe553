// The run as a DAG of strands plus the construct hierarchy (TaskProf's DPST, OMP-WHIP's OSPG).
//
// Invariants every analysis may rely on (the builder guarantees them, tests check them):
//  * Strand ids are a topological order of the DAG: every predecessor of strand s has an id < s.
//    (They are numbered in the depth-first "serial elision" order of the construct tree, which is
//    a topological order for every OpenMP edge kind we model.)
//  * Nodes are in preorder: a node's parent has a smaller id, and its subtree is the id range
//    [id, id + subtree_size). A node's strands are the contiguous range [strand_begin, strand_end)
//    and that range contains the strands of its whole subtree.
//  * Node 0 is the program root (the initial task); it covers every strand.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "trace/losses.hpp"

namespace tasklens::model {

inline constexpr uint32_t kNone = 0xffffffffu;

// Model::host_steal_percent from which the report warns (a few percent is common on a virtual
// machine), and from which the recording's figures are not to be trusted (its diagnosis).
inline constexpr double kHostStealWorthSaying = 2.0;
inline constexpr double kHostStealDisturbing = 10.0;
// What to tell the user of a recording whose host took `percent` of its CPUs' time (the
// report's warning, `record`'s note); empty below kHostStealWorthSaying or when unknown (< 0).
std::string host_steal_warning(double percent);

enum class NodeKind : uint8_t {
  Program,       // root: the initial task outside any construct
  Parallel,      // a parallel region instance
  Phase,         // the part of a parallel region between two team barriers
  ImplicitTask,  // one thread's implicit task inside one phase
  Task,          // an explicit task (including taskloop's tasks)
  Taskgroup,     // a taskgroup scope (explicit, or taskloop's implicit one)
  Loop,          // one thread's share of one worksharing loop instance
  Chunk,         // one chunk of a worksharing loop (or one section)
  Single,        // a single construct executed by one thread
  Sections,      // one thread's share of a sections construct
  Taskloop,      // a taskloop construct (its tasks are children)
  Masked,        // masked / master block
};

// What kind of construct a source site is; this is what the report's "kind" column shows.
enum class SiteKind : uint8_t {
  Program,  // code outside every construct (the serial part of main)
  Parallel,
  Task,
  Taskloop,
  Loop,
  Sections,
  Single,
  Taskgroup,
  Masked,
  // oneTBB constructs (task_group::run tasks are Task).
  ParallelFor,
  ParallelReduce,
  ParallelInvoke,
  ParallelSort,
  TbbAlgorithm,  // another oneTBB algorithm (parallel_for_each, parallel_scan, pipeline ...)
  ArenaExecute,  // task_arena::execute
  Thread,        // a thread the program started itself (pthread_create, std::thread)
};

const char* to_string(NodeKind kind);
const char* to_string(SiteKind kind);

struct Site {
  uint64_t address = 0;  // runtime return address (codeptr_ra) of the construct; 0 if unknown
  SiteKind kind = SiteKind::Program;
  // Filled in by symbolization (report side); empty until then.
  std::string file;
  unsigned line = 0;
  std::string function;
  // The innermost site around the scope it was first met in (0: the program's): what names a
  // site no node keeps (the taskgroup a taskloop opens for itself), as one pass names it.
  uint32_t enclosing = 0;
};

struct Node {
  NodeKind kind = NodeKind::Program;
  uint32_t parent = kNone;
  uint32_t subtree_size = 1;  // number of nodes in the subtree, this node included
  uint32_t site = kNone;      // index into Model::sites; kNone for structural nodes
  // Nodes that together form one logical construct instance share an instance id (for example
  // the per-thread shares of one worksharing loop). kNone for structural nodes.
  uint32_t instance = kNone;
  uint32_t strand_begin = 0;
  uint32_t strand_end = 0;
};

struct Strand {
  uint64_t work = 0;        // in the trace's metric unit (TSC ticks by default)
  uint64_t start = 0;       // TSC timestamp when the strand started (0 for synthetic strands)
  uint64_t end = 0;         // TSC timestamp when it ended
  uint32_t thread = kNone;  // worker (trace thread index); kNone for synthetic join strands
  uint32_t node = 0;        // innermost construct node containing the strand
  uint32_t site = 0;        // site the strand's work is attributed to (innermost enclosing site)
  uint32_t fragment = 0;    // index into Model::fragments: the code the strand ran
};

// A strand the scheduling analyses can place in time: it ran on a worker and has a timestamp
// (synthetic join strands have neither).
inline bool is_timed(const Strand& s) { return s.thread != kNone && (s.start != 0 || s.end != 0); }

// A code fragment (as in OMP-WHIP): the code between two runtime events, named by the code
// addresses of the event that started the strand and of the one that ended it. A task's first
// strand starts at the task's creation site; an implicit task's at its parallel region; a chunk's
// at its loop. 0 means unknown (for example the end of a task, which has no code address).
struct Fragment {
  uint64_t begin = 0;
  uint64_t end = 0;
};

// Work of one strand spent inside one user region (TASKLENS_REGION_BEGIN/END; nested regions
// count for the outermost). Model::region_work is sorted by strand.
// Time a strand's thread spent blocked inside it (taken out of its work; BuildOptions).
struct StrandBlocked {
  uint32_t strand = 0;
  uint64_t ticks = 0;  // TSC ticks
};

// A strand that stands for several independent loop iterations observed only as a whole: a
// thread's share of a static loop, a dynamic or guided chunk, a taskloop task's chunk. The loop's
// logical parallelism is bounded by its iterations, not by the team it was recorded with, so on
// paths such a strand weighs one iteration's share of its work (analysis/algebra.hpp's
// iteration_span: its work spread evenly over the iterations, rounded up); its work is unchanged.
struct DivisibleStrand {
  uint32_t strand = 0;
  uint32_t iterations = 0;  // >= 2 (capped at 2^32 - 1)
};

struct RegionWork {
  uint32_t strand = 0;
  uint32_t region = 0;  // index into Model::region_names
  uint64_t work = 0;
};

// The source location of a synthetic code address (trace::kSyntheticSite): a call site the
// program reported itself (the oneTBB wrappers of include/tasklens/tbb.h).
struct SourceName {
  std::string file;
  unsigned line = 0;
  std::string function;
};

struct Model {
  std::vector<Site> sites;  // sites[0] is the program site (SiteKind::Program)
  std::vector<Node> nodes;
  std::vector<Strand> strands;
  // Predecessors of strand s: preds[pred_begin[s] .. pred_begin[s + 1]). Always < s.
  std::vector<uint32_t> pred_begin;  // size strands.size() + 1
  std::vector<uint32_t> preds;
  uint32_t instance_count = 0;      // instance ids are 0 .. instance_count-1
  std::vector<Fragment> fragments;  // fragments[0] is {0, 0}: unknown
  std::vector<std::string> region_names;
  std::vector<RegionWork> region_work;
  // The strands that lost blocked time (sleep, I/O, a futex), sorted by strand: few in most
  // programs, so kept apart rather than in every Strand.
  std::vector<StrandBlocked> blocked_work;
  std::unordered_map<uint64_t, SourceName> synthetic_sites;
  // The strands of loop iterations seen only together (DivisibleStrand), sorted by strand. Every
  // longest path and span weighs them by one iteration; few per loop, none without loops.
  std::vector<DivisibleStrand> divisible;
  // The order the builder met the strands in (their ids are the serial order): strand s was the
  // strand_order[s]-th it made. Where paths of equal length meet, the critical path takes the one
  // through the strand met first (analysis/algebra.hpp's longer_path): a one-pass reading meets
  // the strands in the same order, so both split a tied critical path between sites alike. Empty
  // in a model made some other way: the ids stand in.
  std::vector<uint32_t> strand_order;

  // Facts about the recording that reports must show.
  std::string metric = "tsc";  // perf's name of the metric (trace::Metric), or tsc
  // Further metrics recorded beside `metric` (`record --metric a,b,c`: `metric` is a, these are
  // b and c, named as perf names them), with every strand's value in each:
  // extra_work[m * strands.size() + s] is strand s's amount of extra_metrics[m]. Both empty when
  // one metric was recorded.
  std::vector<std::string> extra_metrics;
  std::vector<uint64_t> extra_work;
  double ticks_per_second = 0;  // for the time equivalent of a time-like metric; 0 if not
  double tsc_per_second = 0;    // the TSC's rate (clock syncs), whatever the metrics; 0 if unknown
  bool metric_is_time = true;
  bool complete = true;           // false when the trace was cut short
  bool loops_have_chunks = true;  // false when the runtime had no dispatch callback
  uint64_t task_count = 0;        // explicit tasks
  uint64_t preempted = 0;         // TSC ticks of preemption by other threads removed from work
  // The program's threads switched out by other threads anywhere between the first strand's
  // start and the last one's end (in strands, in the runtime, idle), summed over the threads, and
  // that interval times the threads: how much of the run the machine did not give the program.
  uint64_t preempted_in_run = 0;
  uint64_t threads_time = 0;
  uint64_t blocked = 0;               // TSC ticks of blocking (sleep, I/O, futex) removed from work
  bool blocked_removed = true;        // false: blocked time was kept as work (BuildOptions)
  uint64_t slow_faults = 0;           // TSC ticks of slow page faults removed from work
  uint64_t recorder_stalls = 0;       // times a thread waited inside the recorder (whole run)
  uint64_t recorder_stalled = 0;      // TSC ticks of those waits removed from work
  uint64_t recorder_stall_ticks = 0;  // TSC ticks of all those waits, in strands or not
  uint64_t switches_lost = 0;         // context switches the recorder could not see (not removed)
  // The share of the program's CPUs' time the hypervisor took away during the recording ("steal":
  // a virtual machine's host running something else), 0-100; -1 when the trace does not say.
  double host_steal_percent = -1;
  uint64_t probe_per_event = 0;        // TSC ticks of the recorder's cost per event (calibrated)
  uint64_t probe_removed = 0;          // TSC ticks of that cost taken out of the strands, in all
  bool probe_measured_in_run = false;  // probe_per_event was timed during the run (else start-up)
  // The OpenMP runtime's own cost between events (measured by `tasklens record` on empty tasks)
  // taken out of the strands, in TSC ticks; `runtime_cost_kinds` kinds of interval were measured
  // (0: the trace has no such measure, or it was kept in the work).
  uint64_t runtime_removed = 0;
  // TSC ticks inside strands' spans (start to end) their threads spent waiting in the runtime (for
  // a lock, in the runtime's start-up): not work, and not taken out of it either, since it never
  // was in it. With the work and everything taken out, it makes up the strands' spans.
  uint64_t runtime_waited = 0;
  uint32_t runtime_cost_kinds = 0;
  double runtime_cost_scale = 1;  // the calibration's speed scale (0.5 to 1) at the end
  // What one task costs the program as a whole on one thread (creating, scheduling, running and
  // joining it, over a plain call), in the metric's ticks, measured by `tasklens record` without
  // the recorder (trace::TaskCost); 0: the trace has no such measure (an older trace, a metric
  // that is not time, or record could not measure it).
  uint64_t task_cost = 0;
  uint32_t task_cost_tasks = 0;  // tasks per round of that measure
  uint32_t thread_count = 0;
  std::vector<std::string> warnings;  // for the report (one line each)
  // What the recording lost and why (a full disk, the recorder out of memory, an exec): each
  // also has its line in `warnings`.
  std::vector<trace::Loss> losses;
  // A model read in one pass (model::build_streaming) holds no DAG: no strands, nodes or edges.
  // What the reports would take from them is here instead.
  struct OnePass {
    bool read = false;     // the model was read in one pass
    uint64_t strands = 0;  // the strands handed over (strands.size() of the model in memory)
    std::vector<uint64_t> blocked_by_site;      // blocked_work summed per site (Strand::site)
    std::vector<uint8_t> threads_with_strands;  // per trace thread: it ran a handed-over strand
    // The earliest strand start and the latest strand end that are not 0 (0: none).
    uint64_t first_start = 0, last_end = 0;
    bool tbb_chunks = false;  // a oneTBB task had chunks (the wrappers of include/tasklens/tbb.h)
  } one_pass;

  auto preds_of(uint32_t s) const {
    struct Range {
      const uint32_t* b;
      const uint32_t* e;
      const uint32_t* begin() const { return b; }
      const uint32_t* end() const { return e; }
    };
    return Range{preds.data() + pred_begin[s], preds.data() + pred_begin[s + 1]};
  }
};

}  // namespace tasklens::model
